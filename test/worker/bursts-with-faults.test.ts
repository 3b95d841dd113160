import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorageHarness, type StorageCall } from './faulty-env';
import { burst, type Fetch } from './helpers';
import { authenticateBody, completeChallenge, newReference, threeDs, verifyBody } from './threeds-helpers';
import {
  countedUpdates,
  createToken,
  expectConsistent,
  freshCard,
  liveTokenIds,
  putAttribute,
  storedToken,
  tokenBody,
  tokenCall,
} from './token-helpers';

/**
 * Bursts and faults at once: 20 requests arrive together through one environment in which one
 * storage call fails, before it reaches storage or after it did, or hangs (with a short storage
 * deadline); each call of the clean path is failed in turn. Whichever request of the burst makes that call, every answer is the one answer
 * or a 503 with Retry-After (never a 500, never a second answer), a plain retry completes, and
 * what is stored is one consistent state. The tests of bursts alone and of single faults alone are
 * in threeds-concurrency, tokens-faults and the token life cycle tests.
 */

type Json = Record<string, any>;

const N = 20;
/** Waits of a lease's time (10 s) are by design in some cases (docs/storage.md "Guarantees"). */
const LEASE_WAIT = { timeout: 120_000 };

afterEach(() => {
  vi.restoreAllMocks();
});

function quiet(): void {
  vi.spyOn(console, 'error').mockImplementation(() => {});
  vi.spyOn(console, 'log').mockImplementation(() => {});
}

const label = (c: StorageCall): string => `${c.store}.${c.op}`;
const via =
  (h: StorageHarness): Fetch =>
  (r) =>
    h.fetch(r);

/** The storage calls of one clean run of `send`, by name, each once, in the order first made. */
async function callsOf(send: (via: Fetch) => Promise<Response>): Promise<string[]> {
  const h = new StorageHarness();
  const response = await send(via(h));
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  await h.settled();
  return [...new Set(h.calls.map(label))];
}

/** Each call of a clean run, failing before and after it reaches storage: `[title, store, op, when]`. */
function matrix(calls: readonly string[]): [string, 'kv' | 'do', string, 'before' | 'after' | 'hang'][] {
  return calls.flatMap((name) =>
    (['before', 'after', 'hang'] as const).map((when): [string, 'kv' | 'do', string, 'before' | 'after' | 'hang'] => {
      const [store, op] = name.split('.') as ['kv' | 'do', string];
      return [
        when === 'hang' ? `the first ${name} hanging` : `the first ${name} failing ${when} it reaches storage`,
        store,
        op,
        when,
      ];
    }),
  );
}

/**
 * A harness whose first call of `op` fails `when`, whichever request of the burst makes it. A hang
 * meets a 1 s deadline: short, yet room for the healthy calls of the burst on a busy machine.
 */
function failingFirst(op: string, when: 'before' | 'after' | 'hang'): StorageHarness {
  return new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '1000' } : {}).failOn({
    nth: 0,
    of: 'any',
    op,
    when,
  });
}

/**
 * Checks a burst's answers, once the harness's fault fired: the one request whose call failed
 * answers 503 with Retry-After and every other one succeeds (a status of `ok`), except for a
 * failed confirmation (`*Recorded`, `recorded`), which is retried and fails no one. Answers the
 * successes' bodies (text).
 */
async function sorted(harness: StorageHarness, op: string, responses: Response[], ok: number[]): Promise<string[]> {
  expect(harness.armed, 'the fault fired').toBe(false);
  const bodies: string[] = [];
  let unavailable = 0;
  for (const response of responses) {
    const text = await response.text();
    if (response.status === 503) {
      expect(response.headers.get('Retry-After'), text).toMatch(/^\d+$/);
      expect((JSON.parse(text) as Json).errorName).toBe('serviceUnavailable');
      unavailable++;
    } else {
      expect(ok, text).toContain(response.status);
      bodies.push(text);
    }
  }
  expect(unavailable, 'requests answered 503').toBe(/^(recorded|\w+Recorded)$/.test(op) ? 0 : 1);
  return bodies;
}

