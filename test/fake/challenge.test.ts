import { beforeEach, describe, expect, it } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { challenged, creqFor, expectEndPage, followAutoPost, openChallenge, submitCode } from './challenge-steps';
import {
  advanceClock,
  api,
  expectErro,
  ORIGIN,
  pageForm,
  postForm,
  resetFake,
  submitsItself,
  transaction,
  type Json,
} from './fake-client';

/**
 * The challenge at the fake ACS (the fourth of the last four digits): the CReq, the pages, the
 * final CRes through the browser, and the RReq /postauth returns, with the 30 s and 300 s windows
 * on the fake clock.
 */

beforeEach(resetFake);

const VERSIONS: EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];
const only = (version: EmvVersion): string => ({ '2.1.0': '1', '2.2.0': '2', '2.3.1': '3' })[version];

async function postauth(threeDSServerTransID: string) {
  return api('postauth', { threeDSServerTransID });
}

async function rreqOf(threeDSServerTransID: string): Promise<Json> {
  const answer = await postauth(threeDSServerTransID);
  expect(answer.json.messageType, JSON.stringify(answer.json)).toBe('RReq');
  expect(answer.status).toBe(200);
  return answer.json;
}

describe('auto-pass (…70) and auto-fail (…71)', () => {
  it.each(VERSIONS)('auto-pass: the page submits itself, the CRes and the RReq say Y; %s', async (version) => {
    const { ares } = await challenged(scenarioCard(`${only(version)}170`), version);
    const first = await openChallenge(ares);
    expect(first.status).toBe(200);
    const end = expectEndPage((await followAutoPost(first.html)).html, version);
    expect(end.cres).toEqual({
      threeDSServerTransID: ares.threeDSServerTransID,
      acsTransID: ares.acsTransID,
      messageType: 'CRes',
      messageVersion: version,
      transStatus: 'Y',
    });
    expect(end.threeDSSessionData).toBe('c2Vzc2lvbi0x');
    const rreq = await rreqOf(ares.threeDSServerTransID);
    expect(rreq).toMatchObject({
      messageVersion: version,
      messageCategory: '01',
      acsTransID: ares.acsTransID,
      dsTransID: ares.dsTransID,
      transStatus: 'Y',
      eci: '05',
      interactionCounter: '01',
    });
    expect(rreq.authenticationValue).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    if (version === '2.3.1') expect(rreq.authenticationMethod).toEqual(['02']);
    else expect(rreq.authenticationType).toBe('02');
  });

  it.each(VERSIONS)('auto-fail: N, reason 01; %s', async (version) => {
    const { ares } = await challenged(scenarioCard(`${only(version)}171`), version);
    const end = expectEndPage((await followAutoPost((await openChallenge(ares)).html)).html, version);
    expect(end.cres.transStatus).toBe('N');
    const rreq = await rreqOf(ares.threeDSServerTransID);
    expect(rreq).toMatchObject({ transStatus: 'N', transStatusReason: '01' });
    expect(rreq.authenticationValue).toBeUndefined();
  });

  it('Mastercard: the RReq of a pass has eci 02', async () => {
    const { ares } = await challenged(scenarioCard('2170', '510010'), '2.2.0');
    await followAutoPost((await openChallenge(ares)).html);
    expect((await rreqOf(ares.threeDSServerTransID)).eci).toBe('02');
  });
});

