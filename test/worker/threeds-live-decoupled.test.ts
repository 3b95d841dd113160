import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { objectProvider } from '../../src/threeds/live/challenge-watch';
import {
  receivingAtTestEndpoint,
  restoreTransport,
  settledOwner,
  settledOutcomes,
  completedEvents,
} from './event-helpers';
import { restoreObjects } from './faulty-env';
import { burst, quiet } from './helpers';
import { threeDsObject } from './projection-helpers';
import { transaction } from './threeds-helpers';
import {
  expectValidMessages,
  issuerAnswers,
  lastAres,
  liveBody,
  liveHarness,
  liveJson,
  liveStep,
  verifyBodyOf,
  type Json,
} from './live-helpers';
import type { StorageHarness } from './faulty-env';

/**
 * Decoupled authentication in `live` (docs/threeds.md "Decoupled"; CONTRACT §12), against the
 * fake provider: an AReq that allows it carries threeDSRequestorDecReqInd Y and the time; the
 * fake's ARes D (card …75: the RReq says Y, …76: N, …77: never; docs/fake-3ds-server.md) answers
 * `decoupled`; the transaction's object fetches the RReq when verification asks or its watch
 * looks, records it once and sends the event once; past expiresAt with none, `unavailable`.
 */

afterEach(async () => {
  vi.restoreAllMocks();
  restoreObjects();
  await restoreTransport();
});

async function decoupled(h: StorageHarness, suffix: string, maxMinutes = 30): Promise<{ body: Json; answer: Json }> {
  const body = liveBody(suffix, { browser: true, decoupledMinutes: maxMinutes });
  const answer = await liveJson(h, 'authenticate', body);
  return { body, answer };
}

