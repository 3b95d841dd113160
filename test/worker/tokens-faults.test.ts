import { runDurableObjectAlarm } from 'cloudflare:test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { quickObjects, restoreObjects, StorageHarness, type Fault, via } from './faulty-env';
import { KEY_WRITE_INTERVAL_MS, objectStorage } from '../../src/storage/object-storage';
import { burst, expect503, expectNotFound, panLookup, quiet } from './helpers';
import { outboxAttempts } from './projection-helpers';
import {
  countedUpdates,
  createToken,
  expectConsistent,
  freshCard,
  newToken,
  objectWritesOf,
  projectionSettled,
  putAttribute,
  queryTokens,
  storedToken,
  tokenBody,
  tokenCall,
  tokenGroupOf,
  authenticateWithToken,
} from './token-helpers';

/**
 * Tokens under bursts, and KV's projection of a token under faults (docs/storage.md
 * "Projections"). A token's object (src/tokens/token-group.ts) is its truth and the only
 * writer of its KV key, `token:<id>`, which it writes after the answer, through its outbox: at
 * once, then from its alarm until it lands, at most once a second per key (the newest state), and
 * never so that an older state lands after a newer one.
 *
 * Here the objects' KV writes go through the fault harness (`throughObjects`, with Cloudflare's
 * one write per second per key enforced) and fail before or after reaching KV, hang, answer late,
 * or are held back to land after a newer state: the Worker's answers never change because of
 * them, the token's object answers its exact state at once, and KV ends with that state (nothing,
 * for a deleted token). A burst of identical requests writes the key once, and a burst of
 * different updates is served in turn, every one answered, without ever writing the key faster
 * than KV allows. The Worker's own calls failing are in token-lifecycle-faults.test.ts.
 */

type Json = Record<string, any>;

const N = 20;
/** Tests that wait for an object's alarm: generous, for a busy machine (alarms are late there, never lost). */
const ALARMS = { timeout: 60_000 };
/** The objects' KV deadline and first backoff where their writes fail: short, so that retries come soon. */
const OBJECT_DEADLINE_MS = 1_000;
const RETRY_BASE_MS = 50;
/** A late answer comes this long after the write landed: past the objects' deadline. */
const LATE_MS = 1_500;

// KV's second per key, scaled down to a tenth (the objects and the harness's emulation of KV's
// limit alike): the tests of the limit check it against that interval.
beforeEach(() => quickObjects());

