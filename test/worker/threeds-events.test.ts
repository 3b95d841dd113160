import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { AREQ_ANSWER_WINDOW_MS } from '../../src/threeds/live/live-state';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settingsOf } from '../../src/config/settings';
import {
  objectProvider,
  RESULT_POLL_MS,
  RESULT_POLL_RETRY_MS as RESULT_RETRY,
} from '../../src/threeds/live/challenge-watch';
import { threeDsServerOf } from '../../src/threeds/live/three-ds-server';
import { eventSink } from '../../src/events/event-log-api';
import { objectStorage } from '../../src/storage/object-storage';
import { restoreObjects } from './faulty-env';
import { webhookProblems } from './openapi-compat';
import { burst, quiet } from './helpers';
import { threeDsObject } from './projection-helpers';
import {
  DEFAULT_SINK,
  failingAppends,
  receivingAtTestEndpoint as receiving,
  restoreSink,
  restoreTransport,
  rowsIn,
  settledOwner,
  TEST_ENDPOINT as ENDPOINT,
  type Receiver,
  type Received,
} from './event-helpers';
import {
  authenticateBody,
  cardFront,
  completeChallenge,
  MASTERCARD_PAN,
  threeDs,
  transaction,
  VISA_PAN,
  verifyBody,
} from './threeds-helpers';
import {
  creqOf,
  deadlinesFor,
  endChallenge,
  fake,
  liveBody,
  liveHarness,
  liveJson,
  liveStep,
  verifyBodyOf,
} from './live-helpers';

/**
 * `threeDS.authentication.completed` (docs/events.md "Types"): the transaction's object stages it
 * in the same synchronous block that records the final outcome (authenticate's frictionless
 * answer; the challenge's one result, however it ended, the alarm ending one left open; live's
 * answer, result or lost AReq), once per transaction, and sends it to the merchant's event log
 * from its alarm, retried until the log has it. Its data is the outcome as GET and `verification`
 * show it, without `authenticationValue`. The endpoint is an in-test receiver (`eventTransport`).
 */

type Json = Record<string, any>;

const COMPLETED = 'threeDS.authentication.completed';

const DEFAULT_PROVIDER = { ...objectProvider };

afterEach(async () => {
  Object.assign(objectProvider, DEFAULT_PROVIDER);
  restoreSink();
  await restoreTransport();
  restoreObjects();
  vi.restoreAllMocks();
});

/** The transaction's object (test-merchant, entity default). */
const guardOf = threeDsObject;

/** The completed events of a transaction the endpoint received, in order of arrival. */
function eventsOf(receiver: Receiver, reference: string): Received[] {
  return receiver.received.filter(
    (r) => r.url === ENDPOINT && r.event.eventType === COMPLETED && r.event.data?.transactionReference === reference,
  );
}

/** Waits for the transaction's event, then lets every append and delivery in flight end: exactly one. */
async function theEvent(receiver: Receiver, reference: string): Promise<Received> {
  await receiver.until(() => eventsOf(receiver, reference).length > 0);
  await settled(reference);
  const events = eventsOf(receiver, reference);
  expect(events.map((r) => r.event.eventId)).toHaveLength(1);
  // As the OpenAPI document's webhooks entry describes it.
  expect(webhookProblems(events[0]!.headers, events[0]!.body)).toEqual([]);
  return events[0]!;
}

/** Until the transaction's object has nothing staged, and the log nothing in flight. */
const settled = (reference: string): Promise<void> => settledOwner(guardOf(reference));

/** What an event carries of an answer: everything but `authenticationValue`. */
function withoutValue(answer: Json): Json {
  const { authenticationValue: _v, ...authentication } = answer.authentication ?? {};
  return answer.authentication ? { ...answer, authentication } : answer;
}

function expectSignedWithoutCard(r: Received, cardNumber = VISA_PAN): void {
  expect(webhookProblems(r.headers, r.body)).toEqual([]);
  expect(r.verifiedWith).toHaveLength(1);
  expect(r.body).not.toContain(cardNumber);
  expect(r.body).not.toContain('authenticationValue');
}