describe('decoupled authentication, in live against the fake provider', () => {
  it('sends DecReqInd Y with the time, answers decoupled for an ARes D, and verification answers decoupled until the RReq', async () => {
    const h = liveHarness();
    // …2077: no RReq ever (…2075's comes 3 s after the ARes: a slow machine could see it here).
    const { body, answer } = await decoupled(h, '2077');
    expect(answer).toMatchObject({
      outcome: 'decoupled',
      transactionReference: body.transactionReference,
      authentication: { version: '2.2.0' },
      challenge: { reference: expect.stringMatching(/^[A-Za-z0-9]{20}$/) },
      decoupled: { expiresAt: expect.any(String) },
    });
    expect(answer.challenge.url).toBeUndefined();
    const saw = await expectValidMessages(lastAres(h).threeDSServerTransID as string);
    expect(saw.areq).toMatchObject({ threeDSRequestorDecReqInd: 'Y', threeDSRequestorDecMaxTime: '00030' });
    expect(lastAres(h).transStatus).toBe('D');
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(answer);
    // The RReq comes when the cardholder confirms, not as a page returns: the provider, without
    // it, is asked once (not again and again, as after a challenge), and verification answers at once.
    expect(h.calls.filter((c) => c.store === 'provider' && c.op === 'postauth')).toHaveLength(1);
    expect((await transaction(body.transactionReference as string, { via: (r) => h.fetch(r) })).state).toBe(
      'decoupled',
    );
  });

  it.each([
    ['2075', 'Y', 'authenticated'],
    ['2076', 'N', 'authenticationFailed'],
  ] as const)(
    'card …%s: the RReq (%s) reaches 20 verifications at once as one result, GET and the event once',
    async (suffix, result, outcome) => {
      const receiver = await receivingAtTestEndpoint();
      const h = liveHarness();
      const { body, answer } = await decoupled(h, suffix);
      const reference = body.transactionReference as string;
      await issuerAnswers(h, result);
      const verified = await burst(20, () =>
        liveStep(h, 'verification', verifyBodyOf(body, answer)).then((r) => r.json<Json>()),
      );
      expect(verified[0]!.outcome).toBe(outcome);
      for (const v of verified) expect(v).toEqual(verified[0]);
      // One fetch of the RReq, shared (the object owns it).
      expect(h.calls.filter((c) => c.store === 'provider' && c.op === 'postauth').length).toBe(1);
      expect((await transaction(reference, { via: (r) => h.fetch(r) })).result).toEqual(verified[0]);
      expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual([outcome]);
    },
  );

  it('the object’s watch fetches the RReq nobody asked for, from its alarm', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const { body } = await decoupled(h, '2075');
    const reference = body.transactionReference as string;
    await issuerAnswers(h, 'Y');
    // The watch's next look is due (moved, not waited for): the alarm asks the provider.
    await runInDurableObject(threeDsObject(reference), (_o, state) => {
      state.storage.sql.exec('DELETE FROM live_watch');
      state.storage.sql.exec(
        "UPDATE live_challenge SET data = json_set(data, '$.aresAt', ?)",
        Date.now() - 10 * 60_000,
      );
    });
    await runDurableObjectAlarm(threeDsObject(reference));
    await receiver.until(() => completedEvents(receiver, reference).length > 0);
    expect(completedEvents(receiver, reference).map((e) => e.data.outcome)).toEqual(['authenticated']);
  });

  it('card …2077 (no RReq ever): decoupled until expiresAt, then unavailable (status U) for good, even when the issuer answers after', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const { body, answer } = await decoupled(h, '2077', 1);
    const reference = body.transactionReference as string;
    expect((await liveJson(h, 'verification', verifyBodyOf(body, answer))).outcome).toBe('decoupled');
    // The decoupled time and the provider's retention are over (moved, not waited for).
    await runInDurableObject(threeDsObject(reference), (_o, state) => {
      state.storage.sql.exec(
        "UPDATE live_challenge SET data = json_set(data, '$.decoupled.expiresAt', ?)",
        Date.now() - 6 * 60_000,
      );
    });
    const first = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(first).toMatchObject({ outcome: 'unavailable', status: 'U' });
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(first);
    // The issuer answers Y too late: its RReq is at the provider now, and nothing changes.
    await issuerAnswers(h, 'Y');
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(first);
    await runDurableObjectAlarm(threeDsObject(reference));
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(first);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).result).toEqual(first);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['unavailable']);
  });

  it('past expiresAt, the ask that would end it waits the pauses: an RReq arriving meanwhile is the result, not unavailable', async () => {
    const h = liveHarness();
    const { body, answer } = await decoupled(h, '2077', 1);
    const reference = body.transactionReference as string;
    // The decoupled time is over (moved, not waited for), within the provider's retention.
    await runInDurableObject(threeDsObject(reference), (_o, state) => {
      state.storage.sql.exec(
        "UPDATE live_challenge SET data = json_set(data, '$.decoupled.expiresAt', ?)",
        Date.now() - 1_000,
      );
    });
    // The provider has no RReq at the first ask; the ACS's, sent at its own deadline, lands
    // right after it (the control route, from inside that first ask): the next ask finds it.
    const provider = objectProvider.of;
    let asks = 0;
    objectProvider.of = (e) => {
      const real = provider(e)!;
      return new Proxy(real, {
        get: (target, p) =>
          p === 'result'
            ? async (id: string) => {
                asks++;
                const first = await target.result(id);
                if (asks === 1) await issuerAnswers(h, 'Y');
                return first;
              }
            : (Reflect.get(target, p, target) as unknown),
      });
    };
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified).toMatchObject({ outcome: 'authenticated', status: 'Y' });
    expect(asks).toBeGreaterThanOrEqual(2);
  });

  it('the issuer’s RReq arriving while 20 verifications are under way gives one result everywhere, the event once', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const { body, answer } = await decoupled(h, '2077');
    const reference = body.transactionReference as string;
    // The issuer answers N (the control route) while the verifications go out: the first ten
    // leave at once, the other ten once the RReq is at the provider.
    const answered = issuerAnswers(h, 'N');
    const answers = await burst(20, async (i) => {
      if (i >= 10) await answered;
      return liveJson(h, 'verification', verifyBodyOf(body, answer));
    });
    const results = answers.filter((a) => a.outcome !== 'decoupled');
    expect(results.length).toBeGreaterThanOrEqual(10);
    for (const a of results) expect(a).toEqual(results[0]);
    const final = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(final.outcome).toBe('authenticationFailed');
    for (const a of results) expect(a).toEqual(final);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).result).toEqual(final);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticationFailed']);
  });

  it('the RReq fetch failing: verification answers 503 with Retry-After and records nothing; the next one has the result, the event once', async () => {
    quiet();
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const { body, answer } = await decoupled(h, '2077');
    const reference = body.transactionReference as string;
    await issuerAnswers(h, 'Y');
    h.failOn({ of: 'provider', op: 'postauth', nth: 0, when: 'before' });
    const failed = await liveStep(h, 'verification', verifyBodyOf(body, answer));
    expect(failed.status).toBe(503);
    expect(failed.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).state).toBe('decoupled');
    await settledOwner(threeDsObject(reference));
    expect(completedEvents(receiver, reference)).toEqual([]);
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toMatchObject({ outcome: 'authenticated' });
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticated']);
  });

  it('the watch’s look failing (the provider down) records nothing; its next look records the RReq, the event once', async () => {
    quiet();
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const { body } = await decoupled(h, '2077');
    const reference = body.transactionReference as string;
    const owner = threeDsObject(reference);
    await issuerAnswers(h, 'Y');
    const lookDue = () =>
      runInDurableObject(owner, (_o, state) => {
        state.storage.sql.exec('DELETE FROM live_watch');
        state.storage.sql.exec(
          "UPDATE live_challenge SET data = json_set(data, '$.aresAt', ?)",
          Date.now() - 10 * 60_000,
        );
      });
    const provider = objectProvider.of;
    objectProvider.of = (e) => ({ ...provider(e)!, result: () => Promise.reject(new Error('provider down')) });
    await lookDue();
    await runDurableObjectAlarm(owner);
    const watch = await runInDurableObject(owner, (_o, state) =>
      state.storage.sql.exec<{ failed: number }>('SELECT failed FROM live_watch').one(),
    );
    expect(watch.failed).toBe(1);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).state).toBe('decoupled');
    await settledOwner(owner);
    expect(completedEvents(receiver, reference)).toEqual([]);
    objectProvider.of = provider;
    await lookDue();
    await runDurableObjectAlarm(owner);
    expect(await settledOutcomes(receiver, reference, owner)).toEqual(['authenticated']);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).result).toMatchObject({
      outcome: 'authenticated',
    });
  });

  it('without a decoupled block the AReq does not allow it, and the card is challenged as usual', async () => {
    const h = liveHarness();
    const answer = await liveJson(h, 'authenticate', liveBody('2075', { browser: true }));
    expect(answer.outcome).toBe('challenged');
    const saw = await expectValidMessages(lastAres(h).threeDSServerTransID as string);
    expect(saw.areq.threeDSRequestorDecReqInd).toBeUndefined();
  });

  it('a card whose issuer has 2.1.0 only: 400 at $.decoupled, nothing sent', async () => {
    const h = liveHarness();
    const response = await liveStep(h, 'authenticate', liveBody('1075', { browser: true, decoupledMinutes: 30 }));
    expect(response.status).toBe(400);
    const error = await response.json<Json>();
    expect(error.validationErrors).toEqual([expect.objectContaining({ jsonPath: '$.decoupled' })]);
    expect(h.calls.filter((c) => c.store === 'provider' && c.op === 'auth')).toEqual([]);
  });
});
