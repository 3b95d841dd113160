import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { threeDsObject } from './projection-helpers';
import { authenticateBody, hiddenField, newReference, postForm, threeDs, verifyBody } from './threeds-helpers';

/**
 * The test issuer's challenge form posted again after its answer was lost (docs/storage.md
 * "Guarantees"): the same form with the same code is the same post, answered as before and counted
 * once; another code, even on the same form, is another attempt.
 */

type Json = Record<string, any>;

async function challengeForm(): Promise<{ reference: string; auth: Json; state: string }> {
  const reference = newReference();
  const auth = await (
    await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }))
  ).json<Json>();
  const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
  return { reference, auth, state: hiddenField(page, 'state')! };
}

const wrongCodes = (reference: string): Promise<number> =>
  runInDurableObject(
    threeDsObject(reference),
    (_o, state) => state.storage.sql.exec<{ attempts: number }>('SELECT attempts FROM challenge').one().attempts,
  );

describe('the challenge form posted again', () => {
  it('with the same wrong code: the same answer, the code counted once', async () => {
    const { reference, state } = await challengeForm();
    const form = { state, code: '0000', action: 'submit' };
    const first = await (await postForm('/3ds/challenge/submit', form)).text();
    expect(first).toContain('2 attempts left');
    // The browser posts it again (its answer was lost): nothing is counted again.
    const again = await (await postForm('/3ds/challenge/submit', form)).text();
    expect(again).toContain('2 attempts left');
    expect(await wrongCodes(reference)).toBe(1);
    // The next form (a new rendering) counts as usual.
    const next = await (
      await postForm('/3ds/challenge/submit', { ...form, state: hiddenField(first, 'state')! })
    ).text();
    expect(next).toContain('1 attempt left');
    expect(await wrongCodes(reference)).toBe(2);
  });

  it('with another code on the same form: another attempt (no code is tried for free)', async () => {
    const { reference, state } = await challengeForm();
    await postForm('/3ds/challenge/submit', { state, code: '0000', action: 'submit' });
    const other = await (await postForm('/3ds/challenge/submit', { state, code: '1111', action: 'submit' })).text();
    expect(other).toContain('1 attempt left');
    expect(await wrongCodes(reference)).toBe(2);
  });

  it('with the right code after its answer was lost: passed once, and verification says authenticated', async () => {
    const { reference, auth, state } = await challengeForm();
    const form = { state, code: '1234', action: 'submit' };
    expect(await (await postForm('/3ds/challenge/submit', form)).text()).toContain('Payment verified');
    expect(await (await postForm('/3ds/challenge/submit', form)).text()).toContain('Payment verified');
    const verified = await (
      await threeDs('verification', verifyBody(reference, auth.challenge.reference))
    ).json<Json>();
    expect(verified.outcome).toBe('authenticated');
  });
});