describe('threeDS.authentication.completed, in test', () => {
  it('carries an exemption’s result, and is sent for a 3RI like any transaction', async () => {
    const receiver = await receiving();
    const exempt = authenticateBody({ cardHolderName: '3ds2-exemption-granted', exemption: 'TRA' });
    const exemptAnswer = await (await threeDs('authenticate', exempt)).json<Json>();
    expect(exemptAnswer.exemption.applied).toBe(true);
    const e = await theEvent(receiver, exempt.transactionReference as string);
    expect(e.event.data).toEqual(withoutValue(exemptAnswer));

    const prior = authenticateBody({ cardHolderName: '3ds2-frictionless-identified', cardNumber: MASTERCARD_PAN });
    const recurring = { type: 'recurring', expiry: `${new Date().getUTCFullYear() + 1}-01-31`, frequencyDays: 30 };
    expect((await threeDs('authenticate', { ...prior, recurring })).status).toBe(200);
    const reference = `3ri-${prior.transactionReference as string}`;
    const threeRi = await threeDs('merchantInitiated', {
      transactionReference: reference,
      merchant: { entity: 'default' },
      priorTransactionReference: prior.transactionReference,
      type: 'recurring',
      instruction: { value: { amount: 100, currency: 'GBP' }, paymentInstrument: cardFront(undefined, MASTERCARD_PAN) },
    });
    const answer = await threeRi.json<Json>();
    expect(answer.outcome).toBe('authenticated');
    const r = await theEvent(receiver, reference);
    expect(r.event.data).toEqual(withoutValue(answer));
    expectSignedWithoutCard(r, MASTERCARD_PAN);
  });

  it('is sent once for a frictionless authenticate, even for 20 identical requests at once, with its answer less authenticationValue', async () => {
    const receiver = await receiving();
    const body = authenticateBody({ cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answers = await burst(20, () => threeDs('authenticate', body));
    const answer = await answers[0]!.json<Json>();
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(answer.authentication.authenticationValue).toEqual(expect.any(String));
    const r = await theEvent(receiver, reference);
    const objectId = guardOf(reference).id.toString();
    expect(r.event).toEqual({
      eventId: expect.stringMatching(new RegExp(`^3ds_${objectId}_\\d+$`)),
      eventType: COMPLETED,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      subject: expect.any(String),
      sequence: expect.any(Number),
      merchant: { entity: 'default' },
      data: withoutValue(answer),
    });
    expectSignedWithoutCard(r);
    expect(r.event.data).toEqual(withoutValue((await transaction(reference)).result));
  });

  it('is sent when the challenge passes on its page, before anyone calls verification, with what verification then answers', async () => {
    const receiver = await receiving();
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    expect(answer.outcome).toBe('challenged');
    expect(await completeChallenge(answer.challenge.jwt as string, ['1234'])).toContain('Payment verified');
    const r = await theEvent(receiver, reference);
    expectSignedWithoutCard(r);
    // 20 verifications at once change nothing: no second event.
    const verified = await burst(20, () => threeDs('verification', verifyBody(reference, answer.challenge.reference)));
    const result = await verified[0]!.json<Json>();
    expect(result.outcome).toBe('authenticated');
    expect(r.event.data).toEqual(withoutValue(result));
    await settled(reference);
    expect(eventsOf(receiver, reference)).toHaveLength(1);
  });

  it('is sent when verification ends an open challenge as not completed, once for 20 at once', async () => {
    const receiver = await receiving();
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    const verified = await burst(20, () => threeDs('verification', verifyBody(reference, answer.challenge.reference)));
    const results = await Promise.all(verified.map((r) => r.json<Json>()));
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(results[0]!.outcome).toBe('authenticationFailed');
    const r = await theEvent(receiver, reference);
    expect(r.event.data).toEqual(withoutValue(results[0]!));
  });

  it('is sent for a challenge the cardholder left open, from the alarm at its deadline, with nobody calling', async () => {
    const receiver = await receiving();
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    const guard = guardOf(reference);
    // Its 10 minutes have passed (moved, not waited for); the object's alarm is due.
    await runInDurableObject(guard, (_g, state) => {
      state.storage.sql.exec('UPDATE challenge SET expires_at = ?', Date.now() - 1);
    });
    await settled(reference);
    expect(eventsOf(receiver, reference)).toHaveLength(0);
    await runDurableObjectAlarm(guard);
    const r = await theEvent(receiver, reference);
    expect(r.event.data.outcome).toBe('authenticationFailed');
    // GET and verification say the same, after the fact.
    const found = await transaction(reference);
    expect(found.state).toBe('completed');
    expect(r.event.data).toEqual(withoutValue(found.result));
    const verified = await threeDs('verification', verifyBody(reference, answer.challenge.reference));
    expect(r.event.data).toEqual(withoutValue(await verified.json<Json>()));
  });

  it("sets the object's alarm to the open challenge's deadline (nothing else is due before it)", async () => {
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    expect((await threeDs('authenticate', body)).status).toBe(200);
    const guard = guardOf(reference);
    const deadline = await runInDurableObject(
      guard,
      (_g, state) =>
        state.storage.sql.exec<{ expires_at: number }>('SELECT expires_at FROM challenge').one().expires_at,
    );
    // Once the session record's KV copy has been written (its own alarm time), the alarm is the deadline.
    await expect
      .poll(() => runInDurableObject(guard, (_g, state) => state.storage.getAlarm()), { timeout: 10_000 })
      .toBe(deadline);
  });

  it('is sent for a challenge still open when the session ends: it ends as expired before the state goes', async () => {
    const receiver = await receiving();
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    expect((await threeDs('authenticate', body)).status).toBe(200);
    const guard = guardOf(reference);
    // The deadline's alarm never ran (late, failing): the session's end comes first.
    await runInDurableObject(guard, (_g, state) => {
      state.storage.sql.exec('UPDATE challenge SET expires_at = ?', Date.now() - 3_700_000);
      state.storage.sql.exec('UPDATE session SET expires_at = ?', Date.now() - 120_000);
    });
    await runDurableObjectAlarm(guard);
    const r = await theEvent(receiver, reference);
    expect(r.event.data.outcome).toBe('authenticationFailed');
    const sessions = await runInDurableObject(guard, (_g, state) => rowsIn(state, 'session'));
    expect(sessions).toBe(0);
  });

  it('is not sent while the transaction is only initialized or challenged', async () => {
    const receiver = await receiving();
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    expect((await threeDs('authenticate', body)).status).toBe(200);
    expect((await transaction(reference)).state).toBe('challenged');
    await settled(reference);
    expect(eventsOf(receiver, reference)).toHaveLength(0);
    const staged = await runInDurableObject(guardOf(reference), (_g, state) =>
      state.storage.sql.exec<{ staged: number }>('SELECT staged FROM event_scope').one(),
    );
    expect(staged.staged).toBe(0);
  });
});

describe("the transaction's appends to the event log, failing", () => {
  it.each([
    ['refused three times', 'refused'],
    ['hanging past its deadline', 'hang'],
    ['landing, its answer lost', 'late'],
  ] as const)('%s: retried from the alarm, and delivered exactly once', async (_name, how) => {
    quiet();
    const receiver = await receiving();
    objectStorage.retryBaseMs = 20;
    if (how === 'hang') objectStorage.timeoutMs = 50;
    const appends = failingAppends(how, how === 'refused' ? 3 : 1);
    const body = authenticateBody({ cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    const response = await threeDs('authenticate', body);
    expect(response.status).toBe(200);
    const answer = await response.json<Json>();
    const r = await theEvent(receiver, body.transactionReference as string);
    expect(appends.faults).toBe(how === 'refused' ? 3 : 1);
    expect(r.event.data).toEqual(withoutValue(answer));
  });

  it('outlive the session: an event still staged when the session is wiped is sent after', async () => {
    quiet();
    const receiver = await receiving();
    objectStorage.retryBaseMs = 20;
    let open = false;
    let refused = 0;
    eventSink.append = (e, username, events) => {
      if (open) return DEFAULT_SINK.append(e, username, events);
      refused++;
      return Promise.reject(new Error('closed'));
    };
    const body = authenticateBody({ cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    const guard = guardOf(reference);
    // The session ends and the alarm wipes it, while the appends still fail.
    await runInDurableObject(guard, (_g, state) => {
      state.storage.sql.exec('UPDATE session SET expires_at = ?', Date.now() - 120_000);
    });
    // With a 20 ms backoff the object's own alarm runs all the time, so the wipe is either
    // that alarm's or the one run here (which finds no alarm set when the other has just run).
    const left = () =>
      runInDurableObject(guard, (_g, state) => ({
        sessions: rowsIn(state, 'session'),
        events: rowsIn(state, 'events_out'),
      }));
    await vi.waitFor(
      async () => {
        await runDurableObjectAlarm(guard);
        expect(await left()).toEqual({ sessions: 0, events: 1 });
      },
      { timeout: 10_000, interval: 50 },
    );
    // Nothing reached the log before the wipe: what is sent next comes from what outlived it.
    expect(refused).toBeGreaterThan(0);
    expect(eventsOf(receiver, reference)).toHaveLength(0);
    // The log is back: the object's own alarm (still set, with backoff) sends it.
    open = true;
    const r = await theEvent(receiver, reference);
    expect(r.event.data).toEqual(withoutValue(answer));
  });
});

describe('threeDS.authentication.completed, in live', () => {
  it('is sent for a frictionless answer, with the answer less authenticationValue', async () => {
    const receiver = await receiving();
    const h = liveHarness();
    const body = liveBody('2000', { browser: true });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('authenticated');
    const r = await theEvent(receiver, body.transactionReference as string);
    expect(r.event.data).toEqual(withoutValue(answer));
    expect(r.body).not.toContain('authenticationValue');
  });

  it('is sent once the challenge result is recorded, with what verification answers', async () => {
    const receiver = await receiving();
    const h = liveHarness();
    const body = liveBody('2172', { browser: true, windowSize: '500x600' });
    const reference = body.transactionReference as string;
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('challenged');
    await settled(reference);
    expect(eventsOf(receiver, reference)).toHaveLength(0);
    await endChallenge(h, answer, 'Y');
    const r = await theEvent(receiver, reference);
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified.outcome).toBe('authenticated');
    expect(r.event.data).toEqual(withoutValue(verified));
  });

  it('is sent as unavailable from the alarm when the object was reset after sending the AReq, with nobody retrying', async () => {
    quiet();
    const receiver = await receiving();
    const reference = `lost-${crypto.randomUUID().slice(0, 8)}`;
    const guard = guardOf(reference);
    const h = liveHarness();
    // The provider never answers: the object's reset ends the run, with the AReq sent.
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'hang' });
    const first = liveStep(h, 'authenticate', liveBody('2100', { browser: true, reference }));
    await vi.waitFor(() => expect(h.count((c) => c.store === 'provider' && c.op === 'auth')).toBe(1), {
      timeout: 30_000,
      interval: 20,
    });
    await abortAllDurableObjects();
    expect([500, 503]).toContain((await first).status); // the test tool's abort reads as the object's exception
    // The alarm is set to the end of the AReq's answer window...
    const { alarm, sentAt } = await runInDurableObject(guard, async (_g, state) => ({
      alarm: await state.storage.getAlarm(),
      sentAt: state.storage.sql.exec<{ sending_at: number }>('SELECT sending_at FROM live_auth').one().sending_at,
    }));
    expect(alarm).toBe(sentAt + AREQ_ANSWER_WINDOW_MS);
    // ...and when it fires, the run's instance is gone: lost, and its event leaves, with nobody calling.
    await runDurableObjectAlarm(guard);
    const r = await theEvent(receiver, reference);
    expect(r.event.data).toMatchObject({ outcome: 'unavailable', transactionReference: reference });
    expect(h.count((c) => c.store === 'provider' && c.op === 'auth')).toBe(1);
  });

  it('is sent as unavailable for an AReq whose answer never came', async () => {
    const receiver = await receiving();
    const h = liveHarness(deadlinesFor('hang'));
    const body = liveBody('2100', { browser: true });
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'hang' });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer).toMatchObject({ outcome: 'unavailable' });
    const r = await theEvent(receiver, body.transactionReference as string);
    expect(r.event.data).toEqual(withoutValue(answer));
  });

  describe('a challenge whose page never posted its result (the cardholder closed the tab)', () => {
    /** The objects run with ENVIRONMENT=test: in these tests they reach the fake provider as live would. */
    function objectsReachTheProvider(calls: string[] = []): string[] {
      objectProvider.of = (e) => {
        const provider = threeDsServerOf(e, settingsOf({ ...e, ENVIRONMENT: 'live' }).threeDsServer!);
        return {
          ...provider,
          result: (id) => {
            calls.push(id);
            return provider.result(id);
          },
        };
      };
      return calls;
    }

    /** A challenged live transaction; `ended` says how the cardholder ended it at the ACS, if they did. */
    async function abandoned(ended?: 'Y' | 'N') {
      const h = liveHarness();
      const body = liveBody('2172', { browser: true, windowSize: '500x600' });
      const reference = body.transactionReference as string;
      const answer = await liveJson(h, 'authenticate', body);
      expect(answer.outcome).toBe('challenged');
      if (ended) {
        // The ACS sends its RReq to the provider; the final page's post of cres never reaches us.
        const control = await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ result: ended }),
        });
        expect(control.status).toBe(200);
      }
      return { h, body, reference, answer, guard: guardOf(reference) };
    }

    /** Time passes for the challenge: its ARes and the watch's last look move `ms` into the past. */
    async function later(guard: ReturnType<typeof guardOf>, ms: number): Promise<void> {
      await runInDurableObject(guard, (_g, state) => {
        const row = state.storage.sql.exec<{ data: string }>('SELECT data FROM live_challenge').one();
        const data = JSON.parse(row.data) as Json;
        const aresAt = (data.aresAt as number) - ms;
        state.storage.sql.exec('UPDATE live_challenge SET data = ?', JSON.stringify({ ...data, aresAt }));
        state.storage.sql.exec('UPDATE live_watch SET asked_at = asked_at - ?', ms);
      });
    }

    it("is sent from the object's own look at the provider: the RReq of a cardholder who passed", async () => {
      const receiver = await receiving();
      const { h, body, reference, answer, guard } = await abandoned('Y');
      // After the harness (which routes the objects' provider calls): the watch's own seam.
      const calls = objectsReachTheProvider();
      // Before its first look is due, the alarm asks nothing.
      await runDurableObjectAlarm(guard);
      expect(calls).toEqual([]);
      await later(guard, RESULT_POLL_MS + 1_000);
      await runDurableObjectAlarm(guard);
      expect(calls).toHaveLength(1);
      const r = await theEvent(receiver, reference);
      expect(r.event.data.outcome).toBe('authenticated');
      // verification then answers the same result, recorded once, without asking the provider again.
      const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
      expect(r.event.data).toEqual(withoutValue(verified));
      expect(h.count((c) => c.store === 'provider' && c.op === 'result')).toBe(0);
      expectSignedWithoutCard(r, (body.instruction as Json).paymentInstrument.cardNumber as string);
    });

    it('keeps looking while the provider has no RReq or cannot be reached, then records what comes', async () => {
      quiet();
      const receiver = await receiving();
      const { reference, guard, answer } = await abandoned();
      // After the harness (which routes the objects' provider calls): the watch's own seam.
      const calls = objectsReachTheProvider();
      await later(guard, RESULT_POLL_MS + 1_000);
      await runDurableObjectAlarm(guard); // no RReq yet: nothing recorded
      expect(calls).toHaveLength(1);
      const provider = objectProvider.of;
      objectProvider.of = (e) => ({ ...provider(e)!, result: () => Promise.reject(new Error('provider down')) });
      await later(guard, RESULT_POLL_MS + 1_000);
      await runDurableObjectAlarm(guard); // the provider is down: nothing recorded, asked again sooner
      expect(calls).toHaveLength(1);
      const watch = await runInDurableObject(guard, (_g, state) =>
        state.storage.sql.exec<{ failed: number }>('SELECT failed FROM live_watch').one(),
      );
      expect(watch.failed).toBe(1);
      objectProvider.of = provider;
      await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ result: 'N' }),
      });
      await later(guard, RESULT_RETRY);
      await runDurableObjectAlarm(guard);
      const r = await theEvent(receiver, reference);
      expect(r.event.data.outcome).toBe('authenticationFailed');
      expect(calls).toHaveLength(2);
    });

    it("sets the object's alarm to the watch's first look", async () => {
      const { guard } = await abandoned();
      const { alarm, aresAt } = await runInDurableObject(guard, async (_g, state) => ({
        alarm: await state.storage.getAlarm(),
        aresAt: (
          JSON.parse(state.storage.sql.exec<{ data: string }>('SELECT data FROM live_challenge').one().data) as Json
        ).aresAt as number,
      }));
      expect(alarm).toBe(aresAt + RESULT_POLL_MS);
    });

    it('is sent, as not completed, for a challenge still open when the session ends', async () => {
      const receiver = await receiving();
      const { reference, guard } = await abandoned();
      // After the harness (which routes the objects' provider calls): the watch's own seam.
      objectsReachTheProvider();
      await later(guard, 16 * 60_000);
      await runInDurableObject(guard, (_g, state) => {
        state.storage.sql.exec('UPDATE session SET expires_at = ?', Date.now() - 120_000);
      });
      await runDurableObjectAlarm(guard);
      const r = await theEvent(receiver, reference);
      expect(r.event.data.outcome).toBe('authenticationFailed');
    });

    it('ends as not completed once no RReq can come, without asking', async () => {
      const receiver = await receiving();
      const { h, body, reference, answer, guard } = await abandoned();
      // After the harness (which routes the objects' provider calls): the watch's own seam.
      const calls = objectsReachTheProvider();
      // The 10 minutes of the challenge and the provider's 300 s are over.
      await later(guard, 16 * 60_000);
      await runDurableObjectAlarm(guard);
      expect(calls).toEqual([]);
      const r = await theEvent(receiver, reference);
      expect(r.event.data.outcome).toBe('authenticationFailed');
      expect(r.event.data).toEqual(withoutValue(await liveJson(h, 'verification', verifyBodyOf(body, answer))));
    });
  });
});
