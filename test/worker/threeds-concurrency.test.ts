import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CODE_ATTEMPTS } from '../../src/threeds/challenge-rules';
import { threeDsTransactionName } from '../../src/threeds/transaction-api';
import { restoreObjects, StorageHarness } from './faulty-env';
import { projected, sessionKeyOf } from './projection-helpers';
import { burst } from './helpers';
import {
  authenticateBody,
  cardFront,
  hiddenField,
  newReference,
  postForm,
  threeDs,
  verifyBody,
} from './threeds-helpers';

type Json = Record<string, any>;

const N = 20;

afterEach(restoreObjects);

/** The challenge row the transaction's guard keeps. */
async function challengeRow(transactionReference: string): Promise<Json> {
  const stub = env.THREEDS_TRANSACTION.get(
    env.THREEDS_TRANSACTION.idFromName(
      threeDsTransactionName({ username: 'test-merchant', entity: 'default', transactionReference }),
    ),
  );
  return runInDurableObject(
    stub,
    (_instance, state) => state.storage.sql.exec('SELECT * FROM challenge').one() as Json,
  );
}

async function texts(responses: Response[]): Promise<string[]> {
  return Promise.all(responses.map((r) => r.text()));
}

async function challengedTransaction(): Promise<{ reference: string; auth: Json }> {
  const reference = newReference();
  const auth = await (
    await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }))
  ).json<Json>();
  return { reference, auth };
}

describe('3DS under bursts of identical requests', () => {
  it(`answers ${N} identical deviceDataInitialize calls at once with one answer, byte for byte`, async () => {
    const body = {
      transactionReference: newReference(),
      merchant: { entity: 'default' },
      paymentInstrument: cardFront(),
    };
    const answers = await texts(await burst(N, () => threeDs('deviceDataInitialize', body)));
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0]!).outcome).toBe('initialized');
  });

  it(`keeps one initialization when ${N} different deviceDataInitialize bodies race under one reference`, async () => {
    const transactionReference = newReference();
    const bodies = Array.from({ length: N }, (_, i) => ({
      transactionReference,
      merchant: { entity: 'default' },
      paymentInstrument: { ...cardFront(), cardExpiryDate: { month: 1 + (i % 12), year: 2030 + i } },
    }));
    const answers = await texts(await Promise.all(bodies.map((b) => threeDs('deviceDataInitialize', b))));
    expect(new Set(answers).size).toBe(1);
  });

  it.each(['3ds2-challenge-identified', '3ds2-frictionless-identified', '3ds1-bypassed'])(
    `answers ${N} identical authenticate calls at once with one answer and writes the session once (%s)`,
    async (name) => {
      const harness = new StorageHarness().throughObjects();
      const body = authenticateBody({ cardHolderName: name });
      const responses = await burst(N, () => threeDs('authenticate', body, {}, (r) => harness.fetch(r)));
      expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200));
      const answers = await texts(responses);
      expect(new Set(answers).size).toBe(1);
      // The Worker writes nothing; the object projects the session once.
      expect(harness.count((c) => c.store === 'kv' && c.by !== 'object')).toBe(0);
      const key = sessionKeyOf(body.transactionReference as string);
      await projected(key);
      expect(harness.writeLimit.writesOf(key)).toHaveLength(1);
      // A later identical retry still gets the same bytes.
      expect(await (await threeDs('authenticate', body)).text()).toBe(answers[0]);
    },
  );

  it(`decides ${N} different authenticate bodies under one new reference once: one real outcome, the rest unavailable`, async () => {
    const reference = newReference();
    const bodies = Array.from({ length: N }, (_, i) =>
      authenticateBody({ reference, amount: 100 + i, cardHolderName: '3ds2-frictionless-identified' }),
    );
    const answers = await Promise.all(bodies.map(async (b) => (await threeDs('authenticate', b)).json<Json>()));
    const winners = answers.filter((a) => a.outcome === 'authenticated');
    expect(winners).toHaveLength(1);
    expect(answers.filter((a) => a.outcome === 'unavailable')).toHaveLength(N - 1);
    // The winner's retry repeats its answer; a loser's retry repeats unavailable.
    const winner = bodies[answers.indexOf(winners[0]!)]!;
    expect(await (await threeDs('authenticate', winner)).json()).toEqual(winners[0]);
    const loser = bodies.find((b) => b !== winner)!;
    expect((await (await threeDs('authenticate', loser)).json<Json>()).outcome).toBe('unavailable');
  });

  it('lets a merchant whose client retried on a timeout complete the challenge with either answer', async () => {
    const reference = newReference();
    const body = authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' });
    // The first call is still running when the retry is sent.
    const [first, retry] = await Promise.all([threeDs('authenticate', body), threeDs('authenticate', body)]);
    const [a, b] = [await first.json<Json>(), await retry.json<Json>()];
    expect(a).toEqual(b);
    const page = await (await postForm('/3ds/challenge', { JWT: b.challenge.jwt })).text();
    await postForm('/3ds/challenge/submit', { state: hiddenField(page, 'state')!, code: '1234', action: 'submit' });
    const verified = await (await threeDs('verification', verifyBody(reference, a.challenge.reference))).json<Json>();
    expect(verified.outcome).toBe('authenticated');
  });

  it(`answers ${N} identical first verification calls at once with one answer, and ends the open challenge once`, async () => {
    const { reference, auth } = await challengedTransaction();
    const answers = await texts(
      await burst(N, () => threeDs('verification', verifyBody(reference, auth.challenge.reference))),
    );
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0]!).outcome).toBe('authenticationFailed');
    expect(await challengeRow(reference)).toMatchObject({ outcome: 'failed', reason: 'notCompleted', evaluated: 0 });
  });

  it(`answers ${N} identical verification calls after a passed challenge with one answer`, async () => {
    const { reference, auth } = await challengedTransaction();
    const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    await postForm('/3ds/challenge/submit', { state: hiddenField(page, 'state')!, code: '1234', action: 'submit' });
    const answers = await texts(
      await burst(N, () => threeDs('verification', verifyBody(reference, auth.challenge.reference))),
    );
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0]!).outcome).toBe('authenticated');
  });
});

