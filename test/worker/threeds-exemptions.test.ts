import { describe, expect, it } from 'vitest';
import { burst } from './helpers';
import {
  authenticateBody,
  completeChallenge,
  MASTERCARD_PAN,
  newReference,
  threeDs,
  transaction,
  verifyBody,
} from './threeds-helpers';

/**
 * Exemptions with an explicit result (docs/threeds.md "Exemptions", CONTRACT §11), in `test`
 * where the worker plays the issuer: what each asks for in the AReq of the transaction's version,
 * whether the issuer granted it, and whether it had to be downgraded, on the answer, verification
 * and GET alike.
 */

type Json = Record<string, any>;

async function authenticate(o: Parameters<typeof authenticateBody>[0]): Promise<Json> {
  const response = await threeDs('authenticate', authenticateBody(o));
  const body = await response.json<Json>();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function refused(o: Parameters<typeof authenticateBody>[0]): Promise<Json> {
  const response = await threeDs('authenticate', authenticateBody(o));
  expect(response.status).toBe(400);
  return response.json<Json>();
}

// The risk rules' issuer (no test name): protocol 2.2.0, a small amount, no device data collected.
const RISK = { amount: 250, currency: 'GBP' };

describe('an exemption on the risk rules’ issuer (2.2.0)', () => {
  it.each([
    ['TRA', '05'],
    ['scaDelegation', '07'],
    ['trustedBeneficiary', '08'],
  ])('%s is sent as %s and granted: authenticated, status I, no authentication value', async (type, indicator) => {
    const answer = await authenticate({ ...RISK, exemption: type });
    expect(answer).toMatchObject({
      outcome: 'authenticated',
      status: 'I',
      enrolled: 'Y',
      authentication: { version: '2.2.0', eci: '07' },
      exemption: {
        requested: type,
        sent: { threeDSRequestorChallengeInd: indicator, messageCategory: '01' },
        applied: true,
        downgraded: false,
      },
    });
    expect(answer.authentication.authenticationValue).toBeUndefined();
    // The exemption is the last field before the links: an extension after Worldpay's own.
    expect(Object.keys(answer).at(-1)).toBe('exemption');
  });

  it.each(['lowValue', 'secureCorporate'])(
    '%s has no indicator in 2.2.0: sent as 02, downgraded, not applied, and the risk rules decide',
    async (type) => {
      const answer = await authenticate({ ...RISK, exemption: type });
      // As for "no challenge requested": the risk rules challenge, the device data not being collected.
      expect(answer.outcome).toBe('challenged');
      expect(answer.exemption).toEqual({
        requested: type,
        sent: { threeDSRequestorChallengeInd: '02', messageCategory: '01' },
        applied: false,
        downgraded: true,
      });
      const challenged = await authenticate({ ...RISK, preference: undefined, exemption: type });
      expect(challenged.exemption).toMatchObject({ applied: false, downgraded: true });
    },
  );

  it('dataOnly is unavailable with dataOnly: true; on Mastercard it is message category 80 and ECI 04', async () => {
    const visa = await authenticate({ ...RISK, exemption: 'dataOnly' });
    expect(visa).toMatchObject({
      outcome: 'unavailable',
      status: 'U',
      dataOnly: true,
      exemption: { sent: { threeDSRequestorChallengeInd: '06', messageCategory: '01' }, applied: true },
    });
    const mastercard = await authenticate({ ...RISK, cardNumber: MASTERCARD_PAN, exemption: 'dataOnly' });
    expect(mastercard).toMatchObject({
      outcome: 'unavailable',
      dataOnly: true,
      exemption: { sent: { threeDSRequestorChallengeInd: '06', messageCategory: '80' }, applied: true },
    });
    const granted = await authenticate({ ...RISK, cardNumber: MASTERCARD_PAN, exemption: 'TRA' });
    expect(granted.authentication.eci).toBe('06');
  });

  it('is refused with a challenge when the risk data alone would challenge', async () => {
    const answer = await authenticate({
      ...RISK,
      exemption: 'TRA',
      riskData: { account: { previousSuspiciousActivity: true } },
    });
    expect(answer.outcome).toBe('challenged');
    expect(answer.exemption).toMatchObject({ requested: 'TRA', applied: false, downgraded: false });
  });

  it('noChallengeRequestedTRAPerformed is reported as the TRA exemption', async () => {
    const answer = await authenticate({ ...RISK, preference: 'noChallengeRequestedTRAPerformed' });
    expect(answer.exemption).toEqual({
      requested: 'TRA',
      sent: { threeDSRequestorChallengeInd: '05', messageCategory: '01' },
      applied: true,
      downgraded: false,
    });
  });

  it('without an exemption, an answer has no exemption field', async () => {
    const answer = await authenticate({ ...RISK, preference: 'noChallengeRequested' });
    expect(answer.exemption).toBeUndefined();
  });
});

describe('the exemption test names (2.3.1)', () => {
  it('3ds2-exemption-granted grants low value, sent as 10', async () => {
    const answer = await authenticate({ cardHolderName: '3ds2-exemption-granted', exemption: 'lowValue' });
    expect(answer).toMatchObject({
      outcome: 'authenticated',
      status: 'I',
      authentication: { version: '2.3.1' },
      exemption: { sent: { threeDSRequestorChallengeInd: '10' }, applied: true, downgraded: false },
    });
  });

  it('3ds2-exemption-refused challenges; verification and GET carry the same result', async () => {
    const reference = newReference();
    const answer = await authenticate({
      reference,
      cardHolderName: '3ds2-exemption-refused',
      exemption: 'secureCorporate',
    });
    expect(answer.outcome).toBe('challenged');
    const result = {
      requested: 'secureCorporate',
      sent: { threeDSRequestorChallengeInd: '11', messageCategory: '01' },
      applied: false,
      downgraded: false,
    };
    expect(answer.exemption).toEqual(result);
    await completeChallenge(answer.challenge.jwt, ['1234']);
    const verified = await (
      await threeDs('verification', verifyBody(reference, answer.challenge.reference))
    ).json<Json>();
    expect(verified.outcome).toBe('authenticated');
    expect(verified.exemption).toEqual(result);
    const got = await transaction(reference);
    expect(got.state).toBe('completed');
    expect(got.result.exemption).toEqual(result);
  });

  it('another test name decides as without one, and says the exemption was not applied', async () => {
    const answer = await authenticate({ cardHolderName: '3ds2-frictionless-identified', exemption: 'TRA' });
    expect(answer).toMatchObject({ outcome: 'authenticated', status: 'Y' });
    expect(answer.exemption).toMatchObject({ applied: false, downgraded: false });
  });

  it('20 identical requests with an exemption get one answer', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-exemption-granted', exemption: 'TRA' });
    const answers = await burst(20, () => threeDs('authenticate', body).then((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.exemption.applied).toBe(true);
  });
});

describe('exemptions refused before anything is decided', () => {
  it('low value above 30 EUR or 25 GBP, at $.exemption.type', async () => {
    const gbp = await refused({ ...RISK, amount: 2501, exemption: 'lowValue' });
    expect(gbp.validationErrors).toEqual([
      expect.objectContaining({ errorName: 'fieldHasInvalidValue', jsonPath: '$.exemption.type' }),
    ]);
    await refused({ ...RISK, amount: 3001, currency: 'EUR', exemption: 'lowValue' });
    expect(
      (await authenticate({ ...RISK, amount: 3000, currency: 'EUR', exemption: 'lowValue' })).exemption,
    ).toBeDefined();
  });

  it('low value in a currency with no limit (the schemes’ or the entity’s)', async () => {
    const usd = await refused({ ...RISK, currency: 'USD', exemption: 'lowValue' });
    expect(usd.validationErrors[0].jsonPath).toBe('$.exemption.type');
  });

  it('an exemption beside a challenge preference, at $.challenge.preference', async () => {
    const both = await refused({ ...RISK, preference: 'challengeMandated', exemption: 'TRA' });
    expect(both.validationErrors).toEqual([
      expect.objectContaining({ errorName: 'fieldHasInvalidValue', jsonPath: '$.challenge.preference' }),
    ]);
  });

  it('an exemption that is not one, at $.exemption.type', async () => {
    const response = await threeDs('authenticate', { ...authenticateBody(RISK), exemption: { type: 'lowRisk' } });
    expect(response.status).toBe(400);
    expect((await response.json<Json>()).validationErrors[0].jsonPath).toBe('$.exemption.type');
  });
});
