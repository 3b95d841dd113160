import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { luhnComplete } from './helpers';
import { createToken, putAttribute, tokenBody, tokenCall, tokenHref } from './token-helpers';
import { authenticateBody, cardFront, postForm, RETURN_URL, threeDs } from './threeds-helpers';

/**
 * A card number that a careless client put in a free-text field is refused, at that field, in
 * every API version, on creation and on update; it is never stored, logged or echoed
 * (docs/errors.md "A card number in a free-text field").
 */

type Json = Record<string, any>;

const PLANTED = '5454545454545454';
const SPACED = '5454 5454 5454 5454';
const DASHED = '5454-5454-5454-5454';
/** An American Express number: 15 digits, as long as a postal code may be. */
const AMEX = '378282246310005';
/** 16 digits in Visa's range that fail the Luhn check: a merchant's order number. */
const ORDER_NUMBER = '4000123412341235';

const VERSIONS = [1, 2, 3] as const;
const tokensMedia = (v: number) => `application/vnd.worldpay.tokens-v${v}.hal+json`;
const threeDsMedia = (v: number) => `application/vnd.worldpay.verifications.customers-v${v}.hal+json`;

let logs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
});

function captureLogs(): void {
  logs = [];
  const keep = (...args: unknown[]): void => void logs.push(args.map(String).join(' '));
  vi.spyOn(console, 'log').mockImplementation(keep);
  vi.spyOn(console, 'error').mockImplementation(keep);
  vi.spyOn(console, 'warn').mockImplementation(keep);
}

/** Every KV key and value, as text. */
async function everythingInKv(): Promise<string> {
  const parts: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await env.SESSIONS.list({ cursor });
    for (const { name } of page.keys) parts.push(name, (await env.SESSIONS.get(name)) ?? '');
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return parts.join('\n');
}

/** The planted digits nowhere: not in the answer, not in a log line, not in KV. */
async function expectNowhere(answer: string): Promise<void> {
  const digitsOnly = (text: string) => text.replace(/[\s-]/g, '');
  const stored = digitsOnly(await everythingInKv());
  for (const planted of [PLANTED, AMEX]) {
    expect(digitsOnly(answer)).not.toContain(planted);
    for (const line of logs) expect(digitsOnly(line)).not.toContain(planted);
    expect(stored).not.toContain(planted);
  }
}

async function expectRefused(response: Response, errorName: string, jsonPath: string): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(400);
  const body = JSON.parse(text) as Json;
  expect(body.errorName).toBe('bodyDoesNotMatchSchema');
  expect(body.validationErrors).toEqual([{ errorName, jsonPath, message: expect.any(String) }]);
  await expectNowhere(text);
}

/** Sets `value` at a dotted path of `body` (a copy). */
function withValue(body: Json, path: string, value: unknown): Json {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let at: Json = copy;
  for (const key of keys.slice(0, -1)) at = at[key] ??= {};
  at[keys.at(-1)!] = value;
  return copy;
}

const ADDRESS = { address1: '1 Main Street', postalCode: 'AB1 2CD', city: 'Cambridge', countryCode: 'GB' };

