import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseSettings, settingsOf, SettingsError } from '../../src/config/settings';
import worker from '../../src/index';
import { postForm } from './threeds-helpers';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('settings, parsed once from the environment', () => {
  it('parses the local environment into typed settings, once per env object', () => {
    const settings = settingsOf(env);
    expect(settings.environment).toBe('test');
    expect(settings.jwtKey.byteLength).toBeGreaterThanOrEqual(32);
    expect(settings.tokenEncryption.keys.get(settings.tokenEncryption.current)?.byteLength).toBe(32);
    expect(settings.passwordHashes.has('test-merchant')).toBe(true);
    expect(settingsOf(env)).toBe(settings);
  });

  it('lists every problem at once', () => {
    const result = parseSettings({
      ...env,
      ENVIRONMENT: 'prod',
      JWT_SIGNING_KEY: 'short',
      TOKEN_HMAC_KEY: '',
      PUBLIC_BASE_URL: 'ftp://x',
    });
    expect(result).toBeInstanceOf(SettingsError);
    expect((result as SettingsError).problems).toEqual([
      'ENVIRONMENT must be "test" or "live", not "prod"',
      'PUBLIC_BASE_URL must be an absolute http(s) URL',
      'JWT_SIGNING_KEY is shorter than 32 bytes',
      'TOKEN_HMAC_KEY is not set',
    ]);
  });

  it('needs the 3DS Server provider in live only, and checks it', () => {
    expect(parseSettings({ ...env, ENVIRONMENT: 'test', THREEDS_SERVER_URL: undefined })).not.toBeInstanceOf(
      SettingsError,
    );
    const missing = parseSettings({
      ...env,
      ENVIRONMENT: 'live',
      THREEDS_SERVER_URL: undefined,
      THREEDS_SERVER_API_KEY: '',
    });
    expect((missing as SettingsError).problems).toEqual([
      'THREEDS_SERVER_URL is not set',
      'THREEDS_SERVER_API_KEY is not set',
    ]);
    const wrong = parseSettings({
      ...env,
      ENVIRONMENT: 'live',
      THREEDS_SERVER_URL: 'ftp://provider',
      THREEDS_SERVER_TIMEOUT_MS: '500',
    });
    expect((wrong as SettingsError).problems).toEqual([
      'THREEDS_SERVER_URL must be an absolute http(s) URL',
      'THREEDS_SERVER_TIMEOUT_MS must be an integer from 1000 to 30000',
    ]);
    const live = parseSettings({ ...env, ENVIRONMENT: 'live', THREEDS_SERVER_URL: 'https://provider.example/' });
    expect(live).toMatchObject({
      threeDsServer: {
        baseUrl: 'https://provider.example',
        apiKey: env.THREEDS_SERVER_API_KEY,
        authenticateTimeoutMs: 15_000,
      },
    });
  });

  it.each([
    ['not JSON', '{', 'MERCHANT_PASSWORD_HASHES is not JSON'],
    ['an array', '[]', 'MERCHANT_PASSWORD_HASHES is not an object'],
    ['three hashes', JSON.stringify({ a: ['x', 'y', 'z'] }), 'MERCHANT_PASSWORD_HASHES has a malformed entry for a'],
    ['not a hash', '{"a":"plain-password"}', 'MERCHANT_PASSWORD_HASHES has a malformed entry for a'],
  ])('refuses MERCHANT_PASSWORD_HASHES that is %s, naming the problem', (_, value, problem) => {
    const result = parseSettings({ ...env, MERCHANT_PASSWORD_HASHES: value });
    expect(result).toBeInstanceOf(SettingsError);
    expect((result as SettingsError).problems.join('; ')).toContain(problem);
  });

  it('takes PUBLIC_BASE_URL without its trailing slash', () => {
    const settings = parseSettings({ ...env, PUBLIC_BASE_URL: 'https://pay.example.com/' });
    expect(settings).not.toBeInstanceOf(SettingsError);
    expect((settings as { publicBaseUrl?: string }).publicBaseUrl).toBe('https://pay.example.com');
  });

  it('answers a JSON API on a misconfigured Worker with 503, and logs why', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const request = new Request<unknown, IncomingRequestCfProperties>('https://edge.test/api/cardBin/panLookup', {
      method: 'POST',
    });
    const response = await worker.fetch(request, { ...env, ENVIRONMENT: 'staging' }, createExecutionContext());
    expect(response.status).toBe(503);
    expect(response.headers.get('Retry-After')).toBe('60');
    expect(lines.join('\n')).toContain('ENVIRONMENT must be');
  });

  it('answers a browser page on a misconfigured Worker with an HTML 503 and Retry-After', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const response = await postForm('/3ds/ddc', { JWT: 'x' }, (r) =>
      worker.fetch(r, { ...env, JWT_SIGNING_KEY: '' }, createExecutionContext()),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('Retry-After')).toBe('60');
  });
});
