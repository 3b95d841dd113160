import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { fromBase64Url } from '../../src/bytes';
import type { EmvMessageType, EmvVersion } from '../../src/emv/emv-rules';
import { emvMessageProblems } from '../../src/emv/emv-validator';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { StorageHarness } from './faulty-env';
import { call } from './helpers';
import {
  authenticateBody,
  hiddenField,
  newReference,
  THREEDS,
  THREEDS_HEADERS,
  type AuthOptions,
} from './threeds-helpers';

/**
 * Live 3-D Secure in the Worker tests (docs/threeds.md "Live"): the Worker with ENVIRONMENT=live
 * in front of the fake 3DS Server provider (docs/fake-3ds-server.md), which the THREEDS_SERVER
 * service binding reaches, wrapped so that any storage or provider call can fail on command.
 * The helpers play the merchant's server, the cardholder's browser and the issuer's ACS.
 */

export type Json = Record<string, any>;

/** Vars of a live Worker, with the default deadlines: a busy machine slows a test, never fails it. */
export const LIVE_VARS = { ENVIRONMENT: 'live' } as const;

/**
 * Short deadlines (the shortest allowed), for a test where a call hangs or answers late: there the
 * deadline is what is tested, and a hung call ends the test quickly.
 */
export function deadlinesFor(when: string): Partial<Env> {
  return when === 'hang' || when === 'late' ? { THREEDS_SERVER_TIMEOUT_MS: '1000', STORAGE_TIMEOUT_MS: '1000' } : {};
}

/** The Worker with live vars, and the transactions' objects reaching the provider through the same harness. */
export function liveHarness(vars: Partial<Env> = {}): StorageHarness {
  return new StorageHarness({ ...LIVE_VARS, ...vars }).providerThroughObjects();
}

/** The fake provider itself (its control routes), not through the wrapper: no call counted. */
export function fake(path: string, init?: RequestInit): Promise<Response> {
  return env.THREEDS_SERVER!.fetch(`${env.THREEDS_SERVER_URL}${path}`, init);
}

export async function fakeTransaction(threeDSServerTransID: string): Promise<Json> {
  const response = await fake(`/_fake/transactions/${threeDSServerTransID}`);
  expect(response.status).toBe(200);
  return response.json();
}

/** A card of the fake's scenario (its last four digits, docs/fake-3ds-server.md "Scenarios"). */
export const card = (suffix: string, prefix?: string): string => scenarioCard(suffix, prefix);

/** The browser fields an AReq needs when no device data collection ran. */
export const BROWSER_FIELDS = {
  browserLanguage: 'en-GB',
  browserColorDepth: '24',
  browserScreenHeight: 1080,
  browserScreenWidth: 1920,
  timeZone: '-60',
  browserJavaEnabled: false,
  browserJavascriptEnabled: true,
  ipAddress: '192.0.2.10',
};

/** An authenticate body for a live card; `browser` adds the browser fields to deviceData. */
export function liveBody(
  suffix: string,
  options: AuthOptions & { browser?: boolean; windowSize?: string } = {},
): Record<string, any> {
  const body = authenticateBody({ cardNumber: card(suffix), ...options });
  if (options.browser) body.deviceData = { ...(body.deviceData as object), ...BROWSER_FIELDS };
  if (options.windowSize) (body.challenge as Json).windowSize = options.windowSize;
  return body;
}

export function liveStep(h: StorageHarness, step: string, body: unknown): Promise<Response> {
  return call(`${THREEDS}/${step}`, { body, headers: THREEDS_HEADERS, via: (r) => h.fetch(r) });
}

export async function liveJson(h: StorageHarness, step: string, body: unknown, status = 200): Promise<Json> {
  const response = await liveStep(h, step, body);
  const answer = await response.json<Json>();
  expect(response.status, JSON.stringify(answer)).toBe(status);
  return answer;
}

/** A browser's form post to one of the Worker's pages. */
export function livePage(
  h: StorageHarness,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return h.fetch(
    new Request(new URL(path, 'https://edge.test'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    }),
  );
}

/** What the live DDC page does: its config (facts URL, give-up time) and the 3DS Method, if any. */
export function ddcPageParts(html: string): {
  factsUrl: string;
  givesUpMs: number;
  message: Json;
  method?: { url: string; data: Json; raw: string };
} {
  const config = JSON.parse(/var config = (\{.*?\});/.exec(html)![1]!) as Json;
  const action = /<form id="method" method="post" action="([^"]+)"/.exec(html)?.[1];
  const raw = hiddenField(html, 'threeDSMethodData');
  return {
    factsUrl: config.factsUrl,
    givesUpMs: config.givesUpMs,
    message: JSON.parse(config.message),
    ...(action && raw
      ? { method: { url: unescape(action), raw, data: JSON.parse(new TextDecoder().decode(fromBase64Url(raw))) } }
      : {}),
  };
}

const unescape = (html: string): string => html.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));

/**
 * deviceDataInitialize with the card, then the DDC page as the browser posts it (with its
 * Accept-Language), its script's facts, and the 3DS Method run at the fake ACS with the ACS's
 * notification posted back, as the hidden frame would. Returns what each step gave.
 */
