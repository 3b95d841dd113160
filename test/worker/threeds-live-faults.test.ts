import { env } from 'cloudflare:workers';
import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { restoreObjects } from './faulty-env';
import { callDeadlineMs } from '../../src/storage/object-client';
import { transactionWaits } from '../../src/threeds/transaction-api';
import { quiet } from './helpers';
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
  restoreObjects();
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

describe('authenticate, its one object call failing', () => {
  it("makes one call, to the transaction's object, which reaches the provider itself", async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    expect((await liveJson(h, 'authenticate', body)).outcome).toBe('authenticated');
    expect(h.calls.filter((c) => c.store === 'do').map((c) => c.op)).toEqual(['liveAuthenticate']);
    // The provider calls are the object's (through the harness's provider seam), not the Worker's.
    expect(h.calls.filter((c) => c.store === 'provider').map((c) => c.op)).toEqual(['preauth', 'auth']);
  });

  it.each(['before', 'after', 'hang'] as const)(
    'liveAuthenticate failing %s: a 503 or the answer, then the same answer, from one AReq',
    async (when) => {
      const h = liveHarness(deadlinesFor(when));
      const body = liveBody('2100', { browser: true });
      h.failOn({ of: 'do', op: 'liveAuthenticate', nth: 0, when });
      const { answer } = await untilAnswered(h, body);
      expect(answer.outcome).toBe('authenticated');
      expect(await liveJson(h, 'authenticate', body)).toEqual(answer);
      expect(authCalls(h)).toBe(1);
    },
  );
});

describe('authenticate, the provider failing', () => {
  it.each(['before', 'after', 'hang'] as const)('preparing the card failing %s: 503, then the answer', async (when) => {
    const h = liveHarness(deadlinesFor(when));
    const body = liveBody('2100', { browser: true });
    // Twice: the client asks for a preparation once more when the transport gave no answer.
    h.failOn({ of: 'provider', op: 'preauth', nth: 0, when, times: when === 'hang' ? 1 : 2 });
    const { answer, statuses } = await untilAnswered(h, body);
    expect(statuses).toEqual([503, 200]);
    expect(answer.outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
  });

  it.each(['before', 'after'] as const)(
    'a preparation whose transport failed once (%s) is asked for again at once: no 503',
    async (when) => {
      const h = liveHarness();
      const body = liveBody('2100', { browser: true });
      h.failOn({ of: 'provider', op: 'preauth', nth: 0, when });
      expect((await liveJson(h, 'authenticate', body)).outcome).toBe('authenticated');
      expect(h.count((c) => c.op === 'preauth')).toBe(2);
      expect(authCalls(h)).toBe(1);
    },
  );

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
    // The provider twice: the client asks for a preparation once more when the transport gave no answer.
    h.failOn({ of, op, nth: 0, when: 'before', times: of === 'provider' ? 2 : 1 });
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

  it("the relay page failing to reach the transaction's object: a 503 page, and the same JWT works after", async () => {
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
    ['do', 'liveFetched', 'before'],
    ['do', 'liveFetched', 'after'],
  ] as const)(
    'the notification failing at %s %s (%s): the cardholder returns to the merchant, and verification has the result',
    async (of, op, when) => {
      const h = liveHarness(deadlinesFor(when));
      const { body, answer } = await challenged(h);
      h.failOn({ of, op, nth: 0, when });
      const ended = await endChallenge(h, answer, 'Y');
      expect(h.armed, 'the fault fired').toBe(false);
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
    // ... and the transaction's object keeps no card number either (every row of every table, read
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

describe("authenticate's run in the transaction's object", () => {
  it('answers 20 identical requests with one AReq while the provider takes 5 s: 20 equal answers', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'late', delayMs: 5_000 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => liveStep(h, 'authenticate', body).then((r) => r.json<Json>())),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
    // One call each, all to the object: none waited on a lease, each on the object's one run.
    expect(h.count((c) => c.store === 'do' && c.op === 'liveAuthenticate')).toBe(20);
  });

  it('an object reset after the AReq went out: the next identical request answers unavailable at once (no wait), and no AReq goes out again', async () => {
    quiet();
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    // The provider never answers this AReq: only the reset ends the run.
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'hang' });
    const first = liveStep(h, 'authenticate', body);
    await vi.waitFor(() => expect(authCalls(h)).toBe(1), { timeout: 30_000, interval: 20 });
    await abortAllDurableObjects();
    // The call in flight fails: 503 for a platform reset (not the object's own exception); the test
    // tool's abort reaches the Worker as an exception of the object's, 500.
    expect([500, 503]).toContain((await first).status);
    // Were the next request to wait for anything of the lost run, it would hang with it.
    const after = await liveJson(h, 'authenticate', body);
    expect(after).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
    expect(await liveJson(h, 'authenticate', body)).toEqual(after);
    expect(authCalls(h)).toBe(1);
  });

  it('an object reset before the AReq went out: the next identical request runs it again, one AReq', async () => {
    quiet();
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'preauth', nth: 0, when: 'hang' });
    const first = liveStep(h, 'authenticate', body);
    await vi.waitFor(() => expect(h.count((c) => c.store === 'provider' && c.op === 'preauth')).toBe(1), {
      timeout: 30_000,
      interval: 20,
    });
    await abortAllDurableObjects();
    // The call in flight fails: 503 for a platform reset (not the object's own exception); the test
    // tool's abort reaches the Worker as an exception of the object's, 500.
    expect([500, 503]).toContain((await first).status);
    expect((await liveJson(h, 'authenticate', body)).outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
  });

  it("lets the Worker's call wait as long as the run may take: preparing, the method's 10 s, the provider's deadline", () => {
    const waits = transactionWaits(30_000);
    expect(callDeadlineMs('liveAuthenticate', 5_000, waits)).toBeGreaterThanOrEqual(5_000 + 10_000 + 30_000 + 5_000);
    // Every other call gets the usual deadline.
    expect(callDeadlineMs('liveShow', 5_000, waits)).toBe(5_000);
  });
});