describe('POST /tokens with a card number in a free-text field', () => {
  const fields: [string, string, string][] = [
    ['paymentInstrument.billingAddress.address1', `Flat 2, ${SPACED}`, 'billingAddressMightContainCardNumber'],
    ['paymentInstrument.billingAddress.address2', PLANTED, 'billingAddressMightContainCardNumber'],
    ['paymentInstrument.billingAddress.address3', DASHED, 'billingAddressMightContainCardNumber'],
    ['paymentInstrument.billingAddress.city', PLANTED, 'billingAddressMightContainCardNumber'],
    ['paymentInstrument.billingAddress.postalCode', AMEX, 'billingAddressMightContainCardNumber'],
    ['paymentInstrument.billingAddress.state', SPACED, 'billingAddressMightContainCardNumber'],
    ['paymentInstrument.cardHolderName', `Ada ${SPACED}`, 'fieldMightContainCardNumber'],
    ['description', `card ${DASHED}`, 'fieldMightContainCardNumber'],
    ['namespace', PLANTED, 'fieldMightContainCardNumber'],
    ['schemeTransactionReference', SPACED, 'fieldMightContainCardNumber'],
  ];

  it.each(VERSIONS.flatMap((version) => fields.map((f) => [version, ...f] as const)))(
    'v%i: refuses %s with its error at the field, and stores, logs and echoes nothing of it',
    async (version, path, value, errorName) => {
      captureLogs();
      const base = tokenBody({ extra: { description: 'Ada' } });
      base.paymentInstrument.billingAddress = { ...ADDRESS };
      const media = tokensMedia(version);
      const response = await createToken(withValue(base, path, value), { Accept: media, 'Content-Type': media });
      await expectRefused(response, errorName, `$.${path}`);
    },
  );

  it('accepts a 16-digit order number that fails the Luhn check, in the description and the address', async () => {
    const body = tokenBody({ extra: { description: `order ${ORDER_NUMBER}` } });
    body.paymentInstrument.billingAddress = { ...ADDRESS, address2: `ref ${ORDER_NUMBER}` };
    const response = await createToken(body);
    expect([200, 201]).toContain(response.status);
    const token = await response.json<Json>();
    expect(token.description).toBe(`order ${ORDER_NUMBER}`);
  });
});

describe('a token update with a card number in a free-text attribute', () => {
  const updates: [
    string,
    'billingAddress' | 'cardHolderName' | 'description' | 'schemeTransactionReference',
    unknown,
    string,
    string,
  ][] = [
    [
      'billingAddress.address2',
      'billingAddress',
      { ...ADDRESS, address2: PLANTED },
      'billingAddressMightContainCardNumber',
      '$.address2',
    ],
    [
      'billingAddress.address1',
      'billingAddress',
      { ...ADDRESS, address1: `Flat ${SPACED}` },
      'billingAddressMightContainCardNumber',
      '$.address1',
    ],
    ['cardHolderName', 'cardHolderName', `Ada ${DASHED}`, 'fieldMightContainCardNumber', '$'],
    ['description', 'description', PLANTED, 'fieldMightContainCardNumber', '$'],
    ['schemeTransactionReference', 'schemeTransactionReference', SPACED, 'fieldMightContainCardNumber', '$'],
  ];

  it.each(VERSIONS.flatMap((version) => updates.map((u) => [version, ...u] as const)))(
    'v%i: refuses %s, and the token keeps its value',
    async (version, _name, attribute, value, errorName, jsonPath) => {
      const href = await tokenHref(
        tokenBody({ cardNumber: luhnComplete(`4571368${version}`), extra: { description: 'Ada' } }),
      );
      const before = await (await tokenCall('GET', href)).json<Json>();
      captureLogs();
      const media = tokensMedia(version);
      const response = await putAttribute(href, attribute, value, { Accept: media, 'Content-Type': media });
      await expectRefused(response, errorName, jsonPath);
      const after = await (await tokenCall('GET', href)).json<Json>();
      expect(after).toEqual(before);
    },
  );
});