describe('manual (…72)', () => {
  it('shows a code field, Submit and Cancel, and says the code that passes is 1234', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const { status, html } = await openChallenge(ares);
    expect(status).toBe(200);
    expect(submitsItself(html)).toBe(false);
    expect(html).toContain('id="code"');
    expect(html).toContain('<button type="submit" name="action" value="submit">Submit</button>');
    expect(html).toContain('<button type="submit" name="action" value="cancel">Cancel</button>');
    expect(html).toContain('1234');
    expect(pageForm(html).action).toBe(`${ORIGIN}/acs/challenge/submit`);
  });

  it.each(VERSIONS)('the right code passes: Y; %s', async (version) => {
    const { ares } = await challenged(scenarioCard(`${only(version)}172`), version);
    const { html } = await submitCode((await openChallenge(ares)).html, 'submit', '1234');
    expect(expectEndPage(html, version).cres.transStatus).toBe('Y');
    expect(await rreqOf(ares.threeDSServerTransID)).toMatchObject({ transStatus: 'Y', interactionCounter: '01' });
  });

  it.each(VERSIONS)('three wrong codes fail: N, reason 19; %s', async (version) => {
    const { ares } = await challenged(scenarioCard(`${only(version)}172`), version);
    let page = (await openChallenge(ares)).html;
    for (const left of [2, 1]) {
      page = (await submitCode(page, 'submit', '0000')).html;
      expect(page).toContain(`${left} attempt`);
      expectErro(await postauth(ares.threeDSServerTransID), '305');
    }
    const end = expectEndPage((await submitCode(page, 'submit', '9999')).html, version);
    expect(end.cres.transStatus).toBe('N');
    expect(await rreqOf(ares.threeDSServerTransID)).toMatchObject({
      transStatus: 'N',
      transStatusReason: '19',
      interactionCounter: '03',
    });
  });

  it('a wrong code and then the right one passes', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const retry = (await submitCode((await openChallenge(ares)).html, 'submit', '1111')).html;
    expectEndPage((await submitCode(retry, 'submit', '1234')).html, '2.2.0');
    expect(await rreqOf(ares.threeDSServerTransID)).toMatchObject({ transStatus: 'Y', interactionCounter: '02' });
  });

  it.each(VERSIONS)('Cancel fails: N, challengeCancel 01; %s', async (version) => {
    const { ares } = await challenged(scenarioCard(`${only(version)}172`), version);
    const end = expectEndPage((await submitCode((await openChallenge(ares)).html, 'cancel')).html, version);
    expect(end.cres.transStatus).toBe('N');
    expect(await rreqOf(ares.threeDSServerTransID)).toMatchObject({ transStatus: 'N', challengeCancel: '01' });
  });

  it('refuses a submission once the challenge has ended (409), and a second CReq too', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const page = (await openChallenge(ares)).html;
    await submitCode(page, 'submit', '1234');
    expect((await submitCode(page, 'submit', '1234')).status).toBe(409);
    expect((await openChallenge(ares)).status).toBe(409);
  });

  it('refuses a submission before any CReq, and an automatic one on a manual challenge', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const ids = { threeDSServerTransID: ares.threeDSServerTransID, acsTransID: ares.acsTransID };
    expect((await postForm('/acs/challenge/submit', { ...ids, action: 'submit', code: '1234' })).status).toBe(409);
    await openChallenge(ares);
    expect((await postForm('/acs/challenge/submit', { ...ids, action: 'auto' })).status).toBe(400);
    expect((await postForm('/acs/challenge/submit', { ...ids, acsTransID: crypto.randomUUID() })).status).toBe(400);
  });

  it('keeps threeDSSessionData from the CReq to the end', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const session = 'x'.repeat(1024);
    const end = expectEndPage((await submitCode((await openChallenge(ares, session)).html, 'cancel')).html, '2.2.0');
    expect(end.threeDSSessionData).toBe(session);
    expect((await transaction(ares.threeDSServerTransID)).challenge.threeDSSessionData).toBe(session);
  });
});

