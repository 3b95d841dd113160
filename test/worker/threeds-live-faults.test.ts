import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callDeadlineMs } from '../../src/storage/object-client';
import { LIVE_AUTH_LEASE_MS, LIVE_SENDING_LEASE_MS } from '../../src/threeds/live/live-state';
import type { Fault } from './faulty-env';
import {
  card,
  collectInBrowser,
  creqOf,
  endChallenge,
  fake,
  fakeTransaction,
  liveBody,
  deadlinesFor,
  liveHarness,
  liveJson,
  livePage,
  liveStep,
  verifyBodyOf,
  type Json,
} from './live-helpers';

/**
 * Live 3-D Secure when any one storage or provider call fails, hangs or answers late
 * (docs/threeds.md "Live": "When something fails"): every request ends in an answer or a 503 with
 * Retry-After, never a 500 for a fault that is not ours; retries complete; no fault ever makes
 * the service send a second AReq for the transaction; a decided answer never changes.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

type Harness = ReturnType<typeof liveHarness>;

const authCalls = (h: Harness): number => h.count((c) => c.store === 'provider' && c.op === 'auth');

/** Calls authenticate until it answers 200 (at most `tries`), checking every 503 on the way. */
async function untilAnswered(h: Harness, body: Json, tries = 3): Promise<{ answer: Json; statuses: number[] }> {
  const statuses: number[] = [];
  for (let i = 0; i < tries; i++) {
    const response = await liveStep(h, 'authenticate', body);
    statuses.push(response.status);
    const json = await response.json<Json>();
    if (response.status === 200) return { answer: json, statuses };
    expect(response.status, JSON.stringify(json)).toBe(503);
    expect(json.errorName).toBe('serviceUnavailable');
    expect(Number(response.headers.get('Retry-After'))).toBeGreaterThan(0);
  }
  throw new Error(`no answer after ${tries} tries: ${statuses.join(', ')}`);
}

describe('authenticate, one guard call failing', () => {
  const cases: [string, Fault['when']][] = [];
  for (const op of ['liveBegin', 'livePrepared', 'liveSending', 'liveComplete']) {
    for (const when of ['before', 'after'] as const) cases.push([op, when]);
    if (op !== 'liveBegin') cases.push([op, 'hang']);
  }

  it.each(cases)('%s failing %s: a 503 or the answer, then the same answer, from one AReq', async (op, when) => {
    const h = liveHarness(deadlinesFor(when));
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'do', op, nth: 0, when });
    const { answer } = await untilAnswered(h, body);
    expect(answer.outcome).toBe('authenticated');
    expect(await liveJson(h, 'authenticate', body)).toEqual(answer);
    expect(authCalls(h)).toBe(1);
  });

  it('answers 503 when the answer cannot be recorded, and unavailable ever after: the AReq is never sent again', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'do', op: 'liveComplete', nth: 0, when: 'before', times: 3 });
    expect((await liveStep(h, 'authenticate', body)).status).toBe(503);
    const after = await liveJson(h, 'authenticate', body);
    expect(after).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
    expect(await liveJson(h, 'authenticate', body)).toEqual(after);
    expect(authCalls(h)).toBe(1);
  });
});

describe('authenticate, the provider failing', () => {
  it.each(['before', 'after', 'hang'] as const)('preparing the card failing %s: 503, then the answer', async (when) => {
    const h = liveHarness(deadlinesFor(when));
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'preauth', nth: 0, when });
    const { answer, statuses } = await untilAnswered(h, body);
    expect(statuses).toEqual([503, 200]);
    expect(answer.outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
  });

  it('an AReq that never reached the provider: 503, and the retry sends it', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'before' });
    const { answer, statuses } = await untilAnswered(h, body);
    expect(statuses).toEqual([503, 200]);
    expect(answer.outcome).toBe('authenticated');
  });

  it('an AReq whose answer was lost on the way back: the provider takes no second AReq for the transaction', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'after' });
    const { answer, statuses } = await untilAnswered(h, body);
    expect(statuses).toEqual([503, 200]);
    // The retry's AReq names the same transaction: the provider refuses it (Erro), so nothing
    // was authenticated twice, and the answer says nothing is known.
    expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U' });
    expect(await liveJson(h, 'authenticate', body)).toEqual(answer);
  });

  it.each(['hang', 'late'] as const)(
    'an AReq past the deadline (%s): unavailable at once and for good, never sent again',
    async (when) => {
      const h = liveHarness(deadlinesFor(when));
      const body = liveBody('2100', { browser: true });
      h.failOn({ of: 'provider', op: 'auth', nth: 0, when, delayMs: 3_000 });
      const first = await liveJson(h, 'authenticate', body);
      expect(first).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
      expect(await liveJson(h, 'authenticate', body)).toEqual(first);
      expect(authCalls(h)).toBe(1);
    },
  );

  it('answers 20 identical requests while the provider is down with 503s, then one AReq', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'preauth', nth: 0, when: 'before', times: 1000 });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => liveStep(h, 'authenticate', body).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([503]));
    h.clear();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => liveStep(h, 'authenticate', body).then((r) => r.json<Json>())),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
  });

  it("answers 500 when the provider refuses the service's key, and logs it without the key", async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const h = liveHarness({ THREEDS_SERVER_API_KEY: 'not-the-fake-key' });
    const body = liveBody('2100', { browser: true });
    const refused = await liveJson(h, 'authenticate', body, 500);
    expect(refused.errorName).toBe('internalErrorOccurred');
    const logged = lines.join('\n');
    expect(logged).toContain('refused the API key');
    expect(logged).not.toContain('not-the-fake-key');
  });
});