describe('3-D Secure with a card number in a free-text field', () => {
  const authenticateFields: [string, unknown, string][] = [
    ['transactionReference', DASHED, 'fieldMightContainCardNumber'],
    ['merchant.overrideName', `Shop ${PLANTED}`, 'fieldMightContainCardNumber'],
    ['instruction.paymentInstrument.cardHolderName', `Ada ${SPACED}`, 'fieldMightContainCardNumber'],
    [
      'instruction.paymentInstrument.billingAddress',
      { ...ADDRESS, address2: PLANTED },
      'billingAddressMightContainCardNumber',
    ],
    ['deviceData.collectionReference', PLANTED, 'fieldMightContainCardNumber'],
    ['deviceData.userAgentHeader', `Mozilla ${SPACED}`, 'fieldMightContainCardNumber'],
    ['challenge.returnUrl', `${RETURN_URL}?card=${PLANTED}`, 'fieldMightContainCardNumber'],
    ['challenge.returnUrl', `${RETURN_URL}?card=${SPACED.replace(/ /g, '%20')}`, 'fieldMightContainCardNumber'],
    // Escaped, as a URL may carry it: spaces as %20, or every digit escaped.
    [
      'challenge.returnUrl',
      `${RETURN_URL}?card=${[...PLANTED].map((d) => `%3${d}`).join('')}`,
      'fieldMightContainCardNumber',
    ],
    ['riskData.account.email', `${PLANTED}@example.com`, 'fieldMightContainCardNumber'],
    ['riskData.transaction.firstName', SPACED, 'fieldMightContainCardNumber'],
    ['riskData.transaction.lastName', DASHED, 'fieldMightContainCardNumber'],
    ['riskData.transaction.phoneNumber', PLANTED, 'fieldMightContainCardNumber'],
    ['riskData.shipping.email', `a.${PLANTED}@example.com`, 'fieldMightContainCardNumber'],
    [
      'riskData.shipping.address',
      { address1: `Flat ${SPACED}`, postalCode: 'AB1', city: 'Cambridge', countryCode: 'GB', stateCode: 'CA' },
      'billingAddressMightContainCardNumber',
    ],
  ];

  it.each(VERSIONS.flatMap((version) => authenticateFields.map((f) => [version, ...f] as const)))(
    'v%i authenticate: refuses %s, and stores, logs and echoes nothing of it',
    async (version, path, value, errorName) => {
      captureLogs();
      const media = threeDsMedia(version);
      const response = await threeDs('authenticate', withValue(authenticateBody(), path, value), {
        Accept: media,
        'Content-Type': media,
      });
      const at =
        typeof value === 'object'
          ? `$.${path}.${Object.entries(value as Json).find(([, v]) => String(v).includes('5454'))![0]}`
          : `$.${path}`;
      await expectRefused(response, errorName, at);
    },
  );

  it.each(VERSIONS)('v%i: refuses a card number as the transactionReference of every step', async (version) => {
    captureLogs();
    const headers = { Accept: threeDsMedia(version), 'Content-Type': threeDsMedia(version) };
    const merchant = { entity: 'default' };
    const ddc = await threeDs(
      'deviceDataInitialize',
      { transactionReference: PLANTED, merchant, paymentInstrument: cardFront() },
      headers,
    );
    await expectRefused(ddc, 'fieldMightContainCardNumber', '$.transactionReference');
    const verification = await threeDs(
      'verification',
      { transactionReference: `order-${PLANTED}`, merchant, challenge: { reference: 'A'.repeat(20) } },
      headers,
    );
    await expectRefused(verification, 'fieldMightContainCardNumber', '$.transactionReference');
  });

  it('accepts identifiers whose digits happen to pass: a UUID reference and the DDC SessionId as collectionReference', async () => {
    const maestro = luhnComplete('5012345678', 12); // 12 digits, a length Maestro issues
    const uuid = `12345678-1234-4123-8123-${maestro}`;
    const response = await threeDs(
      'authenticate',
      authenticateBody({ reference: `${uuid}-${Date.now()}`, collectionReference: `0_${uuid}` }),
    );
    expect(response.status, await response.clone().text()).toBe(200);
  });

  it('accepts a transaction reference that is a 16-digit order number failing the Luhn check', async () => {
    const reference = `${ORDER_NUMBER}-${Date.now()}`;
    const response = await threeDs('authenticate', authenticateBody({ reference }));
    expect(response.status).toBe(200);
    expect((await response.json<Json>()).transactionReference).toBe(reference);
  });

  it('refuses a card number in the MD the merchant posts with the challenge, and echoes nothing of it', async () => {
    const auth = await (
      await threeDs('authenticate', authenticateBody({ cardHolderName: 'Ada Lovelace' }))
    ).json<Json>();
    expect(auth.outcome).toBe('challenged');
    captureLogs();
    const page = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt, MD: `order ${SPACED}` });
    const html = await page.text();
    expect(page.status).toBe(400);
    expect(html).toContain('MD might contain a card number');
    await expectNowhere(html);
    // The same challenge still opens with a clean MD: the refusal used nothing up.
    const shown = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt, MD: 'order-42' });
    expect(shown.status).toBe(200);
  });
});
