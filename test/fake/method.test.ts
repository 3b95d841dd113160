import { beforeEach, describe, expect, it } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import {
  api,
  areqFor,
  base64UrlJson,
  base64UrlText,
  expectAres,
  expectErro,
  METHOD_NOTIFICATION_URL,
  ORIGIN,
  pageForm,
  postForm,
  preauth,
  resetFake,
  submitsItself,
  transaction,
  type Json,
} from './fake-client';

/**
 * The 3DS Method at the fake ACS (the second of the last four digits), and the threeDSCompInd
 * the DS then accepts: Y once the method completed, N when it was never invoked or never
 * completed, U without a method URL.
 */

beforeEach(resetFake);

function methodData(threeDSServerTransID: string, padded = false): string {
  return base64UrlJson({ threeDSServerTransID, threeDSMethodNotificationURL: METHOD_NOTIFICATION_URL }, padded);
}

function invoke(url: string, threeDSServerTransID: string, padded = false) {
  return postForm(url, { threeDSMethodData: methodData(threeDSServerTransID, padded) });
}

async function authWith(card: string, crd: Json, threeDSCompInd: string, version: EmvVersion = '2.2.0') {
  return api(
    'auth',
    areqFor(version, { threeDSServerTransID: crd.threeDSServerTransID, acctNumber: card, threeDSCompInd }),
  );
}

describe('digit 0: the method completes', () => {
  it.each([
    ['unpadded', false],
    ['padded', true],
  ])('takes %s threeDSMethodData and notifies the requestor at once, unpadded', async (_, padded) => {
    const card = scenarioCard('2003');
    const crd = await preauth(card);
    // This payload's base64url has padding to drop, so the two cases differ.
    expect(methodData(crd.threeDSServerTransID, true)).toMatch(/=$/);
    const { status, html } = await invoke(crd.threeDSMethodURL, crd.threeDSServerTransID, padded);
    expect(status).toBe(200);
    expect(submitsItself(html)).toBe(true);
    const { action, fields } = pageForm(html);
    expect(action).toBe(METHOD_NOTIFICATION_URL);
    expect(fields['threeDSMethodData']).not.toMatch(/=/);
    expect(JSON.parse(base64UrlText(fields['threeDSMethodData']!))).toEqual({
      threeDSServerTransID: crd.threeDSServerTransID,
    });
    const { method } = await transaction(crd.threeDSServerTransID);
    expect(method.offered).toBe(true);
    expect(typeof method.invokedAt).toBe('number');
    expect(method.completedAt).toBe(method.invokedAt);
  });

  it('then wants threeDSCompInd Y, and refuses N: Erro 305 "Invalid ThreeDSCompInd"', async () => {
    const card = scenarioCard('2003');
    const crd = await preauth(card);
    await invoke(crd.threeDSMethodURL, crd.threeDSServerTransID);
    const erro = expectErro(await authWith(card, crd, 'N'), '305', 'A');
    expect(erro.errorDescription).toBe('Invalid ThreeDSCompInd');
    expect(erro.errorDetail).toContain('"Y"');
    expectAres(await authWith(card, crd, 'Y'));
  });

  it('never invoked: wants N, refuses Y and U', async () => {
    const card = scenarioCard('2003');
    const crd = await preauth(card);
    expectErro(await authWith(card, crd, 'Y'), '305');
    expectErro(await authWith(card, crd, 'U'), '305');
    expectAres(await authWith(card, crd, 'N'));
    expect((await transaction(crd.threeDSServerTransID)).method).toEqual({ offered: true });
  });
});

describe('digit 1: no method URL', () => {
  it('wants U and refuses Y and N', async () => {
    const card = scenarioCard('2103');
    const crd = await preauth(card);
    expect(expectErro(await authWith(card, crd, 'N'), '305').errorDetail).toContain('"U"');
    expectErro(await authWith(card, crd, 'Y'), '305');
    expectAres(await authWith(card, crd, 'U'));
  });

  it('refuses an invocation of the method URL it never named', async () => {
    const crd = await preauth(scenarioCard('2103'));
    const { status, html } = await invoke(`${ORIGIN}/acs/method`, crd.threeDSServerTransID);
    expect(status).toBe(404);
    expect(submitsItself(html)).toBe(false);
    expect((await transaction(crd.threeDSServerTransID)).method).toEqual({ offered: false });
  });
});

