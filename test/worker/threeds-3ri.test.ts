import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { failPrior, restorePrior } from './prior-faults';
import { seriesCardHash } from '../../src/threeds/series-rules';
import { settingsOf } from '../../src/config/settings';

const seriesHashOf = (cardNumber: string) => seriesCardHash(settingsOf(env).jwtKey, cardNumber);
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

afterEach(() => restorePrior());

/** The 3RI object's holds on its prior's series (white-box): none once its storage is freed. */
function holds(transactionReference: string) {
  return runInDurableObject(threeDsObject(transactionReference), (_o, state) => {
    const sql = state.storage.sql;
    if (sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'series_hold'").toArray().length === 0) return [];
    return sql
      .exec<{ state: string }>('SELECT state FROM series_hold')
      .toArray()
      .map((r) => ({ state: r.state }));
  });
}

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
    const unavailable = await threeRi(threeRiBody(reference, { amount: 2500, name: '3ri-unavailable' }));
    // Unavailable says why: EMV reason 21, 3RI not supported (an extension, before the links).
    const answer = await unavailable.json<Json>();
    expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U', statusReason: '21' });
    expect(Object.keys(answer).at(-1)).toBe('_links');
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

  it.each(['before', 'after', 'hang', 'late'] as const)(
    'the prior’s object call (made by the 3RI’s object) failing %s: 503 with Retry-After; the retry completes and counts once',
    async (when) => {
      quiet();
      const { reference } = await firstPayment();
      const body = threeRiBody(reference, { amount: 1500 });
      failPrior('seriesUse', when);
      await expect503(await threeRi(body));
      restorePrior();
      expect((await threeRi(body)).status).toBe(200);
      expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1001 })))).toBe(
        '$.instruction.value.amount',
      );
      expect((await threeRi(threeRiBody(reference, { amount: 1000 }))).status).toBe(200);
    },
  );

  it.each(['before', 'after', 'hang'] as const)(
    'the 3RI’s own object call failing %s: 503; the retry answers and counts once',
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
      const retried = await threeRi(body);
      expect(retried.status).toBe(200);
      expect(await threeRi(body).then((r) => r.text())).toBe(await retried.text());
      expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1001 })))).toBe(
        '$.instruction.value.amount',
      );
      expect((await threeRi(threeRiBody(reference, { amount: 1000 }))).status).toBe(200);
    },
  );

  it('a release that fails is sent again by the 3RI’s alarm: the use is held until the prior has it', async () => {
    quiet();
    const { reference } = await firstPayment();
    const failed = threeRiBody(reference, { amount: 2500, name: '3ri-authentication-failed' });
    failPrior('seriesRelease', 'after');
    expect((await (await threeRi(failed)).json<Json>()).outcome).toBe('authenticationFailed');
    restorePrior();
    // The prior had the release but its answer was lost: the hold stays, and the use is held.
    const object = threeDsObject(failed.transactionReference);
    expect(await holds(failed.transactionReference)).toEqual([{ state: 'release' }]);
    await runInDurableObject(object, (_o, state) => state.storage.sql.exec('UPDATE series_hold SET due_at = 0'));
    await runDurableObjectAlarm(object);
    expect(await holds(failed.transactionReference)).toEqual([]);
    expect((await threeRi(threeRiBody(reference, { amount: 2500 }))).status).toBe(200);
  });

  it('a 3RI that never came to an outcome gives its use back when its hold’s time runs out', async () => {
    quiet();
    const { reference } = await firstPayment();
    const body = threeRiBody(reference, { amount: 2500 });
    failPrior('seriesUse', 'after');
    await expect503(await threeRi(body));
    restorePrior();
    // No retry comes: the use stays counted while the 3RI may still be retried...
    expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1 })))).toBe('$.instruction.value.amount');
    expect(await holds(body.transactionReference)).toEqual([{ state: 'open' }]);
    // ...and once the hold's time (an hour and a minute) has run out, its object's alarm releases it.
    const object = threeDsObject(body.transactionReference);
    await runInDurableObject(object, (_o, state) => {
      const due = state.storage.sql.exec<{ due_at: number }>('SELECT due_at FROM series_hold').one().due_at;
      expect(due).toBeGreaterThan(Date.now() + 60 * 60_000);
      state.storage.sql.exec('UPDATE series_hold SET due_at = ?', Date.now() - 1);
    });
    await runDurableObjectAlarm(object);
    expect(await holds(body.transactionReference)).toEqual([]);
    expect((await threeRi(threeRiBody(reference, { amount: 2500 }))).status).toBe(200);
  });

  it('a release names its holder: a late release of an earlier hold never undoes the use a later hold counted', async () => {
    const { reference } = await firstPayment();
    const prior = threeDsObject(reference);
    const use = {
      type: 'recurring' as const,
      amount: 2500,
      currency: 'GBP',
      cardHash: await seriesHashOf(MASTERCARD_PAN),
    };
    const now = Date.now();
    expect((await prior.seriesUse('renewal', 'h', use, 'first-hold', now)).kind).toBe('allowed');
    // The same 3RI again (its session ended, a new hold): the use is the new hold's.
    expect((await prior.seriesUse('renewal', 'h', use, 'second-hold', now)).kind).toBe('allowed');
    await prior.seriesRelease('renewal', 'first-hold');
    expect(await refusedAt(await threeRi(threeRiBody(reference, { amount: 1 })))).toBe('$.instruction.value.amount');
    await prior.seriesRelease('renewal', 'second-hold');
    expect((await threeRi(threeRiBody(reference, { amount: 2500 }))).status).toBe(200);
  });

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
});