describe('the CReq', () => {
  it('refuses a padded creq, as the real sandbox does (and the challenge goes on)', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const padded = creqFor(ares, {}, true);
    expect(padded).toMatch(/=$/);
    const { status, html } = await openChallenge(ares, undefined, padded);
    expect(status).toBe(400);
    expect(html).toContain('without padding');
    expect((await openChallenge(ares)).status).toBe(200);
  });

  it.each([
    ['a dot (not base64url)', `${'a'.repeat(64)}.${'B'.repeat(22)}`],
    ['padding', 'c2Vzc2lvbi0x='],
    ['a space', 'c2Vzc2lv bi0x'],
    ['1025 characters', 'A'.repeat(1025)],
    ['nothing (a field posted empty)', ''],
  ])('refuses a threeDSSessionData with %s, as EMV takes only 1 to 1024 base64url characters: 400', async (_, data) => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const { status, html } = await openChallenge(ares, data);
    expect(status).toBe(400);
    expect(html).toContain('threeDSSessionData must be 1 to 1024 base64url characters');
    // The challenge goes on with a valid one, of any length up to 1024.
    expect((await openChallenge(ares, `${'a'.repeat(64)}${'B-_'.repeat(320)}`)).status).toBe(200);
  });

  it.each([
    ['no creq', ''],
    ['not base64url', '***'],
    ['base64url of no JSON', 'bm90IGpzb24'],
  ])('refuses %s: 400', async (_, creq) => {
    expect((await postForm('/acs/challenge', { creq })).status).toBe(400);
  });

  it('checks the CReq against its rules (challengeWindowSize, messageVersion, unknown fields)', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const refused = async (overrides: Json) =>
      expect((await openChallenge(ares, undefined, creqFor(ares, overrides))).status).toBe(400);
    await refused({ challengeWindowSize: '06' });
    await refused({ messageVersion: '2.0.0' });
    await refused({ extra: 'field' });
    await refused({ messageType: 'CRes' });
  });

  it('checks its ids and version against the transaction', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const status = async (overrides: Json) => (await openChallenge(ares, undefined, creqFor(ares, overrides))).status;
    expect(await status({ acsTransID: crypto.randomUUID() })).toBe(400);
    expect(await status({ messageVersion: '2.3.1' })).toBe(400);
    expect(await status({ threeDSServerTransID: crypto.randomUUID() })).toBe(404);
    // Another challenge's id with this one's acsTransID.
    const another = (await challenged(scenarioCard('2172'), '2.2.0')).ares;
    expect(await status({ threeDSServerTransID: another.threeDSServerTransID })).toBe(400);
  });

  it('for a frictionless transaction: 404', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const other = await api('preauth', { acctNumber: scenarioCard('2103') });
    const creq = creqFor({ ...ares, threeDSServerTransID: other.json.threeDSServerTransID });
    expect((await postForm('/acs/challenge', { creq })).status).toBe(404);
  });
});

describe('the 30 s window between the ARes and the CReq (fake clock)', () => {
  it('a CReq 31 s after the ARes ends the challenge: an error page, RReq N with challengeCancel 05', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    await advanceClock(31_000);
    const { status, html } = await openChallenge(ares);
    expect(status).toBe(410);
    expect(submitsItself(html)).toBe(false);
    const rreq = await rreqOf(ares.threeDSServerTransID);
    expect(rreq).toMatchObject({ transStatus: 'N', challengeCancel: '05', interactionCounter: '00' });
    expect((await openChallenge(ares)).status).toBe(409);
  });

  it('a CReq 20 s after the ARes starts it', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    await advanceClock(20_000);
    expect((await openChallenge(ares)).status).toBe(200);
  });

  it('a challenge started in time may end later', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const page = (await openChallenge(ares)).html;
    await advanceClock(120_000);
    expectEndPage((await submitCode(page, 'submit', '1234')).html, '2.2.0');
  });
});

