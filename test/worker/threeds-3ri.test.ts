import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { burst, expect503, OTHER_AUTH, quiet } from './helpers';
import { StorageHarness } from './faulty-env';
import {
  authenticateBody,
  cardFront,
  MASTERCARD_PAN,
  newReference,
  threeDs,
  transaction,
  VISA_PAN,
} from './threeds-helpers';
import { threeDsObject } from './projection-helpers';
import type { Fetch } from './helpers';

/**
 * A series set up on a customer-present payment, and merchant-initiated (3RI) authentications of
 * it (docs/threeds.md "Series and 3RI", CONTRACT §11), in `test`: every check is made by the prior
 * transaction's object before anything is decided, so limits hold under bursts and faults.
 */

type Json = Record<string, any>;

const NEXT_YEAR = `${new Date().getUTCFullYear() + 1}-06-30`;
const RECURRING = { type: 'recurring', expiry: NEXT_YEAR, frequencyDays: 30 };

/** A first payment of a series: frictionless Y (a test name), 2500 GBP minor units. */
async function firstPayment(o: { cardNumber?: string; recurring?: Json; name?: string; amount?: number } = {}) {
  const reference = newReference();
  const body = {
    ...authenticateBody({
      reference,
      cardNumber: o.cardNumber ?? MASTERCARD_PAN,
      cardHolderName: o.name ?? '3ds2-frictionless-identified',
      amount: o.amount ?? 2500,
    }),
    recurring: o.recurring ?? RECURRING,
  };
  const response = await threeDs('authenticate', body);
  const answer = await response.json<Json>();
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return { reference, answer };
}

function threeRiBody(
  prior: string,
  o: { amount?: number; type?: string; cardNumber?: string; name?: string; reference?: string } = {},
) {
  return {
    transactionReference: o.reference ?? newReference(),
    merchant: { entity: 'default' },
    priorTransactionReference: prior,
    type: o.type ?? 'recurring',
    instruction: {
      value: { amount: o.amount ?? 1000, currency: 'GBP' },
      paymentInstrument: cardFront(o.name, o.cardNumber ?? MASTERCARD_PAN),
    },
  };
}

const threeRi = (body: unknown, via?: Fetch) => threeDs('merchantInitiated', body, {}, via);

async function refusedAt(response: Response): Promise<string> {
  const body = await response.json<Json>();
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.validationErrors).toHaveLength(1);
  return body.validationErrors[0].jsonPath;
}

describe('a series set up on the customer-present payment', () => {
  it('asks for a challenge by default (challengeMandated) and keeps the series on Y', async () => {
    const risk = await threeDs('authenticate', { ...authenticateBody({ amount: 10 }), recurring: RECURRING });
    expect((await risk.json<Json>()).outcome).toBe('challenged');
    const { answer } = await firstPayment();
    expect(answer.outcome).toBe('authenticated');
  });

  it.each([
    [{ ...RECURRING, expiry: new Date().toISOString().slice(0, 10) }, '$.recurring.expiry'],
    [{ type: 'instalment', expiry: NEXT_YEAR, frequencyDays: 30 }, '$.recurring.instalments'],
    [{ ...RECURRING, instalments: 3 }, '$.recurring.instalments'],
    [{ ...RECURRING, frequencyDays: 0 }, '$.recurring.frequencyDays'],
  ])('refuses %o at %s', async (recurring, path) => {
    const response = await threeDs('authenticate', { ...authenticateBody({}), recurring });
    expect(await refusedAt(response)).toBe(path);
  });
});

