import { beforeEach, describe, expect, it } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import {
  advanceClock,
  api,
  areqFor,
  expectAres,
  expectEmv,
  expectErro,
  ORIGIN,
  preauth,
  prepareAndAuthenticate,
  resetFake,
  transaction,
  type Json,
} from './fake-client';

/**
 * POST /auth: the ARes of every ARes digit in every version it exists in, and each Erro in the
 * order the fake's 3DS Server, DS and ACS check an AReq.
 */

beforeEach(resetFake);

const VERSIONS: EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];

/** The versions digit of a card that speaks exactly `version`. */
const only = (version: EmvVersion): string => ({ '2.1.0': '1', '2.2.0': '2', '2.3.1': '3' })[version];

it('the AReq fixture of each version passes its rules (so that the tests below test the fake)', () => {
  for (const version of VERSIONS) {
    expectEmv(
      'AReq',
      version,
      areqFor(version, {
        threeDSServerTransID: crypto.randomUUID(),
        acctNumber: scenarioCard('0000'),
        threeDSCompInd: 'U',
      }),
    );
  }
});

describe('exemptions, by the third digit (8 grants, 9 refuses)', () => {
  it.each([
    ['2.2.0', '05', {}],
    ['2.3.1', '10', { transChallengeExemption: '10' }],
  ] as const)('8 on %s: I for %s', async (version, indicator, more) => {
    const ind = version === '2.3.1' ? [indicator] : indicator;
    const { answer } = await prepareAndAuthenticate(scenarioCard(`${only(version)}180`), version, {
      threeDSRequestorChallengeInd: ind,
    });
    expect(expectAres(answer)).toMatchObject({ transStatus: 'I', eci: '07', ...more });
  });

  it('8: data only (message category 80) is U, reason 80, Mastercard ECI 04', async () => {
    const { answer } = await prepareAndAuthenticate(scenarioCard('2180', '510010'), '2.2.0', {
      messageCategory: '80',
      threeDSRequestorChallengeInd: '06',
    });
    expect(expectAres(answer)).toMatchObject({ transStatus: 'U', transStatusReason: '80', eci: '04' });
  });

  it('8 and 9 with no exemption asked: Y; 9 with one: a challenge', async () => {
    for (const suffix of ['2180', '2192']) {
      const { answer } = await prepareAndAuthenticate(scenarioCard(suffix), '2.2.0', {
        threeDSRequestorChallengeInd: '02',
      });
      expect(expectAres(answer).transStatus).toBe('Y');
    }
    const { answer } = await prepareAndAuthenticate(scenarioCard('2192'), '2.2.0', {
      threeDSRequestorChallengeInd: '07',
    });
    expect(expectAres(answer)).toMatchObject({ transStatus: 'C', acsChallengeMandated: 'Y' });
  });
});