describe('deviceDataInitialize, preparing the card failing', () => {
  it.each([
    ['provider', 'preauth'],
    ['do', 'livePrepared'],
  ] as const)('%s %s failing: the answer stands, and authenticate prepares the card itself', async (of, op) => {
    const h = liveHarness();
    const reference = `tx-${crypto.randomUUID()}`;
    h.failOn({ of, op, nth: 0, when: 'before' });
    const { parts } = await collectInBrowser(h, reference, card('2000'));
    expect(parts.message.Status).toBe(true);
    expect(parts.method).toBeUndefined(); // nothing prepared, so no method to run
    const answer = await liveJson(h, 'authenticate', liveBody('2000', { reference }));
    expect(answer.outcome).toBe('authenticated');
  });
});

describe('the challenge, one call failing', () => {
  async function challenged(h: Harness) {
    const body = liveBody('2172', { browser: true });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('challenged');
    return { body, answer };
  }

  it('the relay page failing to reach the guard: a 503 page, and the same JWT works after', async () => {
    const h = liveHarness();
    const { answer } = await challenged(h);
    h.failOn({ of: 'do', op: 'liveShow', nth: 0, when: 'before' });
    const failed = await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt });
    expect(failed.status).toBe(503);
    expect(failed.headers.get('Retry-After')).not.toBeNull();
    const relayed = await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt });
    expect(relayed.status).toBe(200);
  });

  it.each([
    ['provider', 'postauth', 'before'],
    ['provider', 'postauth', 'hang'],
    ['do', 'liveDecide', 'before'],
    ['do', 'liveDecide', 'after'],
  ] as const)(
    'the notification failing at %s %s (%s): the cardholder returns to the merchant, and verification has the result',
    async (of, op, when) => {
      const h = liveHarness(deadlinesFor(when));
      const { body, answer } = await challenged(h);
      h.failOn({ of, op, nth: 0, when });
      const ended = await endChallenge(h, answer, 'Y');
      expect(ended.status).toBe(200);
      expect(ended.html).toContain('name="TransactionId"');
      const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
      expect(verified.outcome).toBe('authenticated');
    },
  );

  it('the notification failing to read the challenge: a 503 page, and posting it again completes', async () => {
    const h = liveHarness();
    const { answer } = await challenged(h);
    const ended = await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ result: 'Y' }),
    }).then((r) => r.json<Json>());
    h.failOn({ of: 'do', op: 'liveChallenge', nth: 0, when: 'before' });
    const path = new URL(ended.notificationURL).pathname;
    expect((await livePage(h, path, { cres: ended.cres })).status).toBe(503);
    expect(await (await livePage(h, path, { cres: ended.cres })).text()).toContain('Payment verified');
  });

  it('verification with the provider down: 503 and nothing recorded; then the result', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ result: 'Y' }),
    });
    h.failOn({ of: 'provider', op: 'postauth', nth: 0, when: 'before' });
    const down = await liveStep(h, 'verification', verifyBodyOf(body, answer));
    expect(down.status).toBe(503);
    expect((await liveJson(h, 'verification', verifyBodyOf(body, answer))).outcome).toBe('authenticated');
  });
});

