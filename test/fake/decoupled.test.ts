import { beforeEach, describe, expect, it } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import { DECOUPLED_RREQ_MS } from '../../src/fake-3ds-server/scenarios';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import {
  advanceClock,
  api,
  expectAres,
  expectEmv,
  expectErro,
  fake,
  prepareAndAuthenticate,
  resetFake,
  type Json,
} from './fake-client';

/**
 * Decoupled authentication at the fake (docs/fake-3ds-server.md: digit 3 is 7, digit 4 is 5, 6 or
 * 7): an AReq that allows it (threeDSRequestorDecReqInd Y, 2.2.0 and later) gets an ARes D; the
 * RReq arrives 3 s later on the fake's clock (Y for …75, N for …76) or never (…77); the control
 * route ends it at once. Without DecReqInd Y the card is a manual challenge (C).
 */

beforeEach(resetFake);

const DECOUPLED = { threeDSRequestorDecReqInd: 'Y', threeDSRequestorDecMaxTime: '00030' };
const only = (version: EmvVersion): string => ({ '2.1.0': '1', '2.2.0': '2', '2.3.1': '3' })[version];

async function decoupled(suffix: string, version: EmvVersion): Promise<Json> {
  const { answer } = await prepareAndAuthenticate(scenarioCard(`${only(version)}1${suffix}`), version, DECOUPLED);
  const ares = expectAres(answer);
  expectEmv('ARes', version, ares);
  return ares;
}

const postauth = (ares: Json) => api('postauth', { threeDSServerTransID: ares.threeDSServerTransID });

describe('decoupled (…75, …76, …77)', () => {
  it.each(['2.2.0', '2.3.1'] as const)('answers D, then the RReq 3 s later on its clock; %s', async (version) => {
    for (const [suffix, transStatus] of [
      ['75', 'Y'],
      ['76', 'N'],
    ] as const) {
      const ares = await decoupled(suffix, version);
      expect(ares).toMatchObject({ transStatus: 'D', acsDecConInd: 'Y', acsChallengeMandated: 'N' });
      expect(ares.acsURL).toBeUndefined();
      expectErro(await postauth(ares), '305');
      await advanceClock(DECOUPLED_RREQ_MS);
      const rreq = (await postauth(ares)).json;
      expect(rreq).toMatchObject({ messageType: 'RReq', transStatus, acsTransID: ares.acsTransID });
      expectEmv('RReq', version, rreq);
      await resetFake();
    }
  });

  it('…77 never answers; the control route ends it at once, and a second time is 409', async () => {
    const ares = await decoupled('77', '2.2.0');
    await advanceClock(60 * 60_000);
    expectErro(await postauth(ares), '305');
    const ended = await fake(`/_fake/challenge/${ares.acsTransID as string}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ result: 'Y' }),
    });
    expect(ended.status).toBe(200);
    expect((await postauth(ares)).json).toMatchObject({ messageType: 'RReq', transStatus: 'Y' });
    const again = await fake(`/_fake/challenge/${ares.acsTransID as string}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ result: 'N' }),
    });
    expect(again.status).toBe(409);
  });

  it('without threeDSRequestorDecReqInd Y the card is a manual challenge (C)', async () => {
    const { answer } = await prepareAndAuthenticate(scenarioCard('2175'), '2.2.0');
    expect(expectAres(answer).transStatus).toBe('C');
  });

  it('refuses an AReq that allows decoupled without the time', async () => {
    const { answer } = await prepareAndAuthenticate(scenarioCard('2175'), '2.2.0', { threeDSRequestorDecReqInd: 'Y' });
    expect(answer.json.messageType).toBe('Erro');
  });
});