describe('merchantInitiated', () => {
  it('authenticates a recurring 3RI of a Mastercard series: ECI 07, the prior’s version; GET shows it', async () => {
    const { reference } = await firstPayment();
    const body = threeRiBody(reference);
    const response = await threeRi(body);
    const answer = await response.json<Json>();
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer).toMatchObject({
      outcome: 'authenticated',
      transactionReference: body.transactionReference,
      status: 'Y',
      authentication: { version: '2.2.0', eci: '07' },
    });
    expect(answer.authentication.authenticationValue).toBeDefined();
    const got = await transaction(body.transactionReference);
    expect(got).toMatchObject({ state: 'completed', result: answer });
  });

  it('keeps the amounts of the series within the first payment’s, and its currency', async () => {
    const { reference } = await firstPayment();
    expect((await threeRi(threeRiBody(reference, { amount: 1500 }))).status).toBe(200);
    expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1001 })))).toBe('$.instruction.value.amount');
    expect((await threeRi(threeRiBody(reference, { amount: 1000 }))).status).toBe(200);
    const usd = threeRiBody(reference, { amount: 0 });
    usd.instruction.value.currency = 'USD';
    expect(await refusedAt(await threeRi(usd))).toBe('$.instruction.value.amount');
  });

  it('a 3RI the issuer did not authenticate does not use the series', async () => {
    const { reference } = await firstPayment();
    const failed = await threeRi(threeRiBody(reference, { amount: 2500, name: '3ri-authentication-failed' }));
    expect((await failed.json<Json>()).outcome).toBe('authenticationFailed');
    expect((await threeRi(threeRiBody(reference, { amount: 2500 }))).status).toBe(200);
  });

  it.each([
    ['an unknown prior', () => Promise.resolve(newReference())],
    [
      'a prior with no series',
      async () => {
        const reference = newReference();
        await threeDs(
          'authenticate',
          authenticateBody({ reference, cardNumber: MASTERCARD_PAN, cardHolderName: '3ds2-frictionless-identified' }),
        );
        return reference;
      },
    ],
    ['a prior that failed', async () => (await firstPayment({ name: '3ds2-frictionless-failed' })).reference],
    ['a prior still challenged', async () => (await firstPayment({ name: '3ds2-challenge-identified' })).reference],
  ])('refuses %s at $.priorTransactionReference, never 404', async (_name, prior) => {
    expect(await refusedAt(await threeRi(threeRiBody(await prior())))).toBe('$.priorTransactionReference');
  });

  it('refuses another card, and another merchant’s prior, at $.priorTransactionReference', async () => {
    const { reference } = await firstPayment();
    expect(await refusedAt(await threeRi(threeRiBody(reference, { cardNumber: VISA_PAN })))).toBe(
      '$.priorTransactionReference',
    );
    // Another merchant naming this one's transaction reaches its own (empty) object.
    const theirs = await threeDs(
      'merchantInitiated',
      { ...threeRiBody(reference), merchant: { entity: 'other' } },
      { Authorization: OTHER_AUTH },
    );
    expect(await refusedAt(theirs)).toBe('$.priorTransactionReference');
  });

  it('refuses a recurring 3RI on a scheme without it (Visa) at $.type, and takes a non-payment one', async () => {
    const { reference } = await firstPayment({ cardNumber: VISA_PAN });
    expect(await refusedAt(await threeRi(threeRiBody(reference, { cardNumber: VISA_PAN })))).toBe('$.type');
    const check = await threeRi(
      threeRiBody(reference, { cardNumber: VISA_PAN, type: 'accountVerification', amount: 0 }),
    );
    expect(check.status).toBe(200);
  });

  it('counts instalments: a series of 3 takes two 3RIs after the first payment', async () => {
    const { reference } = await firstPayment({
      recurring: { type: 'instalment', expiry: NEXT_YEAR, frequencyDays: 30, instalments: 3 },
    });
    expect(await refusedAt(await threeRi(threeRiBody(reference, { type: 'recurring' })))).toBe('$.type');
    expect((await threeRi(threeRiBody(reference, { type: 'instalment', amount: 500 }))).status).toBe(200);
    expect((await threeRi(threeRiBody(reference, { type: 'instalment', amount: 500 }))).status).toBe(200);
    expect(await refusedAt(await threeRi(threeRiBody(reference, { type: 'instalment', amount: 500 })))).toBe('$.type');
  });

  it('20 concurrent 3RIs of one series: exactly what fits is authenticated', async () => {
    const { reference } = await firstPayment();
    const answers = await burst(20, () => threeRi(threeRiBody(reference, { amount: 1000 })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(18);
  });

  it('20 identical 3RIs: one answer, counted once', async () => {
    const { reference } = await firstPayment();
    const body = threeRiBody(reference, { amount: 1000 });
    const answers = await burst(20, () => threeRi(body).then((r) => r.text()));
    expect(new Set(answers).size).toBe(1);
    expect((await threeRi(threeRiBody(reference, { amount: 1500 }))).status).toBe(200);
  });

  it('another body under a used 3RI reference is a duplicate (v1: unavailable), and uses nothing', async () => {
    const { reference } = await firstPayment();
    const body = threeRiBody(reference, { amount: 1000 });
    expect((await threeRi(body)).status).toBe(200);
    const other = { ...body, instruction: { ...body.instruction, value: { amount: 999, currency: 'GBP' } } };
    expect((await (await threeRi(other)).json<Json>()).outcome).toBe('unavailable');
    // A 3RI under the reference of a customer-present transaction: refused, and its use forgotten.
    const taken = (await firstPayment({ recurring: RECURRING })).reference;
    const reused = threeRiBody(reference, { amount: 1500, reference: taken });
    expect((await (await threeRi(reused)).json<Json>()).outcome).toBe('unavailable');
    expect((await threeRi(threeRiBody(reference, { amount: 1500 }))).status).toBe(200);
  });

  it.each(['before', 'after', 'hang'] as const)(
    'the prior’s object call failing %s: 503 with Retry-After; the retry completes and counts once',
    async (when) => {
      quiet();
      const { reference } = await firstPayment();
      const body = threeRiBody(reference, { amount: 1500 });
      const h = new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '1000' } : {}).failOn({
        nth: 0,
        of: 'do',
        when,
      });
      await expect503(await threeRi(body, (r) => h.fetch(r)));
      expect((await threeRi(body)).status).toBe(200);
      expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1001 })))).toBe(
        '$.instruction.value.amount',
      );
    },
  );

  it.each(['before', 'after', 'hang'] as const)(
    'the 3RI’s own object call failing %s (its use already recorded): 503; the retry answers and counts once',
    async (when) => {
      quiet();
      const { reference } = await firstPayment();
      const body = threeRiBody(reference, { amount: 1500 });
      const h = new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '1000' } : {}).failOn({
        nth: 1,
        of: 'do',
        when,
      });
      await expect503(await threeRi(body, (r) => h.fetch(r)));
      const retried = await threeRi(body);
      expect(retried.status).toBe(200);
      expect(await threeRi(body).then((r) => r.text())).toBe(await retried.text());
      expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1001 })))).toBe(
        '$.instruction.value.amount',
      );
      expect((await threeRi(threeRiBody(reference, { amount: 1000 }))).status).toBe(200);
    },
  );

  it('outlives the prior’s session: a 3RI after the session was wiped still finds the series', async () => {
    const { reference } = await firstPayment();
    const prior = threeDsObject(reference);
    await runInDurableObject(prior, (_o, state) => {
      state.storage.sql.exec('UPDATE session SET expires_at = ?', Date.now() - 120_000);
    });
    await runDurableObjectAlarm(prior);
    const left = await runInDurableObject(prior, (_o, state) => ({
      sessions: state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM session').one().n,
      series: state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM series').one().n,
    }));
    expect(left).toEqual({ sessions: 0, series: 1 });
    expect((await threeRi(threeRiBody(reference))).status).toBe(200);
  });

  it('is not available in live yet: 400 merchantIsNotConfigured, never the test issuer', async () => {
    const live = new StorageHarness({ ENVIRONMENT: 'live' });
    const response = await threeRi(threeRiBody(newReference()), (r) => live.fetch(r));
    const body = await response.json<Json>();
    expect(response.status).toBe(400);
    expect(body.errorName).toBe('merchantIsNotConfigured');
  });
});
