import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../../src/index';
import { CARD_BIN_HEADERS, luhnComplete } from './helpers';

const PAN = '4444333322221111';

function lookup(environment: Env, cardNumber = PAN): Promise<Response> {
  const request = new Request<unknown, IncomingRequestCfProperties>('https://edge.test/api/cardBin/panLookup', {
    method: 'POST',
    headers: CARD_BIN_HEADERS,
    body: JSON.stringify({ merchant: { entity: 'default' }, cardNumber }),
  });
  return worker.fetch(request, environment, createExecutionContext());
}

function captureLogs(): string[] {
  const lines: string[] = [];
  const keep = (...args: unknown[]): void => {
    lines.push(args.map(String).join(' '));
  };
  vi.spyOn(console, 'log').mockImplementation(keep);
  vi.spyOn(console, 'error').mockImplementation(keep);
  vi.spyOn(console, 'warn').mockImplementation(keep);
  return lines;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('request pipeline', () => {
  it('answers 503 serviceUnavailable, and logs why, when the password hash secret is missing', async () => {
    const logs = captureLogs();
    const response = await lookup({ ...env, MERCHANT_PASSWORD_HASHES: undefined as unknown as string });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ errorName: 'serviceUnavailable' });
    expect(response.headers.get('Retry-After')).not.toBeNull();
    expect(logs.join('\n')).toContain('MERCHANT_PASSWORD_HASHES is not set');
  });

  it.each([
    ['another scheme', '{"test-merchant":"md5:abc"}'],
    [
      'a cheaper hash (a timing oracle on usernames)',
      '{"test-merchant":"pbkdf2-sha256:1000:AAAAAAAAAAAAAAAAAAAAAA==:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}',
    ],
    ['not JSON', 'test-merchant=abc'],
  ])('answers 503 when the password hash secret has %s', async (_name, secret) => {
    const logs = captureLogs();
    const response = await lookup({ ...env, MERCHANT_PASSWORD_HASHES: secret });
    expect(response.status).toBe(503);
    expect(logs.join('\n')).toContain('MERCHANT_PASSWORD_HASHES');
  });

  it('answers 500 internalErrorOccurred without detail on an unexpected exception, and redacts the log', async () => {
    const logs = captureLogs();
    const broken = {
      ...env,
      get PUBLIC_BASE_URL(): string {
        throw new Error(`boom while handling ${PAN}`);
      },
    };
    const response = await lookup(broken);
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(JSON.parse(text)).toMatchObject({ errorName: 'internalErrorOccurred' });
    expect(text).not.toContain('boom');
    const log = logs.join('\n');
    expect(log).toContain('boom while handling 444433******1111');
    expect(log).not.toContain(PAN);
  });

  it.each([
    ['an unknown path', '/api/cardBin/4571368400000008'],
    ['a token id', '/tokens/4571368400000008'],
  ])('masks a card number that a caller put into %s before logging the path', async (_name, path) => {
    const logs = captureLogs();
    await worker.fetch(
      new Request<unknown, IncomingRequestCfProperties>(`https://edge.test${path}`, {
        headers: {
          Authorization: CARD_BIN_HEADERS.Authorization!,
          Accept: 'application/vnd.worldpay.tokens-v1.hal+json',
        },
      }),
      env,
      createExecutionContext(),
    );
    expect(logs).toHaveLength(1);
    expect(logs[0]).not.toContain('4571368400000008');
    expect(logs[0]).toContain('457136******0008');
  });

  it('writes one JSON log line per request with a masked card number and no credentials', async () => {
    const logs = captureLogs();
    const cardNumber = luhnComplete('45717360', 16);
    const response = await lookup(env, cardNumber);
    expect(response.status).toBe(200);
    expect(logs).toHaveLength(1);
    const line = JSON.parse(logs[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      path: '/api/cardBin/panLookup',
      status: 200,
      merchant: 'test-merchant',
      entity: 'default',
      api: 'cardBin',
      card: `${cardNumber.slice(0, 6)}******${cardNumber.slice(-4)}`,
      correlationId: response.headers.get('WP-CorrelationId'),
    });
    expect(logs[0]).not.toContain(cardNumber);
    expect(logs[0]).not.toContain('test-password');
    expect(logs[0]).not.toContain(CARD_BIN_HEADERS.Authorization!.slice(6));
  });
});
