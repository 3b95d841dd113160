import { beforeEach, describe, expect, it } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { buildThreeRiAReq } from '../../src/threeds/live/three-ri-areq';
import type { MerchantInitiatedRequest } from '../../src/schemas/threeds-requests';
import type { ThreeRiType } from '../../src/threeds/series-rules';
import { emvMessageProblems } from '../../src/emv/emv-validator';
import { api, expectAres, expectErro, preauth, prepareAndAuthenticate, resetFake, type Json } from './fake-client';
import { challenged, followAutoPost, openChallenge } from './challenge-steps';
import { REQUESTOR } from '../unit/requestor-fixture';

/** The RReq of a transaction, once its challenge ended. */
async function postauth(threeDSServerTransID: string): Promise<Json> {
  return (await api('postauth', { threeDSServerTransID })).json;
}

/**
 * A 3RI at the fake's ACS (deviceChannel 03): accepted only when its prior reference is an
 * acsTransID the ACS answered Y or A for the same card; no threeDSCompInd; never a challenge;
 * Mastercard recurring ECI 07. The AReqs are the service's own (src/threeds/live/three-ri-areq.ts).
 */

beforeEach(resetFake);

/** A first, customer-present authentication of `card`: its acsTransID and status. */
async function priorOf(card: string, version: EmvVersion): Promise<Json> {
  return expectAres((await prepareAndAuthenticate(card, version)).answer);
}

/** The 3RI AReq of `card` naming `priorRef`, sent after a new /preauth. */
async function threeRi(card: string, version: EmvVersion, priorRef: string, type: ThreeRiType = 'recurring') {
  const crd = await preauth(card);
  const built = buildThreeRiAReq({
    threeDSServerTransID: crd.threeDSServerTransID,
    now: Date.now(),
    request: {
      transactionReference: 'renewal',
      merchant: { entity: 'default' },
      priorTransactionReference: 'first',
      type,
      instruction: { value: { amount: 1000, currency: 'GBP' }, paymentInstrument: { type: 'card/front' } },
    } as unknown as MerchantInitiatedRequest,
    card: { cardNumber: card, brands: ['mastercard'], fromToken: false },
    requestor: REQUESTOR,
    series: {
      terms: { type: 'recurring', expiry: '2027-06-30', frequencyDays: 30 },
      amount: 2500,
      currency: 'GBP',
      cardHash: 'h',
      brands: ['mastercard'],
      version,
      acsTransactionId: priorRef,
      method: '01',
      authenticatedAt: Date.now() - 60_000,
      status: 'Y',
    },
  });
  if (!built.ok) throw new Error(JSON.stringify(built.errors));
  expect(emvMessageProblems('AReq', version, built.areq)).toEqual([]);
  return api('auth', built.areq);
}

describe('a 3RI at the fake ACS', () => {
  it('authenticates a Mastercard recurring 3RI of a Y prior: Y, ECI 07, no threeDSCompInd asked', async () => {
    const card = scenarioCard('2100', '531265');
    const prior = await priorOf(card, '2.2.0');
    expect(prior.transStatus).toBe('Y');
    const ares = expectAres(await threeRi(card, '2.2.0', prior.acsTransID));
    expect(ares).toMatchObject({ transStatus: 'Y', eci: '07' });
    expect(emvMessageProblems('ARes', '2.2.0', ares, { deviceChannel: '03', messageCategory: '01' })).toEqual([]);
  });

  it('on 2.3.1 too (the prior info is a list), and an add-card 3RI keeps the usual ECI', async () => {
    const card = scenarioCard('3100', '531265');
    const prior = await priorOf(card, '2.3.1');
    expect(expectAres(await threeRi(card, '2.3.1', prior.acsTransID))).toMatchObject({ eci: '07' });
    const addCard = expectAres(await threeRi(card, '2.3.1', prior.acsTransID, 'addCard'));
    expect(addCard).toMatchObject({ transStatus: 'Y', eci: '02' });
  });

  it('refuses a prior reference it never answered, one of another card, and one it answered N: Erro 203', async () => {
    const card = scenarioCard('2100', '531265');
    expectErro(await threeRi(card, '2.2.0', crypto.randomUUID()), '203', 'A');
    const other = await priorOf(scenarioCard('2100', '531266'), '2.2.0');
    expectErro(await threeRi(card, '2.2.0', other.acsTransID), '203', 'A');
    const failedCard = scenarioCard('2110', '531265');
    const failed = await priorOf(failedCard, '2.2.0');
    expect(failed.transStatus).toBe('N');
    const erro = expectErro(await threeRi(failedCard, '2.2.0', failed.acsTransID), '203', 'A');
    expect(erro.errorDetail).toContain('threeDSReqPriorRef');
  });

  it('never challenges a 3RI: a card that would challenge answers N; a challenged prior that passed is a Y', async () => {
    const card = scenarioCard('2170', '531265');
    const { ares } = await challenged(card, '2.2.0');
    // Before its challenge ends, the prior is no Y.
    expectErro(await threeRi(card, '2.2.0', ares.acsTransID), '203', 'A');
    await followAutoPost((await openChallenge(ares)).html);
    expect((await postauth(ares.threeDSServerTransID)).transStatus).toBe('Y');
    const answer = expectAres(await threeRi(card, '2.2.0', ares.acsTransID));
    expect(answer).toMatchObject({ transStatus: 'N', transStatusReason: '01' });
    expect(answer).not.toHaveProperty('acsURL');
  });
});