afterEach(() => {
  restoreObjects();
  vi.restoreAllMocks();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const keyOf = (token: Json): string => `token:${token.tokenId as string}`;

/** The Worker's calls through a harness (not the objects' own writes), by name. */
const workerCalls = (h: StorageHarness): string[] =>
  h.calls.filter((c) => c.by !== 'object').map((c) => `${c.store}.${c.op}`);

/** The objects' writes (puts and deletes) through a harness, of any key, in order. */
const objectWrites = (h: StorageHarness) =>
  h.calls.filter((c) => c.by === 'object' && (c.op === 'put' || c.op === 'delete'));

/** The objects' writes of one key, in order. */
const objectWritesOfKey = (h: StorageHarness, key: string) => objectWrites(h).filter((c) => c.key === key);

/** KV's second per key, as this test has it (scaled down: see `quickObjects`). */
const keyWriteInterval = (): number => objectStorage.keyWriteIntervalMs;

/**
 * The object's writes of `key` that KV refused for coming within a second of the last (every write
 * the object sent, less those the limit let through; in a run where no write is failed or held).
 */
const refusedOf = (h: StorageHarness, key: string): number =>
  objectWritesOfKey(h, key).length - h.writeLimit.writesOf(key).length;

/**
 * KV's one write per second per key, kept by the object itself: the writes it sent are a second
 * apart (not only those the limit let through, which are by construction), and none was refused.
 */
function expectOneWriteASecond(h: StorageHarness, key: string): void {
  const writes = objectWritesOfKey(h, key);
  for (let i = 1; i < writes.length; i++)
    expect(writes[i]!.at! - writes[i - 1]!.at!).toBeGreaterThanOrEqual(keyWriteInterval());
  expect(refusedOf(h, key), `writes of ${key} refused by KV`).toBe(0);
}

/** Waits until `check` holds (polling); fails after `ms`, generous for a busy machine. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}

/** A deleted token: 404 on every exact path, whatever KV holds (the token's object answers them). */
async function expectGone(href: string, link?: string): Promise<void> {
  await expectNotFound(await tokenCall('GET', href));
  await expectNotFound(await putAttribute(href, 'description', 'After'));
  await expectNotFound(await putAttribute(href, 'cardHolderName', 'After'));
  if (link !== undefined) {
    await expectNotFound(await tokenCall('GET', link));
    await expectNotFound(await tokenCall('PUT', link));
  }
  await expectNotFound(await authenticateWithToken(href), 'tokenNotFound');
}

// --- the objects' own KV writes failing ----------------------------------------------------------
// The key of a token being created is not known before its POST: the faults and holds of a
// creation's write take the objects' first write of any key, and each such test checks it was the
// token's. So no test here leaves a write running: each waits for its projection to settle, and
// one whose write answers late waits for that answer (which makes the object write again).

type Change = 'creation' | 'update' | 'deletion';
const CHANGES: Change[] = ['creation', 'update', 'deletion'];
const WHENS: Fault['when'][] = ['before', 'after', 'hang', 'late'];
const WHEN_TEXT: Record<Fault['when'], string> = {
  before: 'fails before it reaches KV',
  after: 'fails after it reached KV',
  hang: 'hangs',
  late: 'lands, and answers after its deadline',
};

/** A harness through which the objects write KV, their first write (of `key`, when known) failing `when`. */
function objectWriteFailing(when: Fault['when'], key?: string, times = 1): StorageHarness {
  return new StorageHarness()
    .throughObjects(OBJECT_DEADLINE_MS, RETRY_BASE_MS)
    .failOn({ nth: 0, of: 'kvWrite', by: 'object', ...(key ? { key } : {}), when, delayMs: LATE_MS, times });
}

describe("a token's KV projection when its object's write of it fails", () => {
  const cases = CHANGES.flatMap((change) =>
    WHENS.map((when): [Change, string, Fault['when']] => [change, WHEN_TEXT[when], when]),
  );

  it.each(cases)(
    'on its %s, the write that %s: the answer is the same at once, and the alarm writes until KV holds the object’s state',
    ALARMS,
    async (change, _text, when) => {
      quiet();
      let made = change === 'creation' ? undefined : await newToken();
      if (made) await projectionSettled(made.token);
      const h = objectWriteFailing(when, made && keyOf(made.token));
      let answer: Response;
      if (change === 'creation') {
        answer = await createToken(tokenBody({ cardNumber: freshCard(), name: 'Ada Lovelace' }), {}, via(h));
        expect(answer.status, await answer.clone().text()).toBe(201);
        const token = await answer.clone().json<Json>();
        made = { token, href: token.tokenPaymentInstrument.href as string, cardNumber: '' };
      } else if (change === 'update') {
        answer = await putAttribute(made!.href, 'description', 'Changed', {}, via(h));
        expect(answer.status, await answer.clone().text()).toBe(204);
      } else {
        answer = await tokenCall('DELETE', made!.href, {}, via(h));
        expect(answer.status, await answer.clone().text()).toBe(204);
      }
      const { token, href } = made!;
      const key = keyOf(token);
      expect(workerCalls(h)).toEqual([{ creation: 'do.create', update: 'do.update', deletion: 'do.remove' }[change]]);
      // The object answers its state at once, whatever KV holds.
      const read = await tokenCall('GET', href);
      expect(read.status).toBe(change === 'deletion' ? 404 : 200);
      if (change === 'update') expect((await read.json<Json>()).description).toBe('Changed');

      // The fault takes the token's first write: the creation's is sent at once (its key unknown
      // to the fault, it takes the objects' first write), a change's a second after the
      // creation's at the earliest (KV's limit), from the alarm.
      await until('the fault fired', () => !h.armed);
      if (change === 'creation') expect(objectWrites(h)[0]?.key, "the fault took the token's own write").toBe(key);

      if (when === 'late') {
        // The late answer makes the object write the key again (it cannot know which landed last):
        // wait for it, so that nothing of this test is still writing after it.
        const first = objectWritesOfKey(h, key)[0]!;
        await until('the late answer', () => Date.now() > first.at! + LATE_MS + 100);
      }
      const stored = await expectConsistent(token);
      // The failed write, then at least one more from the alarm.
      expect(objectWritesOf(h, token)).toBeGreaterThanOrEqual(2);
      if (change === 'deletion') expect(stored).toBeNull();
      else expect(stored).toMatchObject({ version: change === 'update' ? 2 : 1 });
      if (change === 'update') expect(stored!.description).toBe('Changed');
      if (change === 'deletion') {
        const lookup = await panLookup({ merchant: { entity: 'default' }, token: href });
        await expectNotFound(lookup, 'tokenNotFound');
      }
    },
  );

  it('keeps trying while KV refuses: five failed writes in a row, then the projection lands', ALARMS, async () => {
    quiet();
    const { token, href } = await newToken();
    await projectionSettled(token);
    const h = objectWriteFailing('before', keyOf(token), 5);
    expect((await putAttribute(href, 'description', 'Persistent', {}, via(h))).status).toBe(204);
    expect((await expectConsistent(token))?.description).toBe('Persistent');
    expect(objectWritesOfKey(h, keyOf(token)).map((c) => c.op)).toEqual(Array(6).fill('put'));
  });
});

describe('a write of a token held past its deadline, landing after a newer state', () => {
  /** The objects' deadline here: the held write lands just after it, the newer state two deadlines after the held one. */
  const DEADLINE = 1_000;

  /**
   * Waits until the object sent its write of the token (held): a second after the creation's at
   * the earliest, so that a change made after this is not coalesced into it.
   */
  async function sent(h: StorageHarness, token: Json): Promise<void> {
    await until('the write to hold was sent', () => objectWritesOfKey(h, keyOf(token)).length > 0);
  }

  /**
   * Lands the held write as soon as the object gave up on it (its deadline passed): before the
   * newer state's write, which the object sends only two deadlines after the held one.
   */
  async function landWhenGivenUp(h: StorageHarness, token: Json): Promise<void> {
    await until(
      'the object gave the held write up',
      async () => (await outboxAttempts(tokenGroupOf(token), keyOf(token))) > 0,
    );
    expect(objectWritesOfKey(h, keyOf(token)), 'the newer state is not written yet').toHaveLength(1);
    await h.landHeldWrites();
  }

  /** The newer state's write came two deadlines or more after the held one. */
  function expectWaitedTwoDeadlines(h: StorageHarness, token: Json): void {
    const [held, next] = objectWritesOfKey(h, keyOf(token));
    expect(next, 'the newer state was written').toBeDefined();
    expect(next!.at! - held!.at!).toBeGreaterThanOrEqual(2 * DEADLINE);
  }

  it(
    'never brings back a deleted token: the put of its creation lands after the DELETE answered, and KV ends without the key',
    ALARMS,
    async () => {
      quiet();
      // The key is not known before the POST: the objects' next write is held, whichever it is.
      const h = new StorageHarness().throughObjects(DEADLINE, RETRY_BASE_MS).holdNextKvWriteUntilLater();
      const { token, href } = await newToken({ via: via(h) });
      await sent(h, token);
      expect(objectWrites(h)[0]?.key, "the held write is the token's").toBe(keyOf(token));
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      await expectNotFound(await tokenCall('GET', href));

      await landWhenGivenUp(h, token);
      // Landed late: KV holds the deleted token's record for a moment; its object answers 404 throughout.
      expect(await storedToken(token.tokenId)).not.toBeNull();
      await expectGone(href);
      expect(await expectConsistent(token)).toBeNull();
      expectWaitedTwoDeadlines(h, token);
      expect(objectWritesOfKey(h, keyOf(token)).map((c) => c.op)).toEqual(['put', 'delete']);
      // And it stays so: the alarm has nothing older to write.
      await runDurableObjectAlarm(tokenGroupOf(token));
      expect(await storedToken(token.tokenId)).toBeNull();
      await expectNotFound(await panLookup({ merchant: { entity: 'default' }, token: href }), 'tokenNotFound');
    },
  );

  it(
    "never brings back an older state: an update's put lands after a newer update, and KV ends with the newer",
    ALARMS,
    async () => {
      quiet();
      const { token, href } = await newToken();
      await projectionSettled(token);
      const h = new StorageHarness().throughObjects(DEADLINE, RETRY_BASE_MS).holdNextKvWriteUntilLater(keyOf(token));
      expect((await putAttribute(href, 'description', 'First', {}, via(h))).status).toBe(204);
      await sent(h, token);
      expect((await putAttribute(href, 'description', 'Second', {}, via(h))).status).toBe(204);
      expect((await (await tokenCall('GET', href)).json<Json>()).description).toBe('Second');

      await landWhenGivenUp(h, token);
      expect((await storedToken(token.tokenId))?.description).toBe('First');
      const stored = await expectConsistent(token);
      expect(stored).toMatchObject({ description: 'Second', version: 3 });
      expectWaitedTwoDeadlines(h, token);
      await runDurableObjectAlarm(tokenGroupOf(token));
      expect(await storedToken(token.tokenId)).toEqual(stored);
      expect(await countedUpdates(token)).toBe(2);
    },
  );

  it(
    'writes the newest state again when a held write lands after it: KV holds the older state a moment, then the newest',
    ALARMS,
    async () => {
      quiet();
      const { token, href } = await newToken();
      await projectionSettled(token);
      const key = keyOf(token);
      const h = new StorageHarness().throughObjects(DEADLINE, RETRY_BASE_MS).holdNextKvWriteUntilLater(key);
      expect((await putAttribute(href, 'description', 'First', {}, via(h))).status).toBe(204);
      await sent(h, token);
      expect((await putAttribute(href, 'description', 'Second', {}, via(h))).status).toBe(204);
      // The newer state goes out two deadlines after the held write, and lands.
      await until('the newer state landed', async () => (await storedToken(token.tokenId))?.description === 'Second');
      expectWaitedTwoDeadlines(h, token);

      // Only now, past KV's second for the key, does the held write land, and its answer come
      // back: KV holds the older state (for a second at least), until the object, told of the
      // late landing, writes the newest state again.
      await sleep(keyWriteInterval() + 100);
      await h.landHeldWrites(tokenGroupOf(token));
      const stored = await expectConsistent(token);
      expect(stored).toMatchObject({ description: 'Second', version: 3 });
      // Sent: the held write, the newer state, and the newer state again (after the held one
      // landed); all three reached KV: without the late answer, only two would have.
      expect(objectWritesOfKey(h, key).map((c) => c.op)).toEqual(['put', 'put', 'put']);
      expect(h.writeLimit.writesOf(key)).toHaveLength(3);
      expect(refusedOf(h, key), 'writes refused by KV').toBe(0);
    },
  );

  it(
    "never brings back a deleted token: an update's put lands after the DELETE, and KV ends without the key",
    ALARMS,
    async () => {
      quiet();
      const { token, href } = await newToken();
      await projectionSettled(token);
      const h = new StorageHarness().throughObjects(DEADLINE, RETRY_BASE_MS).holdNextKvWriteUntilLater(keyOf(token));
      expect((await putAttribute(href, 'description', 'Written late', {}, via(h))).status).toBe(204);
      await sent(h, token);
      expect((await tokenCall('DELETE', href)).status).toBe(204);

      await landWhenGivenUp(h, token);
      expect((await storedToken(token.tokenId))?.description).toBe('Written late');
      await expectGone(href);
      expect(await expectConsistent(token)).toBeNull();
      expectWaitedTwoDeadlines(h, token);
      await runDurableObjectAlarm(tokenGroupOf(token));
      expect(await storedToken(token.tokenId)).toBeNull();
    },
  );
});

// --- KV's one write per second per key -----------------------------------------------------------

describe("KV's one write a second per key, under bursts of changes", () => {
  it(
    `answers ${N} different cardholder names at once with 204: version ${N + 1}, ${N} updates counted, KV converges without ever exceeding the limit`,
    ALARMS,
    async () => {
      const { token, href } = await newToken();
      await projectionSettled(token);
      const h = new StorageHarness().throughObjects();
      const names = Array.from({ length: N }, (_, i) => `Holder ${i}`);
      const responses = await burst(N, (i) => putAttribute(href, 'cardHolderName', names[i], {}, via(h)));
      expect(responses.map((r) => r.status)).toEqual(Array(N).fill(204));
      // KV ends with the object's record (which GET answers): one of the names, the last served.
      const stored = await expectConsistent(token);
      expect(stored?.version).toBe(N + 1);
      expect(await countedUpdates(token)).toBe(N);
      expect(names).toContain((await (await tokenCall('GET', href)).json<Json>()).paymentInstrument.cardHolderName);
      expect(h.writeLimit.writesOf(keyOf(token)).length).toBeGreaterThan(0);
      expectOneWriteASecond(h, keyOf(token));
    },
  );

  it(
    'answers 10 different updates sent 150 ms apart with 204, and KV converges without exceeding the limit',
    ALARMS,
    async () => {
      // KV's own second: the updates come several times within it, so that its writes coalesce them.
      objectStorage.keyWriteIntervalMs = KEY_WRITE_INTERVAL_MS;
      const { token, href } = await newToken();
      await projectionSettled(token);
      const h = new StorageHarness().throughObjects();
      const names = Array.from({ length: 10 }, (_, i) => `Spaced ${i}`);
      const responses = await Promise.all(
        names.map((name, i) => sleep(i * 150).then(() => putAttribute(href, 'cardHolderName', name, {}, via(h)))),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(204));
      const stored = await expectConsistent(token);
      expect(stored?.version).toBe(11);
      expect(await countedUpdates(token)).toBe(10);
      expect(names).toContain((await (await tokenCall('GET', href)).json<Json>()).paymentInstrument.cardHolderName);
      expectOneWriteASecond(h, keyOf(token));
    },
  );

  it(
    'answers a DELETE right after the creation with 204: 404 at once on every exact path, and KV ends without the key',
    ALARMS,
    async () => {
      quiet();
      const h = new StorageHarness().throughObjects();
      const { token, href, cardNumber } = await newToken({ name: 'Ada', via: via(h) });
      const conflict = await createToken(tokenBody({ cardNumber, name: 'Ada L' }), {}, via(h));
      expect(conflict.status).toBe(409);
      const link = (await conflict.json<Json>())._links['tokens:conflicts'].href as string;
      expect((await tokenCall('DELETE', href, {}, via(h))).status).toBe(204);
      // At once, before KV's copy is gone (the creation's put came within the last second).
      await expectGone(href, link);
      expect(await expectConsistent(token)).toBeNull();
      expect(h.writeLimit.writesOf(keyOf(token)).at(-1)?.op).toBe('delete');
      expectOneWriteASecond(h, keyOf(token));
      await expectNotFound(await panLookup({ merchant: { entity: 'default' }, token: href }), 'tokenNotFound');
      await expectNotFound(await queryTokens(`tokenId=${token.tokenId}`));
      // The card is free for a new token.
      const again = await createToken(tokenBody({ cardNumber, name: 'Ada' }));
      expect(again.status).toBe(201);
      expect((await again.json<Json>()).tokenId).not.toBe(token.tokenId);
    },
  );
});

// --- bursts --------------------------------------------------------------------------------------

describe('POST /tokens under bursts', () => {
  it(
    `gives one token for ${N} identical requests at once: one 201, ${N - 1} 200, one call each, one KV write`,
    ALARMS,
    async () => {
      const h = new StorageHarness().throughObjects();
      const body = tokenBody({ cardNumber: freshCard(), name: 'Ada Lovelace' });
      const responses = await burst(N, () => createToken(body, {}, via(h)));
      const answers = await Promise.all(responses.map((r) => r.json<Json>()));
      expect(new Set(answers.map((a) => a.tokenId)).size).toBe(1);
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
      expect(responses.filter((r) => r.status === 200)).toHaveLength(N - 1);
      // The Worker asks the card's object, and writes nothing itself.
      expect(workerCalls(h)).toEqual(Array(N).fill('do.create'));
      const token = answers[0]!;
      expect(await expectConsistent(token)).toMatchObject({ tokenId: token.tokenId, version: 1 });
      expect(objectWritesOf(h, token)).toBe(1);
      expect((await tokenCall('GET', token.tokenPaymentInstrument.href as string)).status).toBe(200);
    },
  );

  it('answers a burst of the same card with different descriptions with the one token that won', async () => {
    const cardNumber = freshCard();
    const responses = await burst(N, (i) => createToken(tokenBody({ cardNumber, extra: { description: `try ${i}` } })));
    const answers = await Promise.all(responses.map((r) => r.json<Json>()));
    // A description is not a detail of the card: the others are told of the token as it is (200).
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(N - 1).fill(200), 201].sort());
    expect(new Set(answers.map((a) => a.tokenId)).size).toBe(1);
    expect(new Set(answers.map((a) => a.description)).size).toBe(1);
  });

  it(`gives one token for ${N} requests with other cardholder names at once: one 201, the rest 409 naming it`, async () => {
    const cardNumber = freshCard();
    const responses = await burst(N, (i) => createToken(tokenBody({ cardNumber, name: `Holder ${i}` })));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(N - 1);
    const answers = await Promise.all(responses.map((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => a.tokenId)).size).toBe(1);
    const winner = answers.find((_a, i) => responses[i]!.status === 201)!;
    const others = answers.filter((x) => x !== winner);
    for (const a of others) {
      expect(a.paymentInstrument.cardHolderName).toBe(winner.paymentInstrument.cardHolderName);
      expect(a.conflicts.paymentInstrument.cardHolderName).not.toBe(winner.paymentInstrument.cardHolderName);
    }
    // Each name is a conflict of its own.
    expect(new Set(others.map((a) => a._links['tokens:conflicts'].href)).size).toBe(N - 1);
  });
});

