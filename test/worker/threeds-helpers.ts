import { expect } from 'vitest';
import { call, luhnComplete, TEST_AUTH, type Fetch } from './helpers';

export const THREEDS_MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
export const THREEDS = '/verifications/customers/3ds';
export const THREEDS_HEADERS: Record<string, string> = {
  Authorization: TEST_AUTH,
  Accept: THREEDS_MEDIA,
  'Content-Type': THREEDS_MEDIA,
};

export const VISA_PAN = luhnComplete('45717360');
export const MASTERCARD_PAN = luhnComplete('531265');
export const AMEX_PAN = luhnComplete('341142', 15);
export const RETURN_URL = 'https://shop.example/3ds/return';

let counter = 0;
/** A transaction reference no other test uses. */
export function newReference(): string {
  counter += 1;
  return `tx-${Date.now()}-${counter}`;
}

export function threeDs(
  step: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call(`${THREEDS}/${step}`, { body, headers: { ...THREEDS_HEADERS, ...headers }, via });
}

/** deviceDataInitialize of `reference` for the default entity (`fields`: the rest of the body, e.g. a paymentInstrument). */
export function deviceDataInitialize(reference: string, fields: Record<string, unknown> = {}): Promise<Response> {
  return threeDs('deviceDataInitialize', {
    transactionReference: reference,
    merchant: { entity: 'default' },
    ...fields,
  });
}

export function cardFront(cardHolderName?: string, cardNumber = VISA_PAN): Record<string, unknown> {
  return {
    type: 'card/front',
    cardNumber,
    cardExpiryDate: { month: 12, year: 2035 },
    ...(cardHolderName === undefined ? {} : { cardHolderName }),
  };
}

export interface AuthOptions {
  reference?: string;
  entity?: string;
  cardHolderName?: string;
  cardNumber?: string;
  amount?: number;
  currency?: string;
  preference?: string;
  collectionReference?: string;
  riskData?: unknown;
  exemption?: string;
  /** `decoupled.maxMinutes`: decoupled authentication allowed for that long. */
  decoupledMinutes?: number;
}

export function authenticateBody(o: AuthOptions = {}): Record<string, unknown> {
  return {
    transactionReference: o.reference ?? newReference(),
    merchant: { entity: o.entity ?? 'default' },
    instruction: {
      value: { amount: o.amount ?? 250, currency: o.currency ?? 'GBP' },
      paymentInstrument: cardFront(o.cardHolderName, o.cardNumber),
    },
    deviceData: {
      acceptHeader: 'text/html',
      userAgentHeader: 'Mozilla/5.0 (test)',
      ...(o.collectionReference ? { collectionReference: o.collectionReference } : {}),
    },
    challenge: { returnUrl: RETURN_URL, ...(o.preference ? { preference: o.preference } : {}) },
    ...(o.riskData ? { riskData: o.riskData } : {}),
    ...(o.exemption ? { exemption: { type: o.exemption } } : {}),
    ...(o.decoupledMinutes !== undefined ? { decoupled: { maxMinutes: o.decoupledMinutes } } : {}),
  };
}

/** GET of a transaction, its reference percent-encoded in the path (`entity: null`: no entity in the query). */
export function getTransaction(
  reference: string,
  o: { entity?: string | null; headers?: Record<string, string | undefined>; via?: Fetch } = {},
): Promise<Response> {
  const query = o.entity === null ? '' : `?entity=${encodeURIComponent(o.entity ?? 'default')}`;
  return call(`${THREEDS}/authentications/${encodeURIComponent(reference)}${query}`, {
    method: 'GET',
    headers: { Authorization: TEST_AUTH, Accept: THREEDS_MEDIA, ...o.headers },
    via: o.via,
  });
}

/** A transaction as GET answers it: 200. */
export async function transaction(
  reference: string,
  o: Parameters<typeof getTransaction>[1] = {},
): Promise<Record<string, any>> {
  const response = await getTransaction(reference, o);
  const body = await response.json<Record<string, any>>();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** POSTs a form to one of the test ACS pages, as a browser would. */
export function postForm(path: string, fields: Record<string, string>, via?: Fetch): Promise<Response> {
  return call(path, {
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    rawBody: new TextEncoder().encode(new URLSearchParams(fields).toString()),
    via,
  });
}

/** The body of verification for a transaction and its challenge reference. */
export function verifyBody(
  transactionReference: string,
  challengeReference: string,
  entity = 'default',
): Record<string, unknown> {
  return { transactionReference, merchant: { entity }, challenge: { reference: challengeReference } };
}

/** The value of a hidden input in a page. */
export function hiddenField(html: string, name: string): string | undefined {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  return m?.[1]?.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));
}

/**
 * Plays the cardholder's side of a challenge without a browser: opens the challenge page with
 * the JWT, then submits each code (or 'cancel') in turn. Returns the last page's HTML.
 */
export async function completeChallenge(jwt: string, codes: string[], md = 'merchant-data'): Promise<string> {
  let html = await (await postForm('/3ds/challenge', { JWT: jwt, MD: md })).text();
  for (const code of codes) {
    const state = hiddenField(html, 'state');
    if (state === undefined) throw new Error(`no challenge form in: ${html.slice(0, 200)}`);
    const action = code === 'cancel' ? 'cancel' : 'submit';
    html = await (
      await postForm('/3ds/challenge/submit', { state, code: action === 'cancel' ? '' : code, action })
    ).text();
  }
  return html;
}
