import { env, exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import fakeWorker from '../../src/fake-3ds-server/index';
import type { FakeEnv } from '../../src/fake-3ds-server/env';
import { emvMessageProblems, emvProblems } from '../../src/emv/emv-validator';
import type { EmvMessageType, EmvVersion } from '../../src/emv/emv-rules';

/**
 * The fake 3DS Server, called the way its callers call it: the provider API as the service's
 * adapter does (JSON, the APIKey header), the ACS pages as a browser does (form posts), the
 * control routes as a test does. Every EMV message the fake answers is checked against its
 * version's field rules here, so no test can forget to.
 */

export type Json = Record<string, any>;

export const ORIGIN = 'https://fake.test';
export const API_KEY = 'fake-3ds-api-key';
export const NOTIFICATION_URL = 'https://requestor.test/3ds/challenge/notify/n1';
export const METHOD_NOTIFICATION_URL = 'https://requestor.test/3ds/method/m1';
const BRW_PA = { channel: 'BRW', category: 'PA' } as const;

/**
 * The fake's fetch handler, called as the runtime calls it: not through `exports.default.fetch`,
 * whose cost in vitest-pool-workers 0.15 grows with every request a file makes (it re-imports the
 * main module each time; docs/benchmarks.md "The test suite").
 */
export function fakeFetch(request: Request): Promise<Response> {
  // In the fake project, the bindings are the fake's own (src/fake-3ds-server/wrangler.toml);
  // `cloudflare:workers` types them as the service's.
  return fakeWorker.fetch(request, env as unknown as FakeEnv);
}

/** The fake through the runtime's own entry point: what proves its default export is what workerd runs. */
export function fakeViaEntrypoint(request: Request): Promise<Response> {
  return exports.default.fetch(request);
}

/** A request to the fake. */
export function fake(path: string, init: RequestInit = {}): Promise<Response> {
  return fakeFetch(new Request(`${ORIGIN}${path}`, init));
}

/** Expects an EMV message to pass its version's field rules (browser, payment). */
export function expectEmv(message: EmvMessageType, version: EmvVersion, value: unknown): void {
  expect(emvProblems(message, version, BRW_PA, value), `${message} ${version}: ${JSON.stringify(value)}`).toEqual([]);
}

/** Expects a message of the transaction whose AReq is `areq` to pass its rules in that AReq's channel. */
export function expectEmvOf(message: EmvMessageType, version: EmvVersion, value: unknown, areq: unknown): void {
  expect(emvMessageProblems(message, version, value, areq), `${message} ${version}: ${JSON.stringify(value)}`).toEqual(
    [],
  );
}

/**
 * Expects a CRD to pass the table of its range: 2.2.0's for ranges up to 2.2.0, 2.3.1's beyond.
 * Neither table lists `acsProtocolVersions` (3dsecure.io added it in 2024; the research notes'
 * §1.12), so it is checked here on its own.
 */
export function expectCrd(crd: Json): void {
  const { acsProtocolVersions, ...tabled } = crd;
  expectEmv('CRD', crd.acsEndProtocolVersion === '2.3.1' ? '2.3.1' : '2.2.0', tabled);
  expect(Array.isArray(acsProtocolVersions)).toBe(true);
  for (const entry of acsProtocolVersions as Json[]) {
    expect(Object.keys(entry).every((k) => ['version', 'threeDSMethodURL'].includes(k))).toBe(true);
    expect(['2.1.0', '2.2.0', '2.3.1']).toContain(entry.version);
    if (entry.threeDSMethodURL !== undefined) expect(entry.threeDSMethodURL).toMatch(/^https?:\/\//);
  }
}

/** Checks any message the provider API answered, by its type; an ARes in its AReq's channel. */
function expectValidAnswer(json: Json, areq: unknown): void {
  switch (json.messageType) {
    case 'CRD':
      return expectCrd(json);
    case 'ARes':
      return expectEmvOf(json.messageType, json.messageVersion, json, areq);
    case 'RReq':
      // An app's RReq names its SDK's transaction: checked in the app channel.
      return expectEmvOf('RReq', json.messageVersion, json, {
        deviceChannel: json.sdkTransID || json.acsRenderingType ? '01' : '02',
      });
    case 'Erro':
      return expectEmv(json.messageType, json.messageVersion, json);
    default:
      throw new Error(`the provider answered no EMV message: ${JSON.stringify(json)}`);
  }
}

export interface ApiAnswer {
  status: number;
  json: Json;
  response: Response;
}

/** A provider API call (`/preauth`, `/auth`, `/postauth`), as the service's adapter makes it. */
export async function api(
  endpoint: 'preauth' | 'auth' | 'postauth',
  body: unknown,
  options: { apiKey?: string | null; rawBody?: string } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
  const key = options.apiKey === undefined ? API_KEY : options.apiKey;
  if (key !== null) headers['APIKey'] = key;
  const response = await fake(`/${endpoint}`, {
    method: 'POST',
    headers,
    body: options.rawBody ?? JSON.stringify(body),
  });
  expect(response.headers.get('X-Fake-3DS-Server')).toBe('fake-3ds-server');
  expect(response.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
  const json = await response.json<Json>();
  expectValidAnswer(json, endpoint === 'auth' ? body : undefined);
  return { status: response.status, json, response };
}

/** Expects an Erro with this code (and component, when given), HTTP 200. */
export function expectErro(answer: ApiAnswer, code: string, component?: string): Json {
  expect(answer.json.messageType, JSON.stringify(answer.json)).toBe('Erro');
  expect(answer.json.errorCode, JSON.stringify(answer.json)).toBe(code);
  if (component !== undefined) expect(answer.json.errorComponent).toBe(component);
  expect(answer.status).toBe(200);
  return answer.json;
}

/** Prepares a card: its CRD. */
export async function preauth(acctNumber: string): Promise<Json> {
  const answer = await api('preauth', { acctNumber });
  expect(answer.json.messageType, JSON.stringify(answer.json)).toBe('CRD');
  return answer.json;
}

/** A minimal valid browser payment AReq of each version (its validity is a test of its own). */
export function areqFor(version: EmvVersion, fields: Json): Json {
  const browser =
    version === '2.1.0'
      ? {}
      : version === '2.2.0'
        ? { browserJavascriptEnabled: true }
        : { browserJavascriptEnabled: true, acceptLanguage: ['en-GB'] };
  return {
    messageType: 'AReq',
    messageVersion: version,
    deviceChannel: '02',
    messageCategory: '01',
    acquirerBIN: '412345',
    acquirerMerchantID: 'M-000123',
    mcc: '5732',
    merchantName: 'Example Hardware',
    merchantCountryCode: '826',
    ...(version === '2.3.1' ? { acquirerCountryCode: '826', acquirerCountryCodeSource: '01' } : {}),
    browserAcceptHeader: 'text/html',
    browserUserAgent: 'Mozilla/5.0 (test)',
    browserLanguage: 'en-GB',
    browserColorDepth: '24',
    browserJavaEnabled: false,
    browserScreenHeight: '1080',
    browserScreenWidth: '1920',
    browserTZ: '-60',
    ...browser,
    notificationURL: NOTIFICATION_URL,
    purchaseAmount: '12995',
    purchaseCurrency: '826',
    purchaseExponent: '2',
    purchaseDate: '20261124102030',
    threeDSRequestorAuthenticationInd: '01',
    threeDSRequestorURL: 'https://shop.example/about',
    ...fields,
  };
}

/**
 * Prepares a card and sends its AReq at `version` with the threeDSCompInd the fake expects when
 * the method was not run (U without a method URL, N with one), unless `fields` say otherwise.
 */
export async function prepareAndAuthenticate(
  acctNumber: string,
  version: EmvVersion,
  fields: Json = {},
): Promise<{ crd: Json; answer: ApiAnswer }> {
  const crd = await preauth(acctNumber);
  const threeDSCompInd = crd.threeDSMethodURL === undefined ? 'U' : 'N';
  const areq = areqFor(version, {
    threeDSServerTransID: crd.threeDSServerTransID,
    acctNumber,
    threeDSCompInd,
    ...fields,
  });
  return { crd, answer: await api('auth', areq) };
}

/** Expects an ARes and answers it. */
export function expectAres(answer: ApiAnswer): Json {
  expect(answer.json.messageType, JSON.stringify(answer.json)).toBe('ARes');
  expect(answer.status).toBe(200);
  return answer.json;
}

/** A form post to one of the fake's pages; the page's HTML and status. */
export async function postForm(
  pathOrUrl: string,
  fields: Record<string, string>,
): Promise<{ status: number; html: string; response: Response }> {
  const path = pathOrUrl.startsWith(ORIGIN) ? pathOrUrl.slice(ORIGIN.length) : pathOrUrl;
  const response = await fake(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
  expect(response.headers.get('X-Fake-3DS-Server')).toBe('fake-3ds-server');
  return { status: response.status, html: await response.text(), response };
}

const unescape = (text: string): string =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The first form of a page: where it posts and its hidden fields. */
export function pageForm(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]*)"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`no form in ${html}`);
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[unescape(name!)] = unescape(value!);
  }
  return { action: unescape(action), fields };
}

/** Whether a page submits its form by itself (the one inline script). */
export function submitsItself(html: string): boolean {
  return /<script nonce="[^"]+">document\.getElementById\('next'\)\.submit\(\);<\/script>/.test(html);
}