describe('DELETE /tokens/{id} under bursts', () => {
  it(
    `answers ${N} identical DELETEs at once with 204 and deletes the KV key once; again, 204 and nothing written`,
    ALARMS,
    async () => {
      const { token, href } = await newToken();
      await projectionSettled(token);
      const h = new StorageHarness().throughObjects();
      const statuses = (await burst(N, () => tokenCall('DELETE', href, {}, via(h)))).map((r) => r.status);
      expect(statuses).toEqual(Array(N).fill(204));
      expect(workerCalls(h)).toEqual(Array(N).fill('do.remove'));
      await expectNotFound(await tokenCall('GET', href));
      expect(await expectConsistent(token)).toBeNull();
      expect(objectWritesOfKey(h, keyOf(token)).map((c) => c.op)).toEqual(['delete']);
      // Repeated while the token would have lived: 204, and nothing left to write.
      const again = new StorageHarness().throughObjects();
      const repeated = await burst(N, () => tokenCall('DELETE', href, {}, via(again)));
      expect(repeated.map((r) => r.status)).toEqual(Array(N).fill(204));
      await projectionSettled(token);
      expect(objectWritesOf(again, token)).toBe(0);
    },
  );
});

describe('DELETE that failed, then POST of the same card', () => {
  it.each(['before', 'after'] as const)(
    'failing %s it reached the object: the POST answers the token still live, or makes a new one once it is deleted; never two',
    async (when) => {
      quiet();
      const { token, href, cardNumber } = await newToken({ name: 'Ada' });
      const h = new StorageHarness().failOn({ nth: 0, of: 'do', op: 'remove', when });
      await expect503(await tokenCall('DELETE', href, {}, via(h)));
      const next = await createToken(tokenBody({ cardNumber, name: 'Ada' }));
      const answer = await next.json<Json>();
      if (when === 'before') {
        // Not deleted: the card's token still stands.
        expect(next.status).toBe(200);
        expect(answer.tokenId).toBe(token.tokenId);
        expect((await tokenCall('GET', href)).status).toBe(200);
      } else {
        expect(next.status).toBe(201);
        expect(answer.tokenId).not.toBe(token.tokenId);
        await expectNotFound(await tokenCall('GET', href));
        expect((await tokenCall('GET', answer.tokenPaymentInstrument.href as string)).status).toBe(200);
      }
      // The client's retry of the DELETE: 204 either way, and the old token is gone.
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      await expectNotFound(await tokenCall('GET', href));
      expect(await expectConsistent(token)).toBeNull();
    },
  );
});
