import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { utf8 } from '../../src/bytes';
import { decodeEntry, importCredentialKey, issuedEntry, newPassword } from '../../src/credentials/credentials';
import { hashPassword } from '../../src/credentials/password-hash';
import { API_ROUTES } from '../../src/app/api-routes';
import { createWorker } from '../../src/app/create-worker';
import { embeddedServices } from '../../src/app/embedded-services';
import worker from '../../src/index';
import { basic, CARD_BIN_HEADERS } from './helpers';

type Json = Record<string, any>;

const PAN = '4444333322221111';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The Worker with MERCHANT_PASSWORD_HASHES replaced: `entries` by username. */
function withCredentials(entries: Record<string, string | string[]>): Env {
  return { ...env, MERCHANT_PASSWORD_HASHES: JSON.stringify(entries) };
}

let addresses = 0;
/** A client address no other test used (the limiters keep their counts across tests). */
function newAddress(): string {
  addresses += 1;
  return `2001:db8:c:${Date.now().toString(16).slice(-4)}::${addresses.toString(16)}`;
}

function lookup(environment: Env, authorization: string, address: string, entity = 'default'): Promise<Response> {
  const request = new Request<unknown, IncomingRequestCfProperties>('https://edge.test/api/cardBin/panLookup', {
    method: 'POST',
    headers: { ...CARD_BIN_HEADERS, Authorization: authorization, 'CF-Connecting-IP': address },
    body: JSON.stringify({ merchant: { entity }, cardNumber: PAN }),
  });
  return worker.fetch(request, environment, createExecutionContext());
}

async function entryFor(username: string, password: string): Promise<string> {
  return issuedEntry(await importCredentialKey(utf8(env.MERCHANT_CREDENTIAL_KEY)), username, password);
}