// --- 3DS -----------------------------------------------------------------------------------------

describe('authenticate: a burst of 20 identical calls while one storage call fails', () => {
  const body = (reference: string): Json =>
    authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' });
  // The object projects the session to KV itself (projections.test.ts fails those writes).
  const CALLS = ['do.authenticate'];

  it('makes these storage calls when nothing fails', async () => {
    expect(await callsOf((v) => threeDs('authenticate', body(newReference()), {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: one answer or 503, the retry gives that answer, and the challenge verifies',
    LEASE_WAIT,
    async (_title, store, op, when) => {
      quiet();
      const reference = newReference();
      const harness = failingFirst(op, when);
      const bodies = await sorted(
        harness,
        op,
        await burst(N, () => threeDs('authenticate', body(reference), {}, via(harness))),
        [200],
      );
      expect(harness.count((c) => label(c) === `${store}.${op}`)).toBeGreaterThan(0);
      expect(new Set(bodies).size).toBeLessThanOrEqual(1);
      await harness.settled();

      const retry = await threeDs('authenticate', body(reference));
      expect(retry.status).toBe(200);
      const answer = await retry.text();
      if (bodies.length > 0) expect(answer).toBe(bodies[0]);
      const again = await burst(N, () => threeDs('authenticate', body(reference)));
      expect(new Set(await Promise.all(again.map((r) => r.text())))).toEqual(new Set([answer]));

      const challenge = (JSON.parse(answer) as Json).challenge as Json;
      await completeChallenge(challenge.jwt, ['1234']);
      const verified = await threeDs('verification', verifyBody(reference, challenge.reference));
      expect((await verified.json<Json>()).outcome).toBe('authenticated');
    },
  );
});

describe('verification: a burst of 20 identical calls while one storage call fails', () => {
  const CALLS = ['do.concludeChallenge'];
  /** A transaction whose challenge was passed: the body of its verification. */
  async function passed(): Promise<Json> {
    const reference = newReference();
    const auth = await (
      await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }))
    ).json<Json>();
    await completeChallenge(auth.challenge.jwt, ['1234']);
    return verifyBody(reference, auth.challenge.reference);
  }

  it('makes these storage calls when nothing fails', async () => {
    const body = await passed();
    expect(await callsOf((v) => threeDs('verification', body, {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: one answer or 503, and the retry gives that answer',
    LEASE_WAIT,
    async (_title, store, op, when) => {
      quiet();
      const body = await passed();
      const harness = failingFirst(op, when);
      const bodies = await sorted(
        harness,
        op,
        await burst(N, () => threeDs('verification', body, {}, via(harness))),
        [200],
      );
      expect(new Set(bodies).size).toBeLessThanOrEqual(1);
      await harness.settled();
      const retry = await threeDs('verification', body);
      expect(retry.status).toBe(200);
      const answer = await retry.text();
      if (bodies.length > 0) expect(answer).toBe(bodies[0]);
      expect((JSON.parse(answer) as Json).outcome).toBe('authenticated');
    },
  );
});

// --- tokens --------------------------------------------------------------------------------------

describe('POST /tokens: a burst of 20 identical calls while one storage call fails', () => {
  const CALLS = ['do.claim', 'kv.put', 'do.recorded'];

  it('makes these storage calls when nothing fails', async () => {
    expect(await callsOf((v) => createToken(tokenBody({ cardNumber: freshCard() }), {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: one token or 503, the retry gives that token, and it is the only one made',
    LEASE_WAIT,
    async (_title, _store, op, when) => {
      quiet();
      const body = tokenBody({ cardNumber: freshCard(), name: 'Grace Hopper' });
      const before = await liveTokenIds();
      const harness = failingFirst(op, when);
      const responses = await burst(N, () => createToken(body, {}, via(harness)));
      const created = responses.filter((r) => r.status === 201).length;
      const bodies = await sorted(harness, op, responses, [200, 201]);
      expect(created).toBeLessThanOrEqual(1);
      const ids = new Set(bodies.map((b) => (JSON.parse(b) as Json).tokenId as string));
      expect(ids.size).toBeLessThanOrEqual(1);
      await harness.settled();

      // Through a harness too, to wait for its confirmation (sent after the answer).
      const clean = new StorageHarness();
      const retry = await createToken(body, {}, via(clean));
      await clean.settled();
      expect([200, 201]).toContain(retry.status);
      const token = await retry.json<Json>();
      if (ids.size === 1) expect(token.tokenId).toBe([...ids][0]);
      expect([...(await liveTokenIds())].filter((id) => !before.has(id))).toEqual([token.tokenId]);
      await expectConsistent(token.tokenId);
    },
  );
});

/** A failed KV write of an update keeps its write lease 10 s (docs/storage.md): the burst waits it out. */
describe('PUT of an attribute: a burst of 20 updates while one storage call fails', () => {
  const CALLS = ['kv.get', 'do.current', 'do.update', 'kv.put', 'do.recorded'];

  it('makes these storage calls when nothing fails', async () => {
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    expect(await callsOf((v) => putAttribute(href, 'description', 'Counted', {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: one 503 and the rest 204, the retry completes, and every change made counts once toward the limit',
    LEASE_WAIT,
    async (_title, _store, op, when) => {
      quiet();
      const created = await createToken(tokenBody({ cardNumber: freshCard() }));
      expect(created.status).toBe(201);
      const token = await created.json<Json>();
      const href = token.tokenPaymentInstrument.href as string;
      const values = Array.from({ length: N }, (_, i) => `Burst ${i}`);
      const harness = failingFirst(op, when);
      const responses = await burst(N, (i) => putAttribute(href, 'description', values[i], {}, via(harness)));
      const statuses = responses.map((r) => r.status);
      await sorted(harness, op, responses, [204]);
      await harness.settled();
      const failed = statuses.flatMap((s, i) => (s === 503 ? [i] : []));
      const clean = new StorageHarness();
      for (const i of failed) {
        expect((await putAttribute(href, 'description', values[i], {}, via(clean))).status).toBe(204);
      }
      await clean.settled();

      const stored = await expectConsistent(token.tokenId);
      // Every change that reached the guard counts toward the limit of 50 once a version holding
      // it is in KV: the 20 values, and the failed try too if its change got that far (its retry,
      // after others changed the token, is an update of its own).
      const reachedGuard = op === 'put' || (op === 'update' && when === 'after');
      expect(await countedUpdates(stored)).toBe(N + (reachedGuard ? 1 : 0));
      expect(values).toContain(stored.description);
    },
  );
});

describe('DELETE /tokens/{id}: a burst of 20 identical calls while one storage call fails', () => {
  const CALLS = ['kv.get', 'do.retire', 'kv.put', 'kv.delete', 'do.retirementRecorded'];

  it('makes these storage calls when nothing fails', async () => {
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    expect(await callsOf((v) => tokenCall('DELETE', token.tokenPaymentInstrument.href as string, {}, v))).toEqual(
      CALLS,
    );
  });

  it.each(matrix(CALLS))(
    '%s: one 503 and the rest 204, the retry answers 204, the token is gone and the card free',
    LEASE_WAIT,
    async (_title, _store, op, when) => {
      quiet();
      const body = tokenBody({ cardNumber: freshCard() });
      const token = await (await createToken(body)).json<Json>();
      const href = token.tokenPaymentInstrument.href as string;
      const harness = failingFirst(op, when);
      await sorted(harness, op, await burst(N, () => tokenCall('DELETE', href, {}, via(harness))), [204]);
      await harness.settled();
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      expect((await tokenCall('GET', href)).status).toBe(404);
      expect(await storedToken(token.tokenId)).toBeNull();
      expect(await env.SESSIONS.get(`token-deleted:${token.tokenId}`)).not.toBeNull();
      const again = await createToken(body);
      expect(again.status).toBe(201);
      expect((await again.json<Json>()).tokenId).not.toBe(token.tokenId);
    },
  );
});
