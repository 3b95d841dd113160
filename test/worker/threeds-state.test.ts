import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../../src/index';
import { OTHER_AUTH } from './helpers';
import {
  authenticateBody,
  completeChallenge,
  newReference,
  postForm,
  threeDs,
  THREEDS,
  THREEDS_HEADERS,
  verifyBody,
  VISA_PAN,
} from './threeds-helpers';

type Json = Record<string, any>;

const MINUTE = 60_000;

async function json(response: Promise<Response>): Promise<Json> {
  return (await response).json();
}

afterEach(() => {
  vi.useRealTimers();
});

describe('3DS idempotency', () => {
  it('answers an identical deviceDataInitialize retry identically', async () => {
    const body = { transactionReference: newReference(), merchant: { entity: 'default' } };
    const first = await json(threeDs('deviceDataInitialize', body));
    expect(await json(threeDs('deviceDataInitialize', body))).toEqual(first);
  });

  it('keeps the first device data initialization of a transaction, even for a changed body', async () => {
    const transactionReference = newReference();
    const first = await json(
      threeDs('deviceDataInitialize', { transactionReference, merchant: { entity: 'default' } }),
    );
    const changed = await json(
      threeDs('deviceDataInitialize', {
        transactionReference,
        merchant: { entity: 'default' },
        paymentInstrument: { type: 'card/front', cardNumber: VISA_PAN, cardExpiryDate: { month: 1, year: 2030 } },
      }),
    );
    expect(changed).toEqual(first);
  });

  it('answers an identical authenticate retry identically, challenge and JWT included', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    const first = await json(threeDs('authenticate', body));
    expect(first.outcome).toBe('challenged');
    expect(await json(threeDs('authenticate', body))).toEqual(first);
  });

  it('answers a different authenticate body under a used reference with unavailable, and keeps the session', async () => {
    const reference = newReference();
    const first = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    const other = await json(
      threeDs(
        'authenticate',
        authenticateBody({ reference, amount: 999, cardHolderName: '3ds2-challenge-identified' }),
      ),
    );
    expect(other.outcome).toBe('unavailable');
    expect(other).toMatchObject({ status: 'U', enrolled: 'U' });
    expect(other).not.toHaveProperty('authentication');
    await completeChallenge(first.challenge.jwt, ['1234']);
    expect((await json(threeDs('verification', verifyBody(reference, first.challenge.reference)))).outcome).toBe(
      'authenticated',
    );
  });

  it('repeats the unavailable answer to the same different body identically', async () => {
    const reference = newReference();
    await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-bypassed' }));
    const other = authenticateBody({ reference, amount: 999, cardHolderName: '3ds2-bypassed' });
    const first = await json(threeDs('authenticate', other));
    expect(first.outcome).toBe('unavailable');
    expect(await json(threeDs('authenticate', other))).toEqual(first);
  });

  it('ends a challenge still open when verification is called, and the page then shows that result', async () => {
    const reference = newReference();
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    const early = await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)));
    expect(early.outcome).toBe('authenticationFailed');
    // The cardholder's right code, too late: the page shows the result verification gave.
    const state = /name="state" value="([^"]+)"/.exec(page)![1]!;
    const late = await (await postForm('/3ds/challenge/submit', { state, code: '1234', action: 'submit' })).text();
    expect(late).toContain('Payment not verified');
    expect(await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)))).toEqual(early);
  });

  it('answers a repeated verification with the same answer', async () => {
    const reference = newReference();
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    await completeChallenge(auth.challenge.jwt, ['1234']);
    const first = await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)));
    expect(first.outcome).toBe('authenticated');
    expect(await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)))).toEqual(first);
  });
});