describe('/postauth', () => {
  it('answers "No RReq has been received" (305) until the challenge ends', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const erro = expectErro(await postauth(ares.threeDSServerTransID), '305', 'S');
    expect(erro.errorDescription).toBe('No RReq has been received');
    expect(erro.messageVersion).toBe('2.2.0');
    await openChallenge(ares);
    expectErro(await postauth(ares.threeDSServerTransID), '305');
  });

  it('answers 305 for a frictionless transaction, which has no RReq', async () => {
    const card = scenarioCard('2103');
    const crd = (await api('preauth', { acctNumber: card })).json;
    expect(expectErro(await postauth(crd.threeDSServerTransID), '305').errorDescription).toBe(
      'No RReq has been received',
    );
  });

  it('answers "Unknown threeDSServerTransID" (203) for an id it never gave, or no UUID', async () => {
    const id = crypto.randomUUID();
    const erro = expectErro(await postauth(id), '203', 'S');
    expect(erro.errorDescription).toBe('Unknown threeDSServerTransID');
    expect(erro.threeDSServerTransID).toBe(id);
    expectErro(await postauth('not-a-uuid'), '203');
    expectErro(await api('postauth', undefined, { rawBody: '[' }), '101');
  });

  it('keeps the RReq 300 s after it arrived, then answers 203 (fake clock)', async () => {
    const { ares } = await challenged(scenarioCard('2170'), '2.2.0');
    await followAutoPost((await openChallenge(ares)).html);
    await advanceClock(290_000);
    await rreqOf(ares.threeDSServerTransID);
    await advanceClock(11_000);
    expect(expectErro(await postauth(ares.threeDSServerTransID), '203').errorDescription).toBe(
      'Unknown threeDSServerTransID',
    );
  });

  it('answers the same RReq each time within the 300 s, and counts the calls', async () => {
    const { ares } = await challenged(scenarioCard('2170'), '2.2.0');
    await followAutoPost((await openChallenge(ares)).html);
    const first = await rreqOf(ares.threeDSServerTransID);
    expect(await rreqOf(ares.threeDSServerTransID)).toEqual(first);
    const tx = await transaction(ares.threeDSServerTransID);
    expect(tx.postauthCalls).toBe(2);
    expect(tx.rreq).toEqual(first);
    expect(typeof tx.rreqAt).toBe('number');
  });

  it('…73, a late RReq: the first 2 calls after the end answer "No RReq", then the RReq', async () => {
    const { ares } = await challenged(scenarioCard('2173'), '2.2.0');
    expectErro(await postauth(ares.threeDSServerTransID), '305');
    expectEndPage((await submitCode((await openChallenge(ares)).html, 'submit', '1234')).html, '2.2.0');
    for (let i = 0; i < 2; i++) {
      expect(expectErro(await postauth(ares.threeDSServerTransID), '305').errorDescription).toBe(
        'No RReq has been received',
      );
    }
    expect((await rreqOf(ares.threeDSServerTransID)).transStatus).toBe('Y');
  });

  it('…74, an RReq already expired: 203 after the end', async () => {
    const { ares } = await challenged(scenarioCard('2174'), '2.2.0');
    expectErro(await postauth(ares.threeDSServerTransID), '305');
    expectEndPage((await submitCode((await openChallenge(ares)).html, 'submit', '1234')).html, '2.2.0');
    expectErro(await postauth(ares.threeDSServerTransID), '203');
    expectErro(await postauth(ares.threeDSServerTransID), '203');
  });
});

describe('the pages', () => {
  it('the end page posts only to the notification URL, under a nonce CSP', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const { html, response } = await submitCode((await openChallenge(ares)).html, 'cancel');
    const policy = response.headers.get('Content-Security-Policy')!;
    expect(policy).toContain('form-action https://requestor.test');
    expect(policy).not.toContain('fake.test');
    expect(html).toContain(`<script nonce="${/'nonce-([^']+)'/.exec(policy)?.[1]}">`);
  });

  it('the code page runs no script and posts only to the ACS', async () => {
    const { ares } = await challenged(scenarioCard('2172'), '2.2.0');
    const { html, response } = await openChallenge(ares);
    expect(html).not.toContain('<script');
    expect(response.headers.get('Content-Security-Policy')).toContain(`form-action ${ORIGIN}`);
  });
});
