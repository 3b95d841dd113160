import { afterEach, describe, expect, it, vi } from 'vitest';
import { restoreObjects, StorageHarness, type Fault } from './faulty-env';
import { burst, quiet } from './helpers';
import { outboxAttempts, outboxSentAt, projected, runAlarmOf, sessionKeyOf, threeDsObject } from './projection-helpers';
import { authenticateBody, completeChallenge, newReference, threeDs, verifyBody } from './threeds-helpers';

/**
 * One writer per key (docs/storage.md "Projections"): the transaction's object is the truth and
 * the only writer of its session record in KV. Its KV writes go through the harness here
 * (`throughObjects`), with Cloudflare's one write per second per key enforced, and fail, hang or
 * land late on command like the Worker's calls: no answer waits for them or changes because of
 * them, the alarm writes again until the projection lands, and KV ends with the object's state.
 */

type Json = Record<string, any>;

const N = 20;

afterEach(() => {
  restoreObjects();
  vi.restoreAllMocks();
});

const challengedBody = (reference: string): Json =>
  authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' });

/** A harness whose objects' first KV writes of `key` fail as `when` says; the Worker's calls pass. */
function objectWriteFailing(key: string, when: Fault['when'], times = 1): StorageHarness {
  return new StorageHarness()
    .throughObjects(300, 100)
    .failOn({ nth: 0, of: 'kvWrite', by: 'object', key, when, delayMs: 600, times });
}

/** The objects' KV calls of one key (objects of earlier tests may still be writing theirs). */
const objectCallsOf = (harness: StorageHarness, key: string, op: string) =>
  harness.calls.filter((c) => c.by === 'object' && c.key === key && c.op === op);