describe('the ARes, by the third digit', () => {
  const isCavv = (value: unknown) => expect(value).toMatch(/^[A-Za-z0-9+/]{27}=$/);

  it.each(VERSIONS)('0: frictionless Y, eci 05 (Mastercard 02), a CAVV; %s', async (version) => {
    const visa = expectAres((await prepareAndAuthenticate(scenarioCard(`${only(version)}100`), version)).answer);
    expect(visa).toMatchObject({ messageVersion: version, transStatus: 'Y', eci: '05' });
    isCavv(visa.authenticationValue);
    const mastercard = expectAres(
      (await prepareAndAuthenticate(scenarioCard(`${only(version)}100`, '510010'), version)).answer,
    );
    expect(mastercard).toMatchObject({ transStatus: 'Y', eci: '02' });
    isCavv(mastercard.authenticationValue);
  });

  it.each(VERSIONS)('1: N, reason 01; %s', async (version) => {
    const ares = expectAres((await prepareAndAuthenticate(scenarioCard(`${only(version)}110`), version)).answer);
    expect(ares).toMatchObject({ transStatus: 'N', transStatusReason: '01' });
    expect(ares.authenticationValue).toBeUndefined();
  });

  it.each(VERSIONS)('2: A, eci 06 (Mastercard 01), a CAVV; %s', async (version) => {
    const visa = expectAres((await prepareAndAuthenticate(scenarioCard(`${only(version)}120`), version)).answer);
    expect(visa).toMatchObject({ transStatus: 'A', eci: '06' });
    isCavv(visa.authenticationValue);
    const mastercard = expectAres(
      (await prepareAndAuthenticate(scenarioCard(`${only(version)}120`, '222100'), version)).answer,
    );
    expect(mastercard).toMatchObject({ transStatus: 'A', eci: '01' });
  });

  it.each(VERSIONS)('3: R, reason 11; %s', async (version) => {
    const ares = expectAres((await prepareAndAuthenticate(scenarioCard(`${only(version)}130`), version)).answer);
    expect(ares).toMatchObject({ transStatus: 'R', transStatusReason: '11' });
  });

  it('4: I, eci 07 (Mastercard 00); 2.3.1 acknowledges exemption 05', async () => {
    const v220 = expectAres((await prepareAndAuthenticate(scenarioCard('2140'), '2.2.0')).answer);
    expect(v220).toMatchObject({ transStatus: 'I', eci: '07' });
    expect(v220.transChallengeExemption).toBeUndefined();
    const v231 = expectAres((await prepareAndAuthenticate(scenarioCard('3140', '510010'), '2.3.1')).answer);
    expect(v231).toMatchObject({ transStatus: 'I', eci: '00', transChallengeExemption: '05' });
  });

  it('4: I does not exist in 2.1.0, so an AReq of 2.1.0 for such a card gets Erro 102', async () => {
    expectErro((await prepareAndAuthenticate(scenarioCard('0140'), '2.1.0')).answer, '102', 'D');
  });

  it.each([
    ['2.1.0', '14'],
    ['2.2.0', '22'],
    ['2.3.1', '22'],
  ] as const)('5: U, reason 22 (14 in 2.1.0, whose reasons stop at 21); %s', async (version, reason) => {
    const ares = expectAres((await prepareAndAuthenticate(scenarioCard(`${only(version)}150`), version)).answer);
    expect(ares).toMatchObject({ transStatus: 'U', transStatusReason: reason });
  });

  it.each(VERSIONS)('6: the DS times out: Erro 405 "Connection timeout" (D); %s', async (version) => {
    const { crd, answer } = await prepareAndAuthenticate(scenarioCard(`${only(version)}160`), version);
    const erro = expectErro(answer, '405', 'D');
    expect(erro.errorDescription).toBe('Connection timeout');
    expect(erro.messageVersion).toBe(version);
    expect(erro.threeDSServerTransID).toBe(crd.threeDSServerTransID);
  });

  it.each(VERSIONS)('7: C, with acsURL, acsChallengeMandated Y, a one-time code; %s', async (version) => {
    const ares = expectAres((await prepareAndAuthenticate(scenarioCard(`${only(version)}172`), version)).answer);
    expect(ares).toMatchObject({ transStatus: 'C', acsURL: `${ORIGIN}/acs/challenge`, acsChallengeMandated: 'Y' });
    if (version === '2.3.1') expect(ares.authenticationMethod).toEqual(['02']);
    else expect(ares.authenticationType).toBe('02');
  });

  it('names the transaction, and new ACS and DS transaction ids, in every ARes', async () => {
    const { crd, answer } = await prepareAndAuthenticate(scenarioCard('2100'), '2.2.0');
    const ares = expectAres(answer);
    expect(ares.threeDSServerTransID).toBe(crd.threeDSServerTransID);
    expect(ares.acsTransID).not.toBe(ares.dsTransID);
    expect(ares.acsReferenceNumber).toBe('fake-3ds-server-acs');
    expect(ares.dsReferenceNumber).toBe('fake-3ds-server-ds');
  });

  it('keeps the AReq, the ARes and when it answered, and counts the calls', async () => {
    const { crd, answer } = await prepareAndAuthenticate(scenarioCard('2100'), '2.2.0');
    const tx = await transaction(crd.threeDSServerTransID);
    expect(tx.areq.acctNumber).toBe(scenarioCard('2100'));
    expect(tx.ares).toEqual(answer.json);
    expect(typeof tx.aresAt).toBe('number');
    expect(tx.authCalls).toBe(1);
  });
});

describe('versions: an AReq must use one the card range supports', () => {
  it.each([
    ['2003', '2.3.1', 'a 2.2.0-only card at 2.3.1'],
    ['1003', '2.2.0', 'a 2.1.0-only card at 2.2.0'],
    ['4003', '2.3.1', 'ACS to 2.2.0 (DS to 2.3.1) at 2.3.1'],
    ['5003', '2.1.0', 'ACS from 2.2.0 at 2.1.0'],
    ['6003', '2.1.0', 'ACS 2.2.0 and 2.3.1 listed, at 2.1.0'],
  ] as const)('…%s at %s (%s): Erro 102 (D)', async (suffix, version, _) => {
    const erro = expectErro((await prepareAndAuthenticate(scenarioCard(suffix), version)).answer, '102', 'D');
    expect(erro.messageVersion).toBe(version);
  });

  it.each([
    ['4003', '2.2.0'],
    ['5003', '2.3.1'],
    ['0003', '2.1.0'],
    ['0003', '2.3.1'],
  ] as const)('…%s at %s: an ARes', async (suffix, version) => {
    expectAres((await prepareAndAuthenticate(scenarioCard(suffix), version, { threeDSCompInd: 'N' })).answer);
  });

  it('a version the fake does not speak: Erro 102', async () => {
    const crd = await preauth(scenarioCard('0003'));
    const areq = { ...areqFor('2.2.0', { threeDSServerTransID: crd.threeDSServerTransID }), messageVersion: '2.0.1' };
    expectErro(await api('auth', areq), '102', 'D');
  });
});

