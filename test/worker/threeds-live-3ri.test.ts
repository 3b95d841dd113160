import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { burst, quiet } from './helpers';
import type { StorageHarness } from './faulty-env';
import { threeDsObject } from './projection-helpers';
import {
  card,
  deadlinesFor,
  endChallenge,
  verifyBodyOf,
  expectValidMessages,
  fakeTransaction,
  liveBody,
  liveHarness,
  liveJson,
  liveStep,
  newReference,
  type Json,
} from './live-helpers';
import { cardFront, transaction } from './threeds-helpers';
import { failPrior, restorePrior } from './prior-faults';

/**
 * merchantInitiated in `live` (docs/threeds.md "Series and 3RI"): the 3RI runs in its own
 * transaction object, which holds its use of the prior's series; the prior's object counts before
 * any AReq; one AReq per 3RI, through the fake 3DS Server, whose ACS checks the prior reference
 * (an acsTransID it answered Y or A for the same card) and every field of the version.
 * Cards: Mastercard 531265…, last four digits 2100 (2.2.0, frictionless Y), 3100 (2.3.1).
 */

const NEXT_YEAR = `${new Date().getUTCFullYear() + 1}-06-30`;
const RECURRING = { type: 'recurring', expiry: NEXT_YEAR, frequencyDays: 30 };
const MC = (suffix: string) => card(suffix, '531265');

afterEach(() => restorePrior());

/** A live first payment of a series (2500 minor units): Y. */
async function firstPayment(h: StorageHarness, cardNumber = MC('2100')): Promise<{ body: Json; answer: Json }> {
  const body: Json = { ...liveBody('2100', { browser: true, cardNumber, amount: 2500 }), recurring: RECURRING };
  const answer = await liveJson(h, 'authenticate', body);
  expect(answer.status).toBe('Y');
  return { body, answer };
}

function threeRiBody(prior: string, o: { amount?: number; type?: string; cardNumber?: string } = {}): Json {
  return {
    transactionReference: newReference(),
    merchant: { entity: 'default' },
    priorTransactionReference: prior,
    type: o.type ?? 'recurring',
    instruction: {
      value: { amount: o.amount ?? 1000, currency: 'GBP' },
      paymentInstrument: cardFront(undefined, o.cardNumber ?? MC('2100')),
    },
  };
}

/** The 3RI AReqs the provider was sent (through the harness). */
const threeRiAReqs = (h: StorageHarness) =>
  h.providerAnswers.filter((a) => a.op === 'auth' && a.body.messageType !== 'Erro' && a.body.transStatus !== undefined);