describe('the session record, projected by the transaction object', () => {
  it('is in KV after authenticate, written by the object alone, once, with what authenticate decided', async () => {
    const harness = new StorageHarness().throughObjects();
    const reference = newReference();
    const response = await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r));
    expect(response.status).toBe(200);
    const answer = await response.json<Json>();
    expect(harness.calls.filter((c) => c.by !== 'object').map((c) => `${c.store}.${c.op}`)).toEqual([
      'do.authenticate',
    ]);
    const record = await projected(sessionKeyOf(reference));
    expect(record.answer).toEqual(answer);
    expect(record.challenge.reference).toBe(answer.challenge.reference);
    expect(record.result).toBeUndefined();
    expect(harness.writeLimit.writesOf(sessionKeyOf(reference))).toHaveLength(1);
  });

  it('gains the challenge result when the challenge ends, at least a second after the first write', async () => {
    const harness = new StorageHarness().throughObjects();
    const reference = newReference();
    const answer = await (
      await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r))
    ).json<Json>();
    // The challenge ends at once: the second write of the key waits out KV's one write a second.
    await completeChallenge(answer.challenge.jwt, ['1234']);
    const record = await projected(sessionKeyOf(reference), (r) => r.result !== undefined);
    expect(record.result).toMatchObject({ outcome: 'passed', reason: 'code' });
    const writes = harness.writeLimit.writesOf(sessionKeyOf(reference));
    expect(writes).toHaveLength(2);
    expect(writes[1]!.at - writes[0]!.at).toBeGreaterThanOrEqual(1_000);
    expect(harness.writeLimit.refused).toBe(0);
  });

  it.each([
    ['fails before it reaches KV', 'before'],
    ['fails after it reached KV', 'after'],
    ['hangs', 'hang'],
    ['answers late', 'late'],
  ] as const)(
    `when the object's first write %s: ${N} identical authenticate calls all get the one answer at once, and the alarm writes until KV has it`,
    async (_title, when) => {
      quiet();
      const reference = newReference();
      const harness = objectWriteFailing(sessionKeyOf(reference), when);
      const responses = await burst(N, () =>
        threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r)),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200));
      const answers = new Set(await Promise.all(responses.map((r) => r.text())));
      expect(answers.size).toBe(1);
      const record = await projected(sessionKeyOf(reference));
      expect(harness.armed, 'the fault fired').toBe(false);
      expect(JSON.stringify(record.answer)).toBe([...answers][0]);
      // Never faster than KV allows: every write of the key a second or more after the one before.
      const writes = harness.writeLimit.writesOf(sessionKeyOf(reference));
      for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(1_000);
      expect(harness.writeLimit.refused).toBe(0);
    },
  );

  it('keeps trying while KV refuses: five failed writes in a row, then the projection lands', async () => {
    quiet();
    const reference = newReference();
    const harness = objectWriteFailing(sessionKeyOf(reference), 'before', 5);
    expect((await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r))).status).toBe(200);
    await projected(sessionKeyOf(reference));
    expect(objectCallsOf(harness, sessionKeyOf(reference), 'put')).toHaveLength(6);
  });

  it('never lets an older state overwrite a newer one: after a write held past its deadline, the next waits two deadlines', async () => {
    quiet();
    const DEADLINE = 1_500;
    const reference = newReference();
    const key = sessionKeyOf(reference);
    const harness = new StorageHarness().throughObjects(DEADLINE).holdNextKvWriteUntilLater(key);
    const answer = await (
      await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r))
    ).json<Json>();
    await completeChallenge(answer.challenge.jwt, ['1234']);
    const puts = () => objectCallsOf(harness, key, 'put');
    while (puts().length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // When the object sent it, by its own clock (the harness sees the call a moment later).
    const heldSentAt = await outboxSentAt(threeDsObject(reference), key);
    expect(heldSentAt).not.toBeNull();
    // The first write (the record without its result) is out past its deadline (the object has
    // counted it failed: waited for, not assumed after a sleep), and lands now, late.
    await expect
      .poll(() => outboxAttempts(threeDsObject(reference), key), { timeout: 30_000, interval: 20 })
      .toBeGreaterThan(0);
    await harness.landHeldWrites();
    const record = await projected(key, (r) => r.result !== undefined);
    expect(record.result.outcome).toBe('passed');
    // The newer write was sent two deadlines after the held one at the earliest, so the held one
    // (which may land any time within them) can never land after it.
    const [held, next] = puts();
    expect(held!.at!).toBeGreaterThanOrEqual(heldSentAt!);
    expect(next!.at! - heldSentAt!).toBeGreaterThanOrEqual(2 * DEADLINE);
    // And KV keeps the newest: nothing older is written after it.
    await runAlarmOf(reference);
    expect(await projected(key)).toEqual(record);
  });

  it('answers verification from the object, so a transaction whose projection has not landed yet verifies', async () => {
    quiet();
    const reference = newReference();
    const harness = objectWriteFailing(sessionKeyOf(reference), 'hang');
    const answer = await (
      await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r))
    ).json<Json>();
    await completeChallenge(answer.challenge.jwt, ['1234']);
    const verified = await threeDs('verification', verifyBody(reference, answer.challenge.reference));
    expect((await verified.json<Json>()).outcome).toBe('authenticated');
  });

  it('gains the result of a challenge that ended by running out of time, found so by a later call', async () => {
    const harness = new StorageHarness().throughObjects();
    const reference = newReference();
    const answer = await (
      await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r))
    ).json<Json>();
    // verification eleven minutes on, as the object judges it (the caller's clock).
    const later = Date.now() + 11 * 60_000;
    const concluded = await threeDsObject(reference).concludeChallenge(answer.challenge.reference, later);
    expect(concluded).toMatchObject({ kind: 'ended', result: { outcome: 'failed', reason: 'expired' } });
    const record = await projected(sessionKeyOf(reference), (r) => r.result !== undefined);
    expect(record.result).toMatchObject({ outcome: 'failed', reason: 'expired' });
  });

  it(`ends a challenge once when ${N} endings arrive at once while the object's first write hangs, and KV gets that one result`, async () => {
    quiet();
    const reference = newReference();
    const harness = objectWriteFailing(sessionKeyOf(reference), 'hang');
    const answer = await (
      await threeDs('authenticate', challengedBody(reference), {}, (r) => harness.fetch(r))
    ).json<Json>();
    const verify = verifyBody(reference, answer.challenge.reference);
    const responses = await burst(N, (i) =>
      i % 2 === 0
        ? threeDs('verification', verify, {}, (r) => harness.fetch(r))
        : threeDs('sandbox/completeChallenge', { ...verify, result: 'passed' }, {}, (r) => harness.fetch(r)),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200));
    const record = await projected(sessionKeyOf(reference), (r) => r.result !== undefined);
    const verified = await (await threeDs('verification', verify)).json<Json>();
    // The one result, whichever ending came first: KV, verification and every sandbox answer agree.
    expect(verified.outcome).toBe(record.result.outcome === 'passed' ? 'authenticated' : 'authenticationFailed');
    for (const response of responses.filter((_, i) => i % 2 === 1)) {
      const body = await response.json<Json>();
      expect(body.challenge.result).toBe(record.result.outcome === 'passed' ? 'passed' : 'notCompleted');
    }
    const writes = harness.writeLimit.writesOf(sessionKeyOf(reference));
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(1_000);
    expect(harness.writeLimit.refused).toBe(0);
  });
});