describe('Erro, in the order of the checks', () => {
  async function prepared(suffix = '2103'): Promise<{ card: string; crd: Json; areq: Json }> {
    const card = scenarioCard(suffix);
    const crd = await preauth(card);
    const areq = areqFor('2.2.0', {
      threeDSServerTransID: crd.threeDSServerTransID,
      acctNumber: card,
      threeDSCompInd: 'U',
    });
    return { card, crd, areq };
  }

  it('101: a body that is not JSON, or not an AReq (S)', async () => {
    expectErro(await api('auth', undefined, { rawBody: 'not json' }), '101', 'S');
    expectErro(await api('auth', [1, 2]), '101', 'S');
    const { areq } = await prepared();
    expectErro(await api('auth', { ...areq, messageType: 'PReq' }), '101', 'S');
  });

  it('201: no messageVersion', async () => {
    const { areq } = await prepared();
    const { messageVersion: _, ...rest } = areq;
    expect(expectErro(await api('auth', rest), '201', 'D').errorDetail).toBe('messageVersion');
  });

  it('201: a required field is missing; errorDetail names the fields (D)', async () => {
    const { areq, crd } = await prepared();
    const { purchaseAmount: _, browserUserAgent: __, ...rest } = areq;
    const erro = expectErro(await api('auth', rest), '201', 'D');
    expect(erro.errorDetail.split(', ').sort()).toEqual(['browserUserAgent', 'purchaseAmount']);
    expect(erro.threeDSServerTransID).toBe(crd.threeDSServerTransID);
    expect(erro.errorMessageType).toBe('AReq');
  });

  it('203: a field of the wrong format, or one the table does not have (D)', async () => {
    const { areq } = await prepared();
    expect(expectErro(await api('auth', { ...areq, purchaseCurrency: 'GBP' }), '203', 'D').errorDetail).toBe(
      'purchaseCurrency',
    );
    expect(expectErro(await api('auth', { ...areq, notAField: '1' }), '203', 'D').errorDetail).toBe('notAField');
    expect(expectErro(await api('auth', { ...areq, acctInfo: { chAccAgeInd: '09' } }), '203', 'D').errorDetail).toBe(
      'acctInfo.chAccAgeInd',
    );
  });

  it('203: an exemption indicator the version does not have (05 in 2.1.0, 10 in 2.2.0)', async () => {
    const { areq } = await prepared();
    expect(expectErro(await api('auth', { ...areq, threeDSRequestorChallengeInd: '10' }), '203', 'D').errorDetail).toBe(
      'threeDSRequestorChallengeInd',
    );
    const card = scenarioCard('1103');
    const crd = await preauth(card);
    const old = areqFor('2.1.0', {
      threeDSServerTransID: crd.threeDSServerTransID,
      acctNumber: card,
      threeDSCompInd: 'U',
    });
    expect(expectErro(await api('auth', { ...old, threeDSRequestorChallengeInd: '05' }), '203', 'D').errorDetail).toBe(
      'threeDSRequestorChallengeInd',
    );
  });

  it('a field check fails before the transaction is looked up, and still counts the call', async () => {
    const { areq, crd } = await prepared();
    expectErro(await api('auth', { ...areq, mcc: '12' }), '203');
    expect((await transaction(crd.threeDSServerTransID)).authCalls).toBe(1);
    expectAres(await api('auth', areq));
    expect((await transaction(crd.threeDSServerTransID)).authCalls).toBe(2);
  });

  it('301: an id /preauth never gave (S)', async () => {
    const { areq } = await prepared();
    const id = crypto.randomUUID();
    const erro = expectErro(await api('auth', { ...areq, threeDSServerTransID: id }), '301', 'S');
    expect(erro.threeDSServerTransID).toBe(id);
  });

  it('301: an id prepared more than 80 s ago (fake clock)', async () => {
    const { areq } = await prepared();
    await advanceClock(81_000);
    expectErro(await api('auth', areq), '301', 'S');
  });

  it('an id prepared less than 80 s ago still authenticates', async () => {
    const { areq } = await prepared();
    await advanceClock(60_000);
    expectAres(await api('auth', areq));
  });

  it('305: a second AReq for the same id, "AReq already received" (S)', async () => {
    const { areq, crd } = await prepared();
    expectAres(await api('auth', areq));
    const erro = expectErro(await api('auth', areq), '305', 'S');
    expect(erro.errorDescription).toBe('AReq already received');
    expect((await transaction(crd.threeDSServerTransID)).authCalls).toBe(2);
  });

  it('305: an acctNumber that is not the prepared card', async () => {
    const { areq } = await prepared('2103');
    const erro = expectErro(await api('auth', { ...areq, acctNumber: scenarioCard('2103', '400020') }), '305', 'S');
    expect(erro.errorDescription).toBe('Transaction data not valid');
  });

  it('405 after all the checks: a DS timeout still refuses a wrong threeDSCompInd first', async () => {
    const { areq } = await prepared('2163');
    expect(expectErro(await api('auth', { ...areq, threeDSCompInd: 'Y' }), '305').errorDescription).toBe(
      'Invalid ThreeDSCompInd',
    );
    expectErro(await api('auth', areq), '405', 'D');
    // The DS had the AReq: it is not sent again.
    expect(expectErro(await api('auth', areq), '305').errorDescription).toBe('AReq already received');
  });
});