export async function collectInBrowser(
  h: StorageHarness,
  reference: string,
  cardNumber: string,
  options: { runMethod?: boolean; facts?: Json } = {},
): Promise<{ ddcHtml: string; parts: ReturnType<typeof ddcPageParts>; notified?: string }> {
  const init = await liveJson(h, 'deviceDataInitialize', {
    transactionReference: reference,
    merchant: { entity: 'default' },
    paymentInstrument: { type: 'card/front', cardNumber, cardExpiryDate: { month: 12, year: 2035 } },
  });
  const page = await livePage(
    h,
    '/3ds/ddc',
    { Bin: cardNumber.slice(0, 6), JWT: init.deviceDataCollection.jwt },
    { 'Accept-Language': 'en-GB,en;q=0.8', 'CF-Connecting-IP': '198.51.100.7' },
  );
  expect(page.status).toBe(200);
  const ddcHtml = await page.text();
  const parts = ddcPageParts(ddcHtml);
  const facts = options.facts ?? {
    javascriptEnabled: true,
    javaEnabled: false,
    language: 'en-GB',
    colorDepth: 24,
    screenHeight: 900,
    screenWidth: 1440,
    timeZone: -60,
  };
  const posted = await h.fetch(
    new Request(parts.factsUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(facts),
    }),
  );
  expect(posted.status).toBe(204);
  if (!parts.method || options.runMethod === false) return { ddcHtml, parts };
  // The hidden frame posts threeDSMethodData to the ACS; the ACS's page posts back to us.
  const acs = await fake(new URL(parts.method.url).pathname, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ threeDSMethodData: parts.method.raw }).toString(),
  });
  const acsHtml = await acs.text();
  const notifyUrl = /<form[^>]*action="([^"]+)"/.exec(acsHtml)?.[1];
  if (!notifyUrl) return { ddcHtml, parts }; // the ACS's method never completes
  const notified = await livePage(h, new URL(unescape(notifyUrl)).pathname, {
    threeDSMethodData: hiddenField(acsHtml, 'threeDSMethodData') ?? '',
  });
  expect(notified.status).toBe(200);
  return { ddcHtml, parts, notified: await notified.text() };
}

/** The CReq inside a live challenge answer (base64url JSON). */
export function creqOf(answer: Json): Json {
  return JSON.parse(new TextDecoder().decode(fromBase64Url(answer.challenge.payload as string)));
}

/** The claims of a JWT (not verified: the Worker verifies them). */
export function claimsOf(jwt: string): Json {
  return JSON.parse(new TextDecoder().decode(fromBase64Url(jwt.split('.')[1]!)));
}

/**
 * The issuer ends the challenge (the fake's control route, as the cardholder would on the ACS's
 * page), and the ACS's final page posts `cres` to the Worker's notification URL: the page the
 * cardholder then sees.
 */
export async function endChallenge(
  h: StorageHarness,
  answer: Json,
  result: 'Y' | 'N' | 'cancel' | 'timeout',
  options: { cres?: string } = {},
): Promise<{ html: string; status: number; rreq: Json }> {
  const ended = await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  expect(ended.status).toBe(200);
  const control = await ended.json<Json>();
  const page = await livePage(h, new URL(control.notificationURL).pathname, {
    cres: options.cres ?? control.cres,
    ...(control.threeDSSessionData ? { threeDSSessionData: control.threeDSSessionData } : {}),
  });
  return { html: await page.text(), status: page.status, rreq: control.rreq };
}

/** The ARes the fake provider gave this harness's last authenticate. */
export function lastAres(h: StorageHarness): Json {
  const ares = h.providerAnswers.filter((a) => a.op === 'auth' && a.body.messageType === 'ARes').at(-1);
  if (!ares) throw new Error('no ARes');
  return ares.body;
}

/** The fake's issuer ends the last authenticate's challenge or decoupled authentication now (its control route). */
export async function issuerAnswers(h: StorageHarness, result: 'Y' | 'N'): Promise<void> {
  const response = await fake(`/_fake/challenge/${lastAres(h).acsTransID as string}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  expect(response.status).toBe(200);
}

export function verifyBodyOf(body: Json, answer: Json): Json {
  return {
    transactionReference: body.transactionReference,
    merchant: { entity: 'default' },
    challenge: { reference: answer.challenge.reference },
  };
}

export { newReference };

/** Asserts an EMV message passes its version's field rules (browser channel, payment). */
export function expectValidEmv(message: EmvMessageType, value: Json, areq: Json = value): void {
  const version = value.messageVersion as EmvVersion;
  expect(emvMessageProblems(message, version, value, areq), `${message} ${version}`).toEqual([]);
}

/**
 * Asserts every EMV message the fake holds for a transaction passes its rules: the AReq the
 * service built, the ARes, the Erro, the RReq and the CRes of its challenge.
 */
export async function expectValidMessages(threeDSServerTransID: string): Promise<Json> {
  const saw = await fakeTransaction(threeDSServerTransID);
  if (saw.areq) expectValidEmv('AReq', saw.areq);
  if (saw.ares) expectValidEmv('ARes', saw.ares, saw.areq);
  if (saw.lastErro) expectValidEmv('Erro', saw.lastErro, saw.areq);
  if (saw.rreq) expectValidEmv('RReq', saw.rreq, saw.areq);
  if (saw.challenge?.cres) expectValidEmv('CRes', saw.challenge.cres, saw.areq);
  return saw;
}