/** The uses the prior's object counts (white-box). */
function usesOf(reference: string): Promise<number> {
  return runInDurableObject(
    threeDsObject(reference),
    (_o, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM series_uses').one().n,
  );
}

describe('merchantInitiated in live', () => {
  it('sends a 3RI AReq naming the prior, and answers ECI 07 for a Mastercard recurring 3RI; GET shows it', async () => {
    const h = liveHarness();
    const { body: first, answer: prior } = await firstPayment(h);
    const body = threeRiBody(first.transactionReference);
    const answer = await liveJson(h, 'merchantInitiated', body);
    expect(answer).toMatchObject({
      outcome: 'authenticated',
      status: 'Y',
      transactionReference: body.transactionReference,
      authentication: { version: '2.2.0', eci: '07' },
    });
    expect(answer.authentication.authenticationValue).toEqual(expect.any(String));
    const preauths = h.providerAnswers.filter((a) => a.op === 'preauth');
    const saw = await expectValidMessages(preauths.at(-1)!.body.threeDSServerTransID);
    expect(saw.areq).toMatchObject({
      deviceChannel: '03',
      messageCategory: '01',
      threeRIInd: '01',
      messageVersion: '2.2.0',
      purchaseAmount: '1000',
      threeDSRequestorPriorAuthenticationInfo: {
        threeDSReqPriorRef: prior.acsTransactionId,
        threeDSReqPriorAuthMethod: '01',
      },
    });
    for (const field of ['browserUserAgent', 'notificationURL', 'threeDSCompInd'])
      expect(saw.areq).not.toHaveProperty(field);
    const got = await transaction(body.transactionReference, { via: (r) => h.fetch(r) });
    expect(got).toMatchObject({
      state: 'completed',
      result: { outcome: 'authenticated', authentication: { eci: '07' } },
    });
  });

  it('20 concurrent 3RIs of one series: exactly what fits is sent and authenticated; the rest never reach the provider', async () => {
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const before = threeRiAReqs(h).length;
    const answers = await burst(20, () => liveStep(h, 'merchantInitiated', threeRiBody(first.transactionReference)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(18);
    expect(threeRiAReqs(h).length - before).toBe(2);
    expect(await usesOf(first.transactionReference)).toBe(2);
  });

  it('20 identical 3RIs: one AReq, one answer, counted once', async () => {
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const body = threeRiBody(first.transactionReference, { amount: 1000 });
    const before = threeRiAReqs(h).length;
    const answers = await burst(20, () => liveStep(h, 'merchantInitiated', body).then((r) => r.text()));
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0]!).outcome).toBe('authenticated');
    expect(threeRiAReqs(h).length - before).toBe(1);
    expect(await usesOf(first.transactionReference)).toBe(1);
    expect(
      (await liveStep(h, 'merchantInitiated', threeRiBody(first.transactionReference, { amount: 1500 }))).status,
    ).toBe(200);
  });

  it('refuses before any AReq: a Visa recurring 3RI at $.type, an amount beyond the series at its path', async () => {
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const sent = h.count((c) => c.op === 'preauth');
    const over = await liveJson(h, 'merchantInitiated', threeRiBody(first.transactionReference, { amount: 2501 }), 400);
    expect(over.validationErrors[0].jsonPath).toBe('$.instruction.value.amount');
    const visa = await firstPayment(h, card('2100'));
    const refused = await liveJson(
      h,
      'merchantInitiated',
      threeRiBody(visa.body.transactionReference, { cardNumber: card('2100') }),
      400,
    );
    expect(refused.validationErrors[0].jsonPath).toBe('$.type');
    expect(h.count((c) => c.op === 'preauth')).toBe(sent + 1);
  });

  it('a 3RI the ACS does not authenticate gives its use back (the fake never challenges a 3RI: N)', async () => {
    const h = liveHarness();
    // A prior authenticated after a challenge (C, then Y: method 02); the same card's 3RI is answered N.
    const cardNumber = MC('2172');
    const first: Json = {
      ...liveBody('2172', { browser: true, cardNumber, amount: 2500, windowSize: '500x600' }),
      recurring: RECURRING,
    };
    const challenged = await liveJson(h, 'authenticate', first);
    expect(challenged.outcome).toBe('challenged');
    await endChallenge(h, challenged, 'Y');
    expect((await liveJson(h, 'verification', verifyBodyOf(first, challenged))).outcome).toBe('authenticated');
    const answer = await liveJson(
      h,
      'merchantInitiated',
      threeRiBody(first.transactionReference, { amount: 2500, cardNumber }),
    );
    expect(answer).toMatchObject({ outcome: 'authenticationFailed', status: 'N' });
    const saw = await fakeTransaction(
      h.providerAnswers.filter((a) => a.op === 'preauth').at(-1)!.body.threeDSServerTransID,
    );
    expect(saw.areq.threeDSRequestorPriorAuthenticationInfo.threeDSReqPriorAuthMethod).toBe('02');
    expect(await usesOf(first.transactionReference)).toBe(0);
  });

  it.each(['before', 'after', 'hang', 'late'] as const)(
    'the prior’s object call failing %s: 503 with Retry-After, no AReq; the retry sends one and counts once',
    async (when) => {
      quiet();
      const h = liveHarness();
      const { body: first } = await firstPayment(h);
      const body = threeRiBody(first.transactionReference, { amount: 1500 });
      const before = threeRiAReqs(h).length;
      failPrior('seriesUse', when);
      const failed = await liveStep(h, 'merchantInitiated', body);
      expect(failed.status).toBe(503);
      expect(failed.headers.get('Retry-After')).not.toBeNull();
      expect(threeRiAReqs(h).length - before).toBe(0);
      restorePrior();
      expect((await liveJson(h, 'merchantInitiated', body)).outcome).toBe('authenticated');
      expect(threeRiAReqs(h).length - before).toBe(1);
      expect(await usesOf(first.transactionReference)).toBe(1);
    },
  );

  it('preparing failing: 503, nothing sent; the retry completes', async () => {
    quiet();
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const body = threeRiBody(first.transactionReference);
    h.failOn({ of: 'provider', op: 'preauth', nth: 0, when: 'before', times: 2 });
    expect((await liveStep(h, 'merchantInitiated', body)).status).toBe(503);
    expect((await liveJson(h, 'merchantInitiated', body)).outcome).toBe('authenticated');
    expect(await usesOf(first.transactionReference)).toBe(1);
  });

  it('a live 3RI whose run failed and was never retried gives its use back when its session ends', async () => {
    quiet();
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const body = threeRiBody(first.transactionReference, { amount: 2500 });
    h.failOn({ of: 'provider', op: 'preauth', nth: 0, when: 'before', times: 2 });
    expect((await liveStep(h, 'merchantInitiated', body)).status).toBe(503);
    expect(await usesOf(first.transactionReference)).toBe(1);
    const object = threeDsObject(body.transactionReference);
    await runInDurableObject(object, (_o, state) => {
      state.storage.sql.exec('UPDATE session SET expires_at = ?', Date.now() - 120_000);
    });
    await runDurableObjectAlarm(object);
    expect(await usesOf(first.transactionReference)).toBe(0);
    expect(
      (await liveJson(h, 'merchantInitiated', threeRiBody(first.transactionReference, { amount: 2500 }))).outcome,
    ).toBe('authenticated');
  });

  it('an AReq that never reached the provider: 503, the use held; the retry sends it and authenticates', async () => {
    quiet();
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const body = threeRiBody(first.transactionReference, { amount: 2500 });
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'before' });
    expect((await liveStep(h, 'merchantInitiated', body)).status).toBe(503);
    expect(await usesOf(first.transactionReference)).toBe(1);
    expect((await liveJson(h, 'merchantInitiated', body)).outcome).toBe('authenticated');
    expect(await usesOf(first.transactionReference)).toBe(1);
  });

  it('an AReq whose answer was lost on the way back: the retry is refused by the provider (one AReq per transaction): unavailable, the use given back', async () => {
    quiet();
    const h = liveHarness();
    const { body: first } = await firstPayment(h);
    const body = threeRiBody(first.transactionReference, { amount: 2500 });
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'after' });
    expect((await liveStep(h, 'merchantInitiated', body)).status).toBe(503);
    const answer = await liveJson(h, 'merchantInitiated', body);
    expect(answer).toMatchObject({ outcome: 'unavailable' });
    expect(await liveJson(h, 'merchantInitiated', body)).toEqual(answer);
    expect(await usesOf(first.transactionReference)).toBe(0);
  });

  it.each(['hang', 'late'] as const)(
    'an AReq past the deadline (%s): unavailable for good, never sent again, and the use given back',
    async (when) => {
      quiet();
      const h = liveHarness(deadlinesFor(when));
      const { body: first } = await firstPayment(h);
      const body = threeRiBody(first.transactionReference, { amount: 2500 });
      h.failOn({ of: 'provider', op: 'auth', nth: 0, when, delayMs: 3_000 });
      const answer = await liveJson(h, 'merchantInitiated', body);
      expect(answer).toMatchObject({ outcome: 'unavailable' });
      expect(await liveJson(h, 'merchantInitiated', body)).toEqual(answer);
      expect(await usesOf(first.transactionReference)).toBe(0);
      expect(
        (await liveJson(h, 'merchantInitiated', threeRiBody(first.transactionReference, { amount: 2500 }))).outcome,
      ).toBe('authenticated');
    },
  );
});
