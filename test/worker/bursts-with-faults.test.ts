import { afterEach, describe, expect, it, vi } from 'vitest';
import { restoreObjects, StorageHarness, type StorageCall, via } from './faulty-env';
import { burst, type Fetch, quiet } from './helpers';
import { authenticateBody, completeChallenge, newReference, threeDs, verifyBody } from './threeds-helpers';
import {
  countedUpdates,
  createToken,
  expectConsistent,
  freshCard,
  objectWritesOf,
  projectionSettled,
  putAttribute,
  storedToken,
  tokenBody,
  tokenCall,
  liveTokensIn,
} from './token-helpers';

/**
 * Bursts and faults at once: 20 requests arrive together through one environment in which the
 * first call of one operation fails, before it reaches storage or after it did, or hangs (the
 * storage deadline ends it), whichever request of the burst makes it; each call of the clean path
 * is failed in turn. Each request makes one call to the object that decides it (a transaction's,
 * a token's), and no request waits for another: the request whose call failed answers 503 with
 * Retry-After, every other one answers what it would have answered without the fault (never a
 * 500, never a second answer), a plain retry completes, and what is stored is one consistent
 * state. For tokens, the objects' own KV writes go through the harness too (`throughObjects`), to
 * show that a burst of identical requests writes the token's key once. The tests of bursts alone
 * and of single faults alone are in threeds-concurrency, tokens-faults and the token life cycle
 * tests.
 */

type Json = Record<string, any>;

const N = 20;
/** A burst through a hanging call waits for its deadline: generous, for a busy machine. */
const BURST_WAIT = { timeout: 60_000 };

afterEach(() => {
  restoreObjects();
  vi.restoreAllMocks();
});

const label = (c: StorageCall): string => `${c.store}.${c.op}`;

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
 * Checks a burst's answers, once the harness's fault fired on a call of `op`: the one request
 * whose call failed answers 503 with Retry-After and every other one succeeds (a status of `ok`):
 * none waited on the failed one. Answers the successes' bodies (text).
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
  expect(unavailable, `requests answered 503 (the first ${op} failed)`).toBe(1);
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
    BURST_WAIT,
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
    BURST_WAIT,
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

/**
 * A harness whose first call of `op` to a token's object fails `when`, whichever request of the
 * burst makes it, and through which the objects write KV (to count their writes of the token's
 * key). A hang meets a roomy deadline: the other requests of the burst, served in turn by the one
 * object, must all be answered within it on a busy machine.
 */
function tokenFailingFirst(op: string, when: 'before' | 'after' | 'hang'): StorageHarness {
  return new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '3000' } : {})
    .throughObjects()
    .failOn({ nth: 0, of: 'do', op, when });
}

/** The token's KV key written by its object faster than KV allows (refused): never. */
function expectWithinKvLimit(harness: StorageHarness, tokenId: string): void {
  const key = `token:${tokenId}`;
  const sent = harness.count((c) => c.by === 'object' && c.key === key && (c.op === 'put' || c.op === 'delete'));
  expect(sent - harness.writeLimit.writesOf(key).length, `writes of ${key} refused by KV`).toBe(0);
}

/** A token made without faults, its KV projection settled (so that a burst's writes are its own). */
async function settledToken(
  body: Json = tokenBody({ cardNumber: freshCard() }),
): Promise<{ token: Json; href: string }> {
  const created = await createToken(body);
  expect(created.status).toBe(201);
  const token = await created.json<Json>();
  await projectionSettled(token);
  return { token, href: token.tokenPaymentInstrument.href as string };
}