describe('the challenge under parallel showings and form posts', () => {
  it(`shows the challenge to every post of its JWT at once, and still evaluates ${MAX_CODE_ATTEMPTS} codes in all`, async () => {
    const { reference, auth } = await challengedTransaction();
    const pages = await texts(await burst(8, () => postForm('/3ds/challenge', { JWT: auth.challenge.jwt })));
    const states = pages.map((p) => hiddenField(p, 'state'));
    expect(states.every((s) => s !== undefined)).toBe(true);
    // One wrong code from each of the eight forms: the guard counts them together.
    const posts = await texts(
      await burst(8, (i) => postForm('/3ds/challenge/submit', { state: states[i]!, code: '0000', action: 'submit' })),
    );
    expect(await challengeRow(reference)).toMatchObject({ outcome: 'failed', reason: 'attempts' });
    expect((await challengeRow(reference)).evaluated).toBe(MAX_CODE_ATTEMPTS);
    expect(posts.filter((p) => p.includes('Payment not verified')).length).toBe(8 - (MAX_CODE_ATTEMPTS - 1));
    // The JWT is used up once the challenge has its result.
    expect((await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).status).toBe(409);
  });

  it(`evaluates at most ${MAX_CODE_ATTEMPTS} codes when ${N} wrong codes are posted at once, and ends once`, async () => {
    const { reference, auth } = await challengedTransaction();
    const state = hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state')!;
    const pages = await texts(
      await burst(N, (i) => postForm('/3ds/challenge/submit', { state, code: String(1000 + i * 7), action: 'submit' })),
    );
    expect(await challengeRow(reference)).toMatchObject({
      outcome: 'failed',
      reason: 'attempts',
      evaluated: MAX_CODE_ATTEMPTS,
    });
    expect(pages.filter((p) => p.includes('Payment not verified')).length).toBe(N - (MAX_CODE_ATTEMPTS - 1));
    expect(
      (await (await threeDs('verification', verifyBody(reference, auth.challenge.reference))).json<Json>()).outcome,
    ).toBe('authenticationFailed');
  });

  it('ends with one result that the page and verification agree on when the right code races the third wrong one', async () => {
    for (let round = 0; round < 10; round++) {
      const { reference, auth } = await challengedTransaction();
      const state = hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state')!;
      const post = async (code: string): Promise<string> =>
        (await postForm('/3ds/challenge/submit', { state, code, action: 'submit' })).text();
      await post('0000');
      await post('1111');
      const [right, wrong] = await Promise.all([post('1234'), post('2222')]);
      const verified = (
        await (await threeDs('verification', verifyBody(reference, auth.challenge.reference))).json<Json>()
      ).outcome;
      const shown = verified === 'authenticated' ? 'Payment verified' : 'Payment not verified';
      // Both posts ended the page on the one result, whichever the guard took first.
      expect(right).toContain(shown);
      expect(wrong).toContain(shown);
      expect((await challengeRow(reference)).evaluated).toBe(MAX_CODE_ATTEMPTS);
    }
  });

  it(`records one device data collection when one DDC JWT is posted ${N} times at once`, async () => {
    const transactionReference = newReference();
    const init = await (
      await threeDs('deviceDataInitialize', { transactionReference, merchant: { entity: 'default' } })
    ).json<Json>();
    const pages = await texts(
      await burst(N, () => postForm('/3ds/ddc', { JWT: init.deviceDataCollection.jwt, Bin: '457173' })),
    );
    const sessionIds = new Set(pages.map((p) => /"SessionId":"(0_[0-9a-f-]+)"/.exec(p)?.[1]));
    expect(sessionIds.size).toBe(1);
    expect([...sessionIds][0]).toMatch(/^0_/);
    const stub = env.THREEDS_TRANSACTION.get(
      env.THREEDS_TRANSACTION.idFromName(
        threeDsTransactionName({ username: 'test-merchant', entity: 'default', transactionReference }),
      ),
    );
    const rows = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec('SELECT COUNT(*) AS n FROM collections').one(),
    );
    expect(rows.n).toBe(1);
  });
});