describe('digit 2: the method never completes', () => {
  it('answers a page that does nothing, records the invocation only, and wants N', async () => {
    const card = scenarioCard('2203');
    const crd = await preauth(card);
    const { status, html } = await invoke(crd.threeDSMethodURL, crd.threeDSServerTransID);
    expect(status).toBe(200);
    expect(html).not.toContain('<form');
    expect(html).not.toContain('<script');
    const { method } = await transaction(crd.threeDSServerTransID);
    expect(typeof method.invokedAt).toBe('number');
    expect(method.completedAt).toBeUndefined();
    expect(expectErro(await authWith(card, crd, 'Y'), '305').errorDetail).toContain('did not complete');
    expectAres(await authWith(card, crd, 'N'));
  });
});

describe('digit 6 of the versions: one method URL per version', () => {
  it('the chosen version’s method counts; another version’s does not', async () => {
    const card = scenarioCard('6003');
    const crd = await preauth(card);
    const [v220, v231] = crd.acsProtocolVersions as Json[];
    await invoke(v220!.threeDSMethodURL, crd.threeDSServerTransID);
    expect((await transaction(crd.threeDSServerTransID)).method.invokedVersion).toBe('2.2.0');
    // An AReq of 2.3.1 after the 2.2.0 method: the 2.3.1 method was never invoked.
    expectErro(await authWith(card, crd, 'Y', '2.3.1'), '305');
    await invoke(v231!.threeDSMethodURL, crd.threeDSServerTransID);
    expectAres(await authWith(card, crd, 'Y', '2.3.1'));
  });

  it('refuses the shared URL for a card of per-version URLs, and a per-version URL for the others', async () => {
    const perVersion = await preauth(scenarioCard('6003'));
    expect((await invoke(`${ORIGIN}/acs/method`, perVersion.threeDSServerTransID)).status).toBe(404);
    const shared = await preauth(scenarioCard('0003'));
    expect((await invoke(`${ORIGIN}/acs/method/2.2.0`, shared.threeDSServerTransID)).status).toBe(404);
    expect((await transaction(shared.threeDSServerTransID)).method.invokedAt).toBeUndefined();
  });
});

describe('refused invocations', () => {
  it.each([
    ['no threeDSMethodData', {}],
    ['not base64url', { threeDSMethodData: '%%%' }],
    ['no notification URL', { threeDSMethodData: base64UrlJson({ threeDSServerTransID: crypto.randomUUID() }) }],
  ])('%s: 400', async (_, fields) => {
    expect((await postForm('/acs/method', fields as Record<string, string>)).status).toBe(400);
  });

  it('an unknown transaction: 404', async () => {
    expect((await invoke(`${ORIGIN}/acs/method`, crypto.randomUUID())).status).toBe(404);
  });
});

describe('the page', () => {
  it('has a strict CSP: nothing loads, its one script runs by nonce, its form goes to the notification origin', async () => {
    const crd = await preauth(scenarioCard('2003'));
    const { html, response } = await invoke(crd.threeDSMethodURL, crd.threeDSServerTransID);
    const policy = response.headers.get('Content-Security-Policy')!;
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain(`script-src 'nonce-${nonce}'`);
    expect(policy).toContain('form-action https://requestor.test');
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/\bsrc=|<link/);
    // Framed by the requestor's pages: nothing forbids it.
    expect(response.headers.get('X-Frame-Options')).toBeNull();
    expect(policy).not.toContain('frame-ancestors');
  });

  it('draws a fresh nonce for each page', async () => {
    const crd = await preauth(scenarioCard('2003'));
    const first = await invoke(crd.threeDSMethodURL, crd.threeDSServerTransID);
    const second = await invoke(crd.threeDSMethodURL, crd.threeDSServerTransID);
    expect(first.response.headers.get('Content-Security-Policy')).not.toBe(
      second.response.headers.get('Content-Security-Policy'),
    );
  });
});