describe('3DS isolation between merchants', () => {
  it("never shows one merchant's session to another, even under the same reference", async () => {
    const reference = newReference();
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    await completeChallenge(auth.challenge.jwt, ['1234']);
    const foreign = await threeDs('verification', verifyBody(reference, auth.challenge.reference, 'other'), {
      Authorization: OTHER_AUTH,
    });
    expect(foreign.status).toBe(404);
    expect((await foreign.json<Json>()).errorName).toBe('challengeNotFound');
    // The other merchant's own authenticate under the same reference is a new session, not a retry.
    const own = await json(
      threeDs('authenticate', authenticateBody({ reference, entity: 'other', cardHolderName: '3ds2-bypassed' }), {
        Authorization: OTHER_AUTH,
      }),
    );
    expect(own.outcome).toBe('bypassed');
  });

  it("answers challengeNotFound for a reference that is not this session's challenge", async () => {
    const reference = newReference();
    await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }));
    const response = await threeDs('verification', verifyBody(reference, 'B'.repeat(20)));
    expect(response.status).toBe(404);
  });
});

describe('3DS expiry', () => {
  it('fails a challenge not completed within 10 minutes, and the JWT no longer opens it', async () => {
    const reference = newReference();
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 11 * MINUTE);
    const page = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('expired');
    expect((await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)))).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('ends a challenge as failed when its form is submitted after the 10 minutes', async () => {
    const reference = newReference();
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    const state = /name="state" value="([^"]+)"/.exec(page)![1]!;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 11 * MINUTE);
    const late = await (await postForm('/3ds/challenge/submit', { state, code: '1234', action: 'submit' })).text();
    expect(late).toContain('name="TransactionId"');
    expect((await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)))).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('gives a challenge issued late in the session its full 10 minutes, and verification its answer', async () => {
    const reference = newReference();
    await threeDs('deviceDataInitialize', { transactionReference: reference, merchant: { entity: 'default' } });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 55 * MINUTE);
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    vi.setSystemTime(Date.now() + 8 * MINUTE);
    const state = /name="state" value="([^"]+)"/.exec(page)![1]!;
    expect(await (await postForm('/3ds/challenge/submit', { state, code: '1234', action: 'submit' })).text()).toContain(
      'Payment verified',
    );
    expect((await json(threeDs('verification', verifyBody(reference, auth.challenge.reference)))).outcome).toBe(
      'authenticated',
    );
  });

  it('forgets a session after one hour', async () => {
    const reference = newReference();
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61 * MINUTE);
    expect((await threeDs('verification', verifyBody(reference, auth.challenge.reference))).status).toBe(404);
    // The reference is free again: a new authenticate is a new session, not "unavailable".
    const again = await json(threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-bypassed' })));
    expect(again.outcome).toBe('bypassed');
  });
});

describe('3DS storage', () => {
  it('keeps no full card number in any KV key or value', async () => {
    const reference = newReference();
    await threeDs('deviceDataInitialize', {
      transactionReference: reference,
      merchant: { entity: 'default' },
      paymentInstrument: { type: 'card/front', cardNumber: VISA_PAN, cardExpiryDate: { month: 1, year: 2030 } },
    });
    const auth = await json(
      threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' })),
    );
    await completeChallenge(auth.challenge.jwt, ['1234']);
    await threeDs('verification', verifyBody(reference, auth.challenge.reference));
    const keys = (await env.SESSIONS.list()).keys.map((k) => k.name);
    expect(keys.length).toBeGreaterThan(3);
    for (const key of keys) {
      expect(key).not.toContain(VISA_PAN);
      expect(await env.SESSIONS.get(key)).not.toContain(VISA_PAN);
    }
  });

  it('answers authenticate without KV: the Worker reads and writes none (the object projects the session)', async () => {
    const failing = {
      get: () => Promise.reject(new Error('KV is down')),
      put: () => Promise.reject(new Error('KV is down')),
    } as unknown as KVNamespace;
    const request = new Request<unknown, IncomingRequestCfProperties>(`https://edge.test${THREEDS}/authenticate`, {
      method: 'POST',
      headers: THREEDS_HEADERS,
      body: JSON.stringify(authenticateBody()),
    });
    const response = await worker.fetch(request, { ...env, SESSIONS: failing }, createExecutionContext());
    expect(response.status).toBe(200);
    expect((await response.json<Json>()).outcome).toBeTypeOf('string');
  });
});
