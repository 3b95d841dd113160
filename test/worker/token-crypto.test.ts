import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { parseSettings, SettingsError } from '../../src/config/settings';
import { cardFingerprint, open, seal, tokenKeys } from '../../src/cards/card-crypto';
import { tokenBody, TOKENS_HEADERS } from './token-helpers';

const key = (byte: number): string => btoa(String.fromCharCode(...new Uint8Array(32).fill(byte)));
const HMAC = 'h'.repeat(32);

/** The token keys of the local settings with TOKEN_ENCRYPTION_KEYS and TOKEN_HMAC_KEY replaced. */
function keysOf(encryptionKeys: string, hmacKey: string) {
  const settings = parseSettings({ ...env, TOKEN_ENCRYPTION_KEYS: encryptionKeys, TOKEN_HMAC_KEY: hmacKey });
  if (settings instanceof SettingsError) throw settings;
  return tokenKeys(settings);
}

describe('token encryption', () => {
  it('opens what it sealed, only with the same record binding', async () => {
    const keys = await keysOf(JSON.stringify({ current: 'a', keys: { a: key(1) } }), HMAC);
    const sealed = await seal(keys, '4444333322221111', 'merchant\u0000token-1');
    expect(sealed.kid).toBe('a');
    expect(JSON.stringify(sealed)).not.toContain('4444333322221111');
    expect(await open(keys, sealed, 'merchant\u0000token-1')).toBe('4444333322221111');
    await expect(open(keys, sealed, 'merchant\u0000token-2')).rejects.toThrow();
  });

  it('keeps opening values sealed with an older key after rotation', async () => {
    const before = await keysOf(JSON.stringify({ current: 'a', keys: { a: key(1) } }), HMAC);
    const sealed = await seal(before, 'secret', 'aad');
    const after = await keysOf(JSON.stringify({ current: 'b', keys: { a: key(1), b: key(2) } }), HMAC);
    expect(await open(after, sealed, 'aad')).toBe('secret');
    expect((await seal(after, 'new', 'aad')).kid).toBe('b');
    const dropped = await keysOf(JSON.stringify({ current: 'b', keys: { b: key(2) } }), HMAC);
    await expect(open(dropped, sealed, 'aad')).rejects.toThrow(/no longer configured/);
  });

  it('fingerprints a card number per merchant, never in clear', async () => {
    const keys = await keysOf(JSON.stringify({ current: 'a', keys: { a: key(1) } }), HMAC);
    const one = await cardFingerprint(keys, 'm1', '4444333322221111');
    expect(one).toBe(await cardFingerprint(keys, 'm1', '4444333322221111'));
    expect(one).not.toBe(await cardFingerprint(keys, 'm2', '4444333322221111'));
    expect(one).not.toBe(await cardFingerprint(keys, 'm1', '4444333322221112'));
    expect(one).not.toContain('4444');
  });

  it.each([
    ['not JSON', 'nope'],
    ['no current key', JSON.stringify({ keys: { a: key(1) } })],
    ['a short key', JSON.stringify({ current: 'a', keys: { a: btoa('short') } })],
  ])('refuses TOKEN_ENCRYPTION_KEYS that is %s, and the API answers 503', async (_name, value) => {
    expect(() => keysOf(value, HMAC)).toThrow(SettingsError);
    const request = new Request<unknown, IncomingRequestCfProperties>('https://edge.test/tokens', {
      method: 'POST',
      headers: TOKENS_HEADERS,
      body: JSON.stringify(tokenBody()),
    });
    const response = await worker.fetch(request, { ...env, TOKEN_ENCRYPTION_KEYS: value }, createExecutionContext());
    expect(response.status).toBe(503);
    expect((await response.json<{ errorName: string }>()).errorName).toBe('serviceUnavailable');
  });
});
