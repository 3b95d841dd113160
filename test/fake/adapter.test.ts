import { beforeEach, describe, expect, it } from 'vitest';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { chooseVersion } from '../../src/threeds/live/emv-versions';
import type { AuthenticationRequest, CardRangeData } from '../../src/threeds/live/emv-messages';
import {
  AuthenticationOutcomeUnknown,
  ProviderRefusedCredentials,
  ProviderUnavailable,
  threeDsecureIo,
  type ThreeDsecureIoConfig,
} from '../../src/threeds/live/three-ds-server';
import { challenged } from './challenge-steps';
import { API_KEY, areqFor, control, fakeFetch, ORIGIN, resetFake, transaction } from './fake-client';

/**
 * The service's own adapter (src/threeds/live/three-ds-server.ts) against the fake, through a
 * transport like the service binding it uses in tests: the fake's answers mean to the adapter
 * what the brief of each scenario says. Deadlines here are short only where the fake never
 * answers in time (a hang, a 60 s late answer), so no test depends on the machine's speed.
 */

beforeEach(resetFake);

function provider(options: Partial<ThreeDsecureIoConfig> = {}) {
  return threeDsecureIo({
    baseUrl: ORIGIN,
    apiKey: API_KEY,
    transport: fakeFetch,
    ...options,
  });
}

async function prepared(suffix: string): Promise<{ card: string; crd: CardRangeData }> {
  const card = scenarioCard(suffix);
  const outcome = await provider().prepare({ acctNumber: card });
  if (outcome.kind !== 'prepared') throw new Error(`not prepared: ${JSON.stringify(outcome)}`);
  return { card, crd: outcome.crd };
}

function areq(card: string, crd: CardRangeData, threeDSCompInd: string): AuthenticationRequest {
  const version = chooseVersion(crd)!.version;
  return areqFor(version, {
    threeDSServerTransID: crd.threeDSServerTransID,
    acctNumber: card,
    threeDSCompInd,
  }) as AuthenticationRequest;
}

describe('prepare', () => {
  it('a card range: prepared; a 9000 card: notEnrolled', async () => {
    expect((await prepared('2003')).crd.messageType).toBe('CRD');
    expect(await provider().prepare({ acctNumber: '9000100111111111' })).toEqual({ kind: 'notEnrolled' });
  });

  it.each([
    ['0003', '2.3.1', `${ORIGIN}/acs/method`],
    ['1003', '2.1.0', `${ORIGIN}/acs/method`],
    ['4003', '2.2.0', `${ORIGIN}/acs/method`],
    ['5003', '2.3.1', `${ORIGIN}/acs/method`],
    ['6003', '2.3.1', `${ORIGIN}/acs/method/2.3.1`],
    ['2103', '2.2.0', undefined],
  ])('…%s: the service chooses %s, method URL %s', async (suffix, version, methodUrl) => {
    const choice = chooseVersion((await prepared(suffix)).crd);
    expect(choice).toEqual({ version, ...(methodUrl ? { methodUrl } : {}) });
  });
});

describe('authenticate', () => {
  it('an ARes, and an Erro the DS answered', async () => {
    const { card, crd } = await prepared('2103');
    const ok = await provider().authenticate(areq(card, crd, 'U'));
    expect(ok.kind === 'ares' && ok.ares.transStatus).toBe('Y');
    const again = await provider().authenticate(areq(card, crd, 'U'));
    expect(again.kind === 'erro' && again.erro.errorCode).toBe('305');
  });

  it('the DS timeout: an Erro 405, not an outage of the provider', async () => {
    const { card, crd } = await prepared('2163');
    const outcome = await provider().authenticate(areq(card, crd, 'U'));
    expect(outcome.kind === 'erro' && outcome.erro.errorCode).toBe('405');
  });
});

describe('result', () => {
  it('pending until the challenge ends, then the RReq; gone for an unknown id', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    expect(await provider().result(ares.threeDSServerTransID)).toEqual({ kind: 'pending' });
    await control('POST', `/challenge/${ares.acsTransID}`, { result: 'Y' });
    const outcome = await provider().result(ares.threeDSServerTransID);
    expect(outcome.kind === 'rreq' && outcome.rreq.transStatus).toBe('Y');
    expect(await provider().result(crypto.randomUUID())).toEqual({ kind: 'gone' });
  });

  it('gone once the RReq is older than 300 s', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    await control('POST', `/challenge/${ares.acsTransID}`, { result: 'N' });
    await control('POST', '/clock', { advanceMs: 301_000 });
    expect(await provider().result(ares.threeDSServerTransID)).toEqual({ kind: 'gone' });
  });

  it('a late RReq: pending twice, then the RReq', async () => {
    const { ares } = await challenged(scenarioCard('2173'), '2.2.0');
    await control('POST', `/challenge/${ares.acsTransID}`, { result: 'Y' });
    expect(await provider().result(ares.threeDSServerTransID)).toEqual({ kind: 'pending' });
    expect(await provider().result(ares.threeDSServerTransID)).toEqual({ kind: 'pending' });
    expect((await provider().result(ares.threeDSServerTransID)).kind).toBe('rreq');
  });
});

describe('faults', () => {
  it('a refused key (the 401 fault, or a wrong key): ProviderRefusedCredentials', async () => {
    await control('POST', '/faults', { endpoint: 'preauth', kind: '401' });
    await expect(provider().prepare({ acctNumber: scenarioCard('2003') })).rejects.toThrow(ProviderRefusedCredentials);
    await expect(provider({ apiKey: 'wrong' }).prepare({ acctNumber: scenarioCard('2003') })).rejects.toThrow(
      ProviderRefusedCredentials,
    );
  });

  it.each(['500', '503'])('%s on /auth: ProviderUnavailable (the AReq may be sent again)', async (kind) => {
    const { card, crd } = await prepared('2103');
    await control('POST', '/faults', { endpoint: 'auth', kind });
    await expect(provider().authenticate(areq(card, crd, 'U'))).rejects.toThrow(ProviderUnavailable);
    expect((await transaction(crd.threeDSServerTransID)).authCalls).toBe(0);
  });

  it('a 200 on /auth that is not JSON: AuthenticationOutcomeUnknown (a 200 says the provider handled it)', async () => {
    const { card, crd } = await prepared('2103');
    await control('POST', '/faults', { endpoint: 'auth', kind: 'malformed' });
    await expect(provider().authenticate(areq(card, crd, 'U'))).rejects.toThrow(AuthenticationOutcomeUnknown);
  });

  it('a hang of /preauth: ProviderUnavailable at the deadline', async () => {
    await control('POST', '/faults', { endpoint: 'preauth', kind: 'hang' });
    const fast = provider({ timeouts: { prepare: 200 } });
    await expect(fast.prepare({ acctNumber: scenarioCard('2003') })).rejects.toThrow(ProviderUnavailable);
  });

  it('a late /auth: AuthenticationOutcomeUnknown, though the provider answered the AReq', async () => {
    const { card, crd } = await prepared('2103');
    await control('POST', '/faults', { endpoint: 'auth', kind: 'late', delayMs: 60_000 });
    const fast = provider({ timeouts: { authenticate: 200 } });
    await expect(fast.authenticate(areq(card, crd, 'U'))).rejects.toThrow(AuthenticationOutcomeUnknown);
    // Processed before the answer: let it land, then look.
    for (let i = 0; i < 200 && (await transaction(crd.threeDSServerTransID)).ares === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await transaction(crd.threeDSServerTransID)).authCalls).toBe(1);
  });
});