describe('card numbers and keys', () => {
  it('never appear in a log line of a whole live flow', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const h = liveHarness();
    const pan = card('0072');
    const reference = `tx-${crypto.randomUUID()}`;
    await collectInBrowser(h, reference, pan);
    const body = liveBody('0072', { reference, cardNumber: pan });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('challenged');
    await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt });
    await endChallenge(h, answer, 'Y');
    expect((await liveJson(h, 'verification', verifyBodyOf(body, answer))).outcome).toBe('authenticated');
    expect(lines.length).toBeGreaterThan(5);
    const logged = lines.join('\n');
    expect(logged).toContain(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
    expect(logged).not.toContain(pan);
    expect(logged).not.toContain(env.THREEDS_SERVER_API_KEY);
    // ... and the guard object keeps no card number either (every row of every table, read
    // here), while the fake, which may keep it, has it: the number did go through.
    const claims = JSON.parse(atob(answer.challenge.jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as Json;
    const stub = env.THREEDS_TRANSACTION.get(env.THREEDS_TRANSACTION.idFromString(claims.txn as string));
    const stored = await runInDurableObject(stub, (_g, state) => {
      const tables = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
        )
        .toArray()
        .map((t) => t.name);
      return JSON.stringify(tables.map((t) => [t, state.storage.sql.exec(`SELECT * FROM "${t}"`).toArray()]));
    });
    expect(stored).toContain('live_auth');
    expect(stored).toContain(answer.challenge.reference);
    expect(stored).not.toContain(pan);
    expect((await fakeTransaction(creqOf(answer).threeDSServerTransID)).acctNumber).toBe(pan);
  });
});

describe('the authentication lease', () => {
  const SCOPE = {
    username: 'lease-test',
    entity: 'default',
    transactionReference: 'lease-test',
    baseUrl: 'http://localhost',
    apiVersion: 1,
  } as const;
  const guardNamed = (name: string) => env.THREEDS_TRANSACTION.get(env.THREEDS_TRANSACTION.idFromName(name));

  it('lasts, once the AReq goes out, until its answer can be recorded', async () => {
    const guard = guardNamed(`lease-${crypto.randomUUID()}`);
    const now = Date.now();
    expect((await guard.liveBegin('hash', 'holder', now, now + 3_600_000, SCOPE)).kind).toBe('run');
    expect(await guard.liveSending('holder', Date.now())).toBe(true);
    await runInDurableObject(guard, (_g, state) => {
      const row = state.storage.sql.exec<{ lease_until: number }>('SELECT lease_until FROM live_auth').one();
      expect(row.lease_until).toBeGreaterThanOrEqual(now + LIVE_SENDING_LEASE_MS);
    });
  });

  it('is not taken by a waiting caller that gave up: the next request takes it at once, not after 40 s', async () => {
    const guard = guardNamed(`lease-${crypto.randomUUID()}`);
    const now = Date.now();
    expect((await guard.liveBegin('hash', 'holder', now, now + 3_600_000, SCOPE)).kind).toBe('run');
    // An identical request waits in the object for the holder's answer...
    // (Whether it reaches the object before or after its abandon below, it takes nothing.)
    const waiting = guard.liveBegin('hash', 'waiter', Date.now(), now + 3_600_000, SCOPE);
    // ...and gives up (its deadline), telling the object so; then the holder gives up before sending.
    await guard.liveAbandon('waiter');
    expect((await waiting).kind).toBe('abandoned');
    await guard.liveAbandon('holder');
    // The lease is free: no one holds it for nobody (no row, so the next takes it without waiting)...
    const rows = await runInDurableObject(
      guard,
      (_g, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM live_auth').one().n,
    );
    expect(rows).toBe(0);
    // ...and the next request takes it, as its own.
    expect((await guard.liveBegin('hash', 'next', Date.now(), now + 3_600_000, SCOPE)).kind).toBe('run');
    const holder = await runInDurableObject(
      guard,
      (_g, state) => state.storage.sql.exec<{ lease_id: string }>('SELECT lease_id FROM live_auth').one().lease_id,
    );
    expect(holder).toBe('next');
  });

  it('lets a waiting caller wait as long as the holder may take to answer: its lease before the AReq, then the renewed one', () => {
    // A holder may send the AReq just before its first lease ends, which then runs LIVE_SENDING_LEASE_MS more.
    expect(callDeadlineMs('liveBegin', 5_000)).toBeGreaterThanOrEqual(LIVE_AUTH_LEASE_MS + LIVE_SENDING_LEASE_MS);
  });

  it('gives the holder of a lease that ran out after sending the answer everyone gets: none recorded', async () => {
    const guard = guardNamed(`lease-${crypto.randomUUID()}`);
    const now = Date.now();
    expect((await guard.liveBegin('hash', 'holder', now, now + 3_600_000, SCOPE)).kind).toBe('run');
    expect(await guard.liveSending('holder', Date.now())).toBe(true);
    await runInDurableObject(guard, (_g, state) => {
      state.storage.sql.exec('UPDATE live_auth SET lease_until = 0');
    });
    // An identical request finds the lease run out with the AReq sent: lost, for good.
    expect((await guard.liveBegin('hash', 'other', Date.now(), now + 3_600_000, SCOPE)).kind).toBe('lost');
    // The ARes arrives late: it is not recorded, and the holder is told so.
    expect(await guard.liveComplete('holder', { outcome: 'authenticated' }, Date.now())).toBeUndefined();
    expect((await guard.liveBegin('hash', 'third', Date.now(), now + 3_600_000, SCOPE)).kind).toBe('lost');
  });
});
