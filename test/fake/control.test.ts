import { beforeEach, describe, expect, it } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { challenged, openChallenge } from './challenge-steps';
import {
  api,
  API_KEY,
  control,
  decodeCres,
  expectEmv,
  fake,
  fakeFetch,
  fakeViaEntrypoint,
  NOTIFICATION_URL,
  ORIGIN,
  preauth,
  prepareAndAuthenticate,
  resetFake,
  transaction,
} from './fake-client';

/**
 * The control routes under /_fake/: ending a challenge without a browser, what the fake knows
 * of a transaction, and the clock.
 */

beforeEach(resetFake);

const VERSIONS: EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];
const only = (version: EmvVersion): string => ({ '2.1.0': '1', '2.2.0': '2', '2.3.1': '3' })[version];

describe('POST /_fake/challenge/{acsTransID}', () => {
  const cases = [
    ['Y', { transStatus: 'Y', eci: '05' }, 'Y'],
    ['N', { transStatus: 'N', transStatusReason: '01' }, 'N'],
    ['cancel', { transStatus: 'N', challengeCancel: '01' }, 'N'],
    ['timeout', { transStatus: 'N', challengeCancel: '04', interactionCounter: '00' }, 'N'],
  ] as const;

  for (const version of VERSIONS) {
    it.each(cases)(
      `%s ends the challenge (${version}): the RReq, the CRes the ACS would post`,
      async (result, rreq, cres) => {
        const { ares } = await challenged(scenarioCard(`${only(version)}172`), version);
        const { status, json } = await control('POST', `/challenge/${ares.acsTransID}`, { result });
        expect(status).toBe(200);
        expect(json.rreq).toMatchObject({ ...rreq, messageVersion: version, acsTransID: ares.acsTransID });
        expectEmv('RReq', version, json.rreq);
        expect(decodeCres(json.cres as string, version).transStatus).toBe(cres);
        expect(json.notificationURL).toBe(NOTIFICATION_URL);
        // No CReq was posted, so there is no session data to give back.
        expect(json.threeDSSessionData).toBeUndefined();
        // /postauth now has the RReq.
        expect((await api('postauth', { threeDSServerTransID: ares.threeDSServerTransID })).json).toEqual(json.rreq);
      },
    );
  }

  it('gives back the threeDSSessionData of the CReq, when the browser had posted one', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    await openChallenge(ares, 'session-42');
    const { json } = await control('POST', `/challenge/${ares.acsTransID}`, { result: 'Y' });
    expect(json.threeDSSessionData).toBe('session-42');
  });

  it('answers 409 once the challenge has ended', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    expect((await control('POST', `/challenge/${ares.acsTransID}`, { result: 'N' })).status).toBe(200);
    expect((await control('POST', `/challenge/${ares.acsTransID}`, { result: 'Y' })).status).toBe(409);
    // The browser finds it ended too.
    expect((await openChallenge(ares)).status).toBe(409);
  });

  it('answers 404 for an acsTransID of no challenge, 400 for an unknown result', async () => {
    expect((await control('POST', `/challenge/${crypto.randomUUID()}`, { result: 'Y' })).status).toBe(404);
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    expect((await control('POST', `/challenge/${ares.acsTransID}`, { result: 'maybe' })).status).toBe(400);
    expect((await control('POST', `/challenge/${ares.acsTransID}`)).status).toBe(400);
  });

  it('ends an automatic challenge too, whatever its page would have done', async () => {
    const { ares } = await challenged(scenarioCard('2171'), '2.2.0');
    const { json } = await control('POST', `/challenge/${ares.acsTransID}`, { result: 'Y' });
    expect(json.rreq.transStatus).toBe('Y');
  });
});

describe('GET /_fake/transactions/{threeDSServerTransID}', () => {
  it('shows the calls, the method, the AReq, the ARes and the RReq', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    await control('POST', `/challenge/${ares.acsTransID}`, { result: 'Y' });
    await api('postauth', { threeDSServerTransID: ares.threeDSServerTransID });
    const tx = await transaction(ares.threeDSServerTransID);
    expect(tx).toMatchObject({
      authCalls: 1,
      postauthCalls: 1,
      method: { offered: false },
      areq: { messageType: 'AReq', threeDSServerTransID: ares.threeDSServerTransID },
      ares,
      rreq: { messageType: 'RReq', transStatus: 'Y' },
    });
    expect(typeof tx.preparedAt).toBe('number');
  });

  it('keeps the last Erro /auth answered', async () => {
    const { crd, answer } = await prepareAndAuthenticate(scenarioCard('2103'), '2.2.0', { threeDSCompInd: 'Y' });
    expect((await transaction(crd.threeDSServerTransID)).lastErro).toEqual(answer.json);
  });

  it('answers 404 for an id no /preauth gave', async () => {
    expect((await control('GET', `/transactions/${crypto.randomUUID()}`)).status).toBe(404);
  });
});

describe('the clock', () => {
  it('starts at offset 0, moves by advanceMs, resets', async () => {
    expect((await control('GET', '/clock')).json).toEqual({ offsetMs: 0 });
    expect((await control('POST', '/clock', { advanceMs: 80_000 })).json).toEqual({ offsetMs: 80_000 });
    expect((await control('POST', '/clock', { advanceMs: 1_000 })).json).toEqual({ offsetMs: 81_000 });
    expect((await control('GET', '/clock')).json).toEqual({ offsetMs: 81_000 });
    expect((await control('POST', '/clock', { reset: true })).json).toEqual({ offsetMs: 0 });
  });

  it('stamps what it records on the fake clock', async () => {
    const before = Date.now();
    await control('POST', '/clock', { advanceMs: 3_600_000 });
    const crd = await preauth(scenarioCard('2103'));
    expect((await transaction(crd.threeDSServerTransID)).preparedAt).toBeGreaterThanOrEqual(before + 3_600_000);
  });

  it.each([{}, { advanceMs: 'soon' }, { advanceMs: 1.5 }, { reset: 'yes' }])('refuses %j: 400', async (body) => {
    expect((await control('POST', '/clock', body)).status).toBe(400);
  });

  it('takes no API key, and answers JSON marked as the fake', async () => {
    const response = await fake('/_fake/clock');
    expect(response.status).toBe(200);
    expect(response.headers.get('X-Fake-3DS-Server')).toBe('fake-3ds-server');
  });
});

describe("the fake's entry point", () => {
  it("answers through the runtime's own entry point (exports.default) as through its handler, which the other tests call", async () => {
    const request = () =>
      new Request(`${ORIGIN}/preauth`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', APIKey: API_KEY },
        body: JSON.stringify({ acctNumber: scenarioCard('1000') }),
      });
    const viaRuntime = await fakeViaEntrypoint(request());
    const direct = await fakeFetch(request());
    expect(viaRuntime.status).toBe(direct.status);
    // Each preparation is a transaction of its own: equal but for its id.
    const { threeDSServerTransID: a, ...fromRuntime } = await viaRuntime.json<Record<string, unknown>>();
    const { threeDSServerTransID: b, ...fromHandler } = await direct.json<Record<string, unknown>>();
    expect(a).not.toBe(b);
    expect(fromRuntime).toEqual(fromHandler);
    const landing = await fakeViaEntrypoint(new Request(`${ORIGIN}/`));
    expect(landing.status).toBe(200);
    expect(await landing.text()).toBe(await (await fakeFetch(new Request(`${ORIGIN}/`))).text());
  });
});