describe('issued credentials', () => {
  it('issues passwords of 192 random bits and stores them as one keyed hash', async () => {
    const passwords = new Set(Array.from({ length: 50 }, newPassword));
    expect(passwords.size).toBe(50);
    for (const p of passwords) expect(p).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const password = [...passwords][0]!;
    const entry = await entryFor('test-merchant', password);
    expect(entry).toMatch(/^hmac-sha256:[A-Za-z0-9+/]{43}=$/);
    expect(entry).not.toContain(password);
    expect(decodeEntry(entry)).toMatchObject({ kind: 'hmac' });
    const environment = withCredentials({ 'test-merchant': entry });
    expect((await lookup(environment, basic('test-merchant', password), newAddress())).status).toBe(200);
    expect((await lookup(environment, basic('test-merchant', `${password}x`), newAddress())).status).toBe(401);
  });

  it('binds an entry to its username: the same password under another name does not pass', async () => {
    const password = newPassword();
    const environment = withCredentials({ 'other-merchant': await entryFor('test-merchant', password) });
    expect((await lookup(environment, basic('other-merchant', password), newAddress())).status).toBe(401);
  });

  it('accepts two secrets at once while a merchant switches, and only the new one after', async () => {
    const [old, fresh] = [newPassword(), newPassword()];
    const both = withCredentials({
      'test-merchant': [await entryFor('test-merchant', old), await entryFor('test-merchant', fresh)],
    });
    expect((await lookup(both, basic('test-merchant', old), newAddress())).status).toBe(200);
    expect((await lookup(both, basic('test-merchant', fresh), newAddress())).status).toBe(200);
    const after = withCredentials({ 'test-merchant': await entryFor('test-merchant', fresh) });
    expect((await lookup(after, basic('test-merchant', old), newAddress())).status).toBe(401);
    expect((await lookup(after, basic('test-merchant', fresh), newAddress())).status).toBe(200);
  });

  it('refuses more than two entries for a merchant as a misconfiguration', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const e = await entryFor('test-merchant', newPassword());
    expect(
      (await lookup(withCredentials({ 'test-merchant': [e, e, e] }), basic('test-merchant', 'x'), newAddress())).status,
    ).toBe(503);
  });

  it('compares in constant time', async () => {
    const password = newPassword();
    const environment = withCredentials({ 'test-merchant': await entryFor('test-merchant', password) });
    const compare = vi.spyOn(crypto.subtle, 'timingSafeEqual');
    expect((await lookup(environment, basic('test-merchant', password), newAddress())).status).toBe(200);
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('still verifies a PBKDF2 entry (the slow path for a password a person chose)', async () => {
    const environment = withCredentials({ 'test-merchant': await hashPassword('correct horse battery staple') });
    expect(
      (await lookup(environment, basic('test-merchant', 'correct horse battery staple'), newAddress())).status,
    ).toBe(200);
    expect((await lookup(environment, basic('test-merchant', 'Tr0ub4dor&3'), newAddress())).status).toBe(401);
  });

  it('checks 20 identical cold logins arriving at once once: one slow hash, one count against the address', async () => {
    const password = 'correct horse battery staple';
    const limit = vi.fn(() => Promise.resolve({ success: true }));
    const environment: Env = {
      ...withCredentials({ 'test-merchant': await hashPassword(password) }),
      LOGIN_ATTEMPTS_BY_ADDRESS: { limit },
    };
    const slow = vi.spyOn(crypto.subtle, 'deriveBits');
    const address = newAddress();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => lookup(environment, basic('test-merchant', password), address)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(slow).toHaveBeenCalledTimes(1);
    expect(limit).toHaveBeenCalledTimes(1);
  });

  it('shares one cache entry between spellings of the same header', async () => {
    const password = newPassword();
    const environment = withCredentials({ 'test-merchant': await entryFor('test-merchant', password) });
    const encoded = btoa(`test-merchant:${password}`);
    expect((await lookup(environment, `Basic ${encoded}`, newAddress())).status).toBe(200);
    const sign = vi.spyOn(crypto.subtle, 'sign');
    for (const spelling of [`basic ${encoded}`, `BASIC   ${encoded}`, `Basic ${encoded}  `]) {
      expect((await lookup(environment, spelling, newAddress())).status).toBe(200);
    }
    expect(sign).not.toHaveBeenCalled();
  });
});

describe('failed logins are limited', () => {
  it('answers 429 tooManyRequests with Retry-After to an address past its limit, and never runs the slow hash for it', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const environment = withCredentials({ 'test-merchant': await hashPassword('correct horse battery staple') });
    const address = newAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await lookup(env, basic('nobody', `guess-${i}`), address)).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
    const slow = vi.spyOn(crypto.subtle, 'deriveBits');
    const limited = await lookup(environment, basic('test-merchant', 'one more guess'), address);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('Retry-After')).toBe('60');
    expect(await limited.json<Json>()).toMatchObject({ errorName: 'tooManyRequests', message: expect.any(String) });
    expect(slow).not.toHaveBeenCalled();
  });

  it("lets the right issued password through from an address that others' failures put past its limit, on a cold isolate", async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const address = newAddress();
    // Someone behind the same address (a NAT, a platform's egress) fails 25 times.
    const failures: number[] = [];
    for (let i = 0; i < 25; i++)
      failures.push((await lookup(env, basic('test-merchant', `wrong-${i}`), address)).status);
    expect(failures).toContain(429);
    // A cold isolate: a Worker that has never seen this login, from the same address.
    const cold = createWorker(API_ROUTES, embeddedServices({ live: false }));
    const request = new Request('https://edge.test/api/cardBin/panLookup', {
      method: 'POST',
      headers: {
        ...CARD_BIN_HEADERS,
        Authorization: basic('test-merchant', 'test-password'),
        'CF-Connecting-IP': address,
      },
      body: JSON.stringify({ merchant: { entity: 'default' }, cardNumber: PAN }),
    });
    expect((await cold.fetch(request, env, createExecutionContext())).status).toBe(200);
    // ... while a wrong password from it is still refused as over the limit.
    expect((await lookup(env, basic('test-merchant', 'wrong-again'), address)).status).toBe(429);
  });

  it("never locks a merchant out of its own address by someone else's failures on another", async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const password = newPassword();
    const environment = withCredentials({ 'other-merchant': await entryFor('other-merchant', password) });
    // Failures for the username from many addresses, past the username's limit.
    const failures = await Promise.all(
      Array.from(
        { length: 25 },
        async (_, i) => (await lookup(environment, basic('other-merchant', `wrong-${i}`), newAddress())).status,
      ),
    );
    expect(failures).toContain(429);
    expect(failures.every((s) => s === 401 || s === 429)).toBe(true);
    // The merchant's right password, cold, from its own address.
    expect((await lookup(environment, basic('other-merchant', password), newAddress(), 'other')).status).toBe(200);
  });
});
