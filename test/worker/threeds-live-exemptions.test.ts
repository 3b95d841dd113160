import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { threeDsObject } from './projection-helpers';
import {
  card,
  endChallenge,
  expectValidMessages,
  liveBody,
  liveHarness,
  liveJson,
  verifyBodyOf,
  type Json,
} from './live-helpers';

/**
 * Exemptions in `live` (docs/threeds.md "Exemptions"): the AReq carries the exemption as its
 * version allows, checked field by field by the fake 3DS Server's Directory Server, which grants
 * (`…8…`) or refuses with a challenge (`…9…`) what it is asked; the answer says what became of it.
 * Cards: last four digits, 1: versions (1 2.1.0, 2 2.2.0, 3 2.3.1 only), 2: 1 no 3DS Method.
 */

async function authenticated(suffix: string, exemption: string, o: { cardNumber?: string } = {}) {
  const h = liveHarness();
  const body = liveBody(suffix, { browser: true, exemption, ...(o.cardNumber ? { cardNumber: o.cardNumber } : {}) });
  const answer = await liveJson(h, 'authenticate', body);
  const preauth = h.providerAnswers.find((a) => a.op === 'preauth')!;
  const saw = await expectValidMessages(preauth.body.threeDSServerTransID);
  return { h, body, answer, areq: saw.areq as Json, ares: saw.ares as Json | undefined };
}

describe('an exemption in live', () => {
  it('low value on 2.3.1 is sent as 10; granted: I, transChallengeExemption 10, applied', async () => {
    const { answer, areq } = await authenticated('3180', 'lowValue');
    expect(areq.threeDSRequestorChallengeInd).toEqual(['10']);
    expect(areq.messageCategory).toBe('01');
    expect(answer).toMatchObject({
      outcome: 'authenticated',
      status: 'I',
      authentication: { version: '2.3.1', exemption: '10' },
      exemption: {
        requested: 'lowValue',
        sent: { threeDSRequestorChallengeInd: '10', messageCategory: '01' },
        applied: true,
        downgraded: false,
      },
    });
  });

  it('low value on 2.2.0 is downgraded to 02: the ACS sees no exemption and answers Y', async () => {
    const { answer, areq } = await authenticated('2180', 'lowValue');
    expect(areq.threeDSRequestorChallengeInd).toBe('02');
    expect(answer).toMatchObject({
      outcome: 'authenticated',
      status: 'Y',
      exemption: { sent: { threeDSRequestorChallengeInd: '02' }, applied: false, downgraded: true },
    });
  });

  it('TRA on 2.2.0 is 05 and granted; on 2.1.0, which has no 05, it is downgraded', async () => {
    const tra = await authenticated('2180', 'TRA');
    expect(tra.areq.threeDSRequestorChallengeInd).toBe('05');
    expect(tra.answer).toMatchObject({ status: 'I', exemption: { applied: true, downgraded: false } });
    const old = await authenticated('1180', 'TRA');
    expect(old.areq.threeDSRequestorChallengeInd).toBe('02');
    expect(old.answer).toMatchObject({ status: 'Y', exemption: { applied: false, downgraded: true } });
  });

  it('data only on Mastercard is message category 80: U reason 80, unavailable with dataOnly: true', async () => {
    const { answer, areq } = await authenticated('3180', 'dataOnly', { cardNumber: card('3180', '531265') });
    expect(areq.messageCategory).toBe('80');
    expect(answer).toMatchObject({
      outcome: 'unavailable',
      status: 'U',
      dataOnly: true,
      exemption: { requested: 'dataOnly', sent: { messageCategory: '80' }, applied: true },
    });
  });

  it('refused with a challenge: challenged, and verification carries the result too', async () => {
    const { h, body, answer, areq } = await authenticated('3192', 'scaDelegation');
    expect(areq.threeDSRequestorChallengeInd).toEqual(['07']);
    expect(answer.outcome).toBe('challenged');
    const refused = {
      requested: 'scaDelegation',
      sent: { threeDSRequestorChallengeInd: '07', messageCategory: '01' },
      applied: false,
      downgraded: false,
    };
    expect(answer.exemption).toEqual(refused);
    await endChallenge(h, answer, 'Y');
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified.outcome).toBe('authenticated');
    expect(verified.exemption).toEqual(refused);
  });
});

describe('a series set up in live', () => {
  const recurring = { type: 'recurring', expiry: `${new Date().getUTCFullYear() + 1}-03-31`, frequencyDays: 30 };

  async function seriesOf(reference: string): Promise<Json | undefined> {
    return runInDurableObject(threeDsObject(reference), (_o, state) => {
      const row = state.storage.sql.exec<{ record: string }>('SELECT record FROM series').toArray()[0];
      return row ? (JSON.parse(row.record) as Json) : undefined;
    });
  }

  it('is kept from a frictionless Y, with the ids a later 3RI names; the AReq says recurring', async () => {
    const h = liveHarness();
    const body: Json = { ...liveBody('2100', { browser: true }), recurring };
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.status).toBe('Y');
    const preauth = h.providerAnswers.find((a) => a.op === 'preauth')!;
    const saw = await expectValidMessages(preauth.body.threeDSServerTransID);
    expect(saw.areq).toMatchObject({ threeDSRequestorAuthenticationInd: '02', recurringFrequency: '30' });
    const series = await seriesOf(body.transactionReference as string);
    expect(series).toMatchObject({
      terms: recurring,
      amount: body.instruction.value.amount,
      version: '2.2.0',
      acsTransactionId: answer.acsTransactionId,
      dsTransactionId: answer.authentication.transactionId,
      method: '01',
      status: 'Y',
    });
    expect(JSON.stringify(series)).not.toContain(body.instruction.paymentInstrument.cardNumber);
    expect(JSON.stringify(series)).not.toContain(answer.authentication.authenticationValue);
  });

  it('is kept after a challenge passed (method 02), not after a failure', async () => {
    const h = liveHarness();
    const body: Json = { ...liveBody('2172', { browser: true, windowSize: '500x600' }), recurring };
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('challenged');
    await endChallenge(h, answer, 'Y');
    await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(await seriesOf(body.transactionReference as string)).toMatchObject({ method: '02', status: 'Y' });
    const failed: Json = { ...liveBody('2110', { browser: true }), recurring };
    expect((await liveJson(liveHarness(), 'authenticate', failed)).status).toBe('N');
    expect(await seriesOf(failed.transactionReference as string)).toBeUndefined();
  });
});