/** The text of a base64url value (padded or not), for the tests' own reading. */
export function base64UrlText(value: string): string {
  const standard = value.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, '='));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** Base64url of a JSON value, as the requestor encodes it (unpadded unless asked). */
export function base64UrlJson(value: unknown, padded = false): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  const url = btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
  return padded ? url : url.replace(/=+$/, '');
}

/** Decodes and checks the final CRes an ACS page or the control route carries. */
export function decodeCres(cres: string, version: EmvVersion): Json {
  expect(cres, 'the fake sends its CRes padded').toMatch(/=$/);
  const message = JSON.parse(base64UrlText(cres)) as Json;
  expectEmv('CRes', version, message);
  return message;
}

/** A control route call: its status and JSON. */
export async function control(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const response = await fake(`/_fake${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
  return { status: response.status, json: await response.json<Json>() };
}

/** What the fake knows of a transaction. */
export async function transaction(threeDSServerTransID: string): Promise<Json> {
  const { status, json } = await control('GET', `/transactions/${threeDSServerTransID}`);
  expect(status).toBe(200);
  return json;
}

/** Moves the fake's clock. */
export async function advanceClock(ms: number): Promise<void> {
  expect((await control('POST', '/clock', { advanceMs: ms })).status).toBe(200);
}

/** Puts the fake's clock and faults back as they start. */
export async function resetFake(): Promise<void> {
  expect((await control('POST', '/clock', { reset: true })).json).toEqual({ offsetMs: 0 });
  expect((await control('DELETE', '/faults')).json).toEqual({ faults: [] });
}
