import { afterEach, describe, expect, it, vi } from 'vitest';
import { restoreObjects, StorageHarness, via } from './faulty-env';
import { burst, expectNotFound, OTHER_AUTH } from './helpers';
import {
  authenticateBody,
  completeChallenge,
  getTransaction,
  newReference,
  THREEDS,
  threeDs,
  transaction,
  verifyBody,
} from './threeds-helpers';
import { endChallenge, liveBody, liveHarness, liveJson, liveStep, verifyBodyOf } from './live-helpers';

/**
 * GET of a 3DS transaction (docs/threeds.md "Retrieve a transaction"): its state, and once there
 * is one its final outcome, the same answer `verification` (challenged) or `authenticate`
 * (frictionless) gives, from the transaction's object; never changing it (an open challenge stays
 * open) and never calling the 3DS Server provider. The merchant's own transactions only.
 */

type Json = Record<string, any>;

afterEach(() => {
  restoreObjects();
  vi.restoreAllMocks();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('GET of a 3DS transaction, in test', () => {
  it('answers initialized after deviceDataInitialize, with when it started, and its own link', async () => {
    const reference = newReference();
    const init = await threeDs('deviceDataInitialize', {
      transactionReference: reference,
      merchant: { entity: 'default' },
      paymentInstrument: {
        type: 'card/front',
        cardNumber: '4000000000001091',
        cardExpiryDate: { month: 12, year: 2035 },
      },
    });
    expect(init.status).toBe(200);
    const body = await transaction(reference);
    expect(body).toEqual({
      transactionReference: reference,
      merchant: { entity: 'default' },
      state: 'initialized',
      createdAt: expect.stringMatching(ISO),
      updatedAt: body.createdAt,
      _links: {
        '3ds:transaction': {
          href: `https://edge.test${THREEDS}/authentications/${encodeURIComponent(reference)}?entity=default`,
        },
      },
    });
    expect(Math.abs(Date.parse(body.createdAt as string) - Date.now())).toBeLessThan(60_000);
  });

  it('answers completed with what authenticate answered, for a frictionless transaction', async () => {
    const body = authenticateBody({ cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    const response = await threeDs('authenticate', body);
    const answer = await response.json<Json>();
    expect(answer.outcome).toBe('authenticated');
    const found = await transaction(body.transactionReference as string);
    expect(found.state).toBe('completed');
    expect(found.result).toEqual(answer);
  });

  it('answers challenged while the challenge is open, however often and at once, and leaves it open; then what verification answers', async () => {
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    expect(answer.outcome).toBe('challenged');
    const reads = await burst(20, () => getTransaction(reference));
    for (const read of reads) {
      const found = await read.json<Json>();
      expect(found.state).toBe('challenged');
      expect(found).not.toHaveProperty('result');
    }
    // Still open: the right code passes (verification would have ended it as not completed).
    const html = await completeChallenge(answer.challenge.jwt as string, ['1234']);
    expect(html).toContain('Payment verified');
    const found = await transaction(reference);
    expect(found.state).toBe('completed');
    expect(Date.parse(found.updatedAt as string)).toBeGreaterThanOrEqual(Date.parse(found.createdAt as string));
    const verified = await (
      await threeDs('verification', verifyBody(reference, answer.challenge.reference))
    ).json<Json>();
    expect(verified.outcome).toBe('authenticated');
    expect(found.result).toEqual(verified);
    // And GET repeats it.
    expect((await transaction(reference)).result).toEqual(verified);
  });

  it('answers a challenge verification ended as not completed with the same authenticationFailed', async () => {
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    const verified = await (
      await threeDs('verification', verifyBody(reference, answer.challenge.reference))
    ).json<Json>();
    expect(verified.outcome).toBe('authenticationFailed');
    const found = await transaction(reference);
    expect(found.state).toBe('completed');
    expect(found.result).toEqual(verified);
  });

  it('renders the outcome for the version asked for, as verification does', async () => {
    const v3 = 'application/vnd.worldpay.verifications.customers-v3.hal+json';
    const body = authenticateBody({ cardHolderName: '3DS_V2_CHALLENGE_IDENTIFIED' });
    const reference = body.transactionReference as string;
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    const response = await getTransaction(reference, { headers: { Accept: v3 } });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(v3);
    await completeChallenge(answer.challenge.jwt as string, ['1234']);
    const verified = await threeDs('verification', verifyBody(reference, answer.challenge.reference), {
      Accept: v3,
      'Content-Type': v3,
    });
    expect((await transaction(reference, { headers: { Accept: v3 } })).result).toEqual(await verified.json<Json>());
  });

  it('finds a reference that holds characters a path must encode', async () => {
    const reference = `order/${Date.now()}?#%`;
    const body = authenticateBody({ reference, cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    expect((await threeDs('authenticate', body)).status).toBe(200);
    expect((await transaction(reference)).transactionReference).toBe(reference);
  });

  it("answers 404 for an unknown reference and for another merchant's transaction, never its data", async () => {
    await expectNotFound(await getTransaction(newReference()));
    const body = authenticateBody({ cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    expect((await threeDs('authenticate', body)).status).toBe(200);
    // The other merchant, under its own entity: nothing there. Under ours: not its entity.
    const other = { headers: { Authorization: OTHER_AUTH } };
    await expectNotFound(await getTransaction(body.transactionReference as string, { ...other, entity: 'other' }));
    const notItsEntity = await getTransaction(body.transactionReference as string, other);
    expect(notItsEntity.status).toBe(400);
    const answer = await notItsEntity.json<Json>();
    expect(answer.errorName).toBe('entityIsNotConfigured');
    expect(JSON.stringify(answer)).not.toContain('authenticated');
  });

  it.each([
    ['no entity', newReference(), null, '$.entity'],
    ['an entity with a dash', newReference(), 'bad-entity', '$.entity'],
    ['a reference of 65 characters', 'x'.repeat(65), 'default', '$.transactionReference'],
    ['a reference with a space', 'a b', 'default', '$.transactionReference'],
  ])('answers %s with 400 urlContainsInvalidValue at its path', async (_name, reference, entity, jsonPath) => {
    const response = await getTransaction(reference, { entity });
    const body = await response.json<Json>();
    expect(response.status, JSON.stringify(body)).toBe(400);
    expect(body.errorName).toBe('urlContainsInvalidValue');
    expect(body.validationErrors.map((e: Json) => e.jsonPath)).toEqual([jsonPath]);
  });

  it('answers 503 with Retry-After when its one object call fails, and the retry answers', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const body = authenticateBody({ cardHolderName: '3DS_V2_FRICTIONLESS_IDENTIFIED' });
    expect((await threeDs('authenticate', body)).status).toBe(200);
    for (const when of ['before', 'after'] as const) {
      const h = new StorageHarness().failOn({ nth: 0, of: 'do', when });
      const failed = await getTransaction(body.transactionReference as string, { via: via(h) });
      expect(failed.status).toBe(503);
      expect(failed.headers.get('Retry-After')).toMatch(/^\d+$/);
      expect(h.calls.map((c) => `${c.store}.${c.op}`)).toEqual(['do.transaction']);
    }
    expect((await transaction(body.transactionReference as string)).state).toBe('completed');
  });
});

describe('GET of a 3DS transaction, in live', () => {
  it('answers completed with the frictionless answer, and never calls the provider', async () => {
    const h = liveHarness();
    const body = liveBody('2000', { browser: true });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('authenticated');
    const reads = new StorageHarness({ ENVIRONMENT: 'live' });
    const found = await transaction(body.transactionReference as string, { via: via(reads) });
    expect(found.state).toBe('completed');
    expect(found.result).toEqual(answer);
    expect(reads.calls.map((c) => `${c.store}.${c.op}`)).toEqual(['do.transaction']);
  });

  it('answers initialized while the first authenticate (no deviceDataInitialize before it) has its AReq in flight', async () => {
    const h = liveHarness();
    const reference = newReference();
    // The provider answers the AReq 3 s late: meanwhile the run is under way in the object.
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'late', delayMs: 3_000 });
    const authenticating = liveStep(h, 'authenticate', liveBody('2000', { browser: true, reference }));
    await vi.waitFor(() => expect(h.count((c) => c.store === 'provider' && c.op === 'auth')).toBe(1), {
      timeout: 30_000,
      interval: 20,
    });
    const reads = new StorageHarness({ ENVIRONMENT: 'live' });
    const found = await transaction(reference, { via: via(reads) });
    expect(found).toMatchObject({ state: 'initialized', transactionReference: reference });
    expect(found).not.toHaveProperty('result');
    expect((await (await authenticating).json<Record<string, unknown>>()).outcome).toBe('authenticated');
    expect((await transaction(reference, { via: via(reads) })).state).toBe('completed');
  });

  it('answers challenged until the result is recorded, then what verification answers', async () => {
    const h = liveHarness();
    const body = liveBody('2172', { browser: true, windowSize: '500x600' });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('challenged');
    const reads = new StorageHarness({ ENVIRONMENT: 'live' });
    expect((await transaction(body.transactionReference as string, { via: via(reads) })).state).toBe('challenged');
    await endChallenge(h, answer, 'Y');
    const found = await transaction(body.transactionReference as string, { via: via(reads) });
    expect(reads.count((c) => c.store === 'provider')).toBe(0);
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified.outcome).toBe('authenticated');
    expect(found).toMatchObject({ state: 'completed', result: verified });
  });
});
