import { beforeEach, describe, expect, it } from 'vitest';
import { LATE_DEFAULT_MS, parseFault } from '../../src/fake-3ds-server/faults';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import {
  api,
  API_KEY,
  areqFor,
  control,
  expectAres,
  expectEmv,
  fake,
  preauth,
  resetFake,
  transaction,
  type Json,
} from './fake-client';

/**
 * Faults armed through POST /_fake/faults: each kind, on the endpoint it names, for as many
 * calls as it says. No test measures time: a hang is seen still open after a short wait, and a
 * late answer is seen processed before it is answered.
 */

beforeEach(resetFake);

const arm = (fault: Json) => control('POST', '/faults', fault);

/** A provider call whose answer is read as text, whatever it is. */
function rawCall(endpoint: string, body: unknown): Promise<Response> {
  return fake(`/${endpoint}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json; charset=utf-8', APIKey: API_KEY },
    body: JSON.stringify(body),
  });
}

async function preparedAReq(suffix = '2103'): Promise<Json> {
  const card = scenarioCard(suffix);
  const crd = await preauth(card);
  return areqFor('2.2.0', { threeDSServerTransID: crd.threeDSServerTransID, acctNumber: card, threeDSCompInd: 'U' });
}

describe('each kind', () => {
  it('401: text/plain "Invalid API Key", the call not processed', async () => {
    await arm({ endpoint: 'preauth', kind: '401' });
    const response = await rawCall('preauth', { acctNumber: scenarioCard('2103') });
    expect(response.status).toBe(401);
    expect(response.headers.get('Content-Type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('Invalid API Key');
    await preauth(scenarioCard('2103'));
  });

  it.each([500, 503])(
    '%i: that status with an Erro of the 3DS Server; the AReq never reached the DS',
    async (status) => {
      const areq = await preparedAReq();
      await arm({ endpoint: 'auth', kind: String(status) });
      const answer = await api('auth', areq);
      expect(answer.status).toBe(status);
      expect(answer.json).toMatchObject({ messageType: 'Erro', errorComponent: 'S', errorCode: '403' });
      expect((await transaction(areq.threeDSServerTransID)).authCalls).toBe(0);
      expectAres(await api('auth', areq));
    },
  );

  it('malformed: 200 with a body that is not JSON', async () => {
    await arm({ endpoint: 'postauth', kind: 'malformed' });
    const response = await rawCall('postauth', { threeDSServerTransID: crypto.randomUUID() });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(() => JSON.parse(text) as unknown).toThrow();
  });

  it('hang: no answer (still none after a wait), and the call is not processed', async () => {
    const areq = await preparedAReq();
    await arm({ endpoint: 'auth', kind: 'hang' });
    let answered = false;
    const pending = rawCall('auth', areq).then(
      () => (answered = true),
      () => (answered = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    expect((await transaction(areq.threeDSServerTransID)).authCalls).toBe(0);
    // The fault is used up: the next call is answered.
    expectAres(await api('auth', areq));
    void pending;
  });

  it('late: the AReq is processed (counted, answered at the provider) before the answer leaves', async () => {
    const areq = await preparedAReq();
    await arm({ endpoint: 'auth', kind: 'late', delayMs: 60_000 });
    let answered = false;
    const pending = rawCall('auth', areq).then(
      () => (answered = true),
      () => (answered = true),
    );
    let tx: Json = {};
    for (let i = 0; i < 200 && tx.ares === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      tx = await transaction(areq.threeDSServerTransID);
    }
    expect(tx.authCalls).toBe(1);
    expectEmv('ARes', '2.2.0', tx.ares);
    expect(answered).toBe(false);
    void pending;
  });

  it('late: the real answer, once delayMs has passed', async () => {
    const areq = await preparedAReq();
    await arm({ endpoint: 'auth', kind: 'late', delayMs: 1 });
    const ares = expectAres(await api('auth', areq));
    expect(ares).toEqual((await transaction(areq.threeDSServerTransID)).ares);
  });

  it('late waits 20 s unless the fault says', () => {
    expect(LATE_DEFAULT_MS).toBe(20_000);
    expect(parseFault({ endpoint: 'auth', kind: 'late' })).toEqual({ endpoint: 'auth', kind: 'late', times: 1 });
  });
});

describe('arming', () => {
  it('hits only its endpoint, for `times` calls, then the endpoint answers as usual', async () => {
    await arm({ endpoint: 'preauth', kind: '503', times: 2 });
    expect((await rawCall('preauth', { acctNumber: scenarioCard('2103') })).status).toBe(503);
    expect((await rawCall('postauth', { threeDSServerTransID: crypto.randomUUID() })).status).toBe(200);
    expect((await rawCall('preauth', { acctNumber: scenarioCard('2103') })).status).toBe(503);
    expect((await rawCall('preauth', { acctNumber: scenarioCard('2103') })).status).toBe(200);
  });

  it('a call with a wrong key uses up no fault', async () => {
    await arm({ endpoint: 'preauth', kind: '500' });
    const refused = await fake('/preauth', { method: 'POST', headers: { APIKey: 'wrong' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect((await rawCall('preauth', { acctNumber: scenarioCard('2103') })).status).toBe(500);
  });

  it('queues faults in the order armed; lists them; DELETE clears them', async () => {
    await arm({ endpoint: 'auth', kind: '500' });
    const { json } = await arm({ endpoint: 'auth', kind: 'late', times: 3, delayMs: 5 });
    expect(json.faults).toEqual([
      { endpoint: 'auth', kind: '500', times: 1 },
      { endpoint: 'auth', kind: 'late', times: 3, delayMs: 5 },
    ]);
    expect((await control('GET', '/faults')).json.faults).toHaveLength(2);
    expect((await control('DELETE', '/faults')).json).toEqual({ faults: [] });
    expect((await control('GET', '/faults')).json).toEqual({ faults: [] });
  });

  it.each([
    {},
    { endpoint: 'lookup', kind: '500' },
    { endpoint: 'auth', kind: '502' },
    { endpoint: 'auth', kind: '500', times: 0 },
    { endpoint: 'auth', kind: 'late', delayMs: -1 },
    { endpoint: 'auth', kind: 'late', delayMs: 'soon' },
  ])('refuses %j: 400', async (fault) => {
    expect((await arm(fault)).status).toBe(400);
  });
});