describe('POST /tokens: a burst of 20 identical calls while the first call to the card’s object fails', () => {
  const CALLS = ['do.create'];

  it('makes these storage calls when nothing fails', async () => {
    expect(await callsOf((v) => createToken(tokenBody({ cardNumber: freshCard() }), {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: that request 503, the others the one token at once (one 201 unless the failed call made it), one KV write',
    BURST_WAIT,
    async (_title, _store, op, when) => {
      quiet();
      const body = tokenBody({ cardNumber: freshCard(), name: 'Grace Hopper' });
      const harness = tokenFailingFirst(op, when);
      const responses = await burst(N, () => createToken(body, {}, via(harness)));
      const statuses = responses.map((r) => r.status);
      const bodies = await sorted(harness, op, responses, [200, 201]);
      // One call each: the failed one was one request's, and no other request waited on it.
      expect(harness.count((c) => c.store === 'do' && c.op === op)).toBe(N);
      const ids = new Set(bodies.map((b) => (JSON.parse(b) as Json).tokenId as string));
      expect(ids.size).toBe(1);
      // Made once: by one of the others, or (after) perhaps by the failed call itself.
      const created = statuses.filter((s) => s === 201).length;
      if (when === 'after') expect(created).toBeLessThanOrEqual(1);
      else expect(created).toBe(1);
      await harness.settled();

      const retry = await createToken(body);
      expect(retry.status).toBe(200);
      const token = await retry.json<Json>();
      expect(token.tokenId).toBe([...ids][0]);
      expect(await liveTokensIn(token)).toEqual([token.tokenId]);
      expect(await expectConsistent(token)).toMatchObject({ tokenId: token.tokenId, version: 1 });
      expect(objectWritesOf(harness, token)).toBe(1);
      expectWithinKvLimit(harness, token.tokenId as string);
    },
  );
});

describe('PUT of an attribute: a burst of 20 different updates while the first call to the token’s object fails', () => {
  const CALLS = ['do.update'];

  it('makes these storage calls when nothing fails', async () => {
    const { href } = await settledToken();
    expect(await callsOf((v) => putAttribute(href, 'description', 'Counted', {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: that request 503, the others 204 at once, the retry completes, and each change made is one version, counted once',
    BURST_WAIT,
    async (_title, _store, op, when) => {
      quiet();
      const { token, href } = await settledToken();
      const values = Array.from({ length: N }, (_, i) => `Burst ${i}`);
      const harness = tokenFailingFirst(op, when);
      const responses = await burst(N, (i) => putAttribute(href, 'description', values[i], {}, via(harness)));
      const statuses = responses.map((r) => r.status);
      await sorted(harness, op, responses, [204]);
      expect(harness.count((c) => c.store === 'do' && c.op === op)).toBe(N);
      await harness.settled();

      // The others' changes, each a version of its own; the failed one's too if it reached the object.
      const made = N - 1 + (when === 'after' ? 1 : 0);
      expect((await expectConsistent(token))?.version).toBe(1 + made);
      expect(await countedUpdates(token)).toBe(made);
      // The retry of the failed value: a change, unless the token holds that value already.
      const failed = values[statuses.indexOf(503)]!;
      const held = ((await (await tokenCall('GET', href)).json<Json>()).description as string) === failed;
      expect((await putAttribute(href, 'description', failed)).status).toBe(204);
      const changes = made + (held ? 0 : 1);
      const stored = await expectConsistent(token);
      expect(stored?.version).toBe(1 + changes);
      expect(await countedUpdates(token)).toBe(changes);
      expect(values).toContain(stored?.description);
      expect((await (await tokenCall('GET', href)).json<Json>()).description).toBe(stored?.description);
      expectWithinKvLimit(harness, token.tokenId as string);
    },
  );
});

describe('DELETE /tokens/{id}: a burst of 20 identical calls while the first call to the token’s object fails', () => {
  const CALLS = ['do.remove'];

  it('makes these storage calls when nothing fails', async () => {
    const { href } = await settledToken();
    expect(await callsOf((v) => tokenCall('DELETE', href, {}, v))).toEqual(CALLS);
  });

  it.each(matrix(CALLS))(
    '%s: that request 503, the others 204 at once, the retry 204, the key deleted once, the card free',
    BURST_WAIT,
    async (_title, _store, op, when) => {
      quiet();
      const body = tokenBody({ cardNumber: freshCard() });
      const { token, href } = await settledToken(body);
      const harness = tokenFailingFirst(op, when);
      await sorted(harness, op, await burst(N, () => tokenCall('DELETE', href, {}, via(harness))), [204]);
      expect(harness.count((c) => c.store === 'do' && c.op === op)).toBe(N);
      await harness.settled();

      expect((await tokenCall('DELETE', href)).status).toBe(204);
      expect((await tokenCall('GET', href)).status).toBe(404);
      expect((await putAttribute(href, 'description', 'After')).status).toBe(404);
      expect(await expectConsistent(token)).toBeNull();
      expect(await storedToken(token.tokenId as string)).toBeNull();
      expect(objectWritesOf(harness, token)).toBe(1);
      expectWithinKvLimit(harness, token.tokenId as string);
      const again = await createToken(body);
      expect(again.status).toBe(201);
      expect((await again.json<Json>()).tokenId).not.toBe(token.tokenId);
    },
  );
});
