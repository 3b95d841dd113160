import { describe, expect, inject, it } from 'vitest';
import { call, CARD_BIN_HEADERS, luhnComplete } from './helpers';
import { tokenBody, tokenHref, TOKENS_HEADERS } from './token-helpers';
import { authenticateBody, newReference, THREEDS_HEADERS } from './threeds-helpers';
import { declaredPlaces, expectWorldpayShape, misplacedFields } from './worldpay-compat';

/**
 * Worldpay's own request examples, sent through the Worker. Each example is taken from
 * Worldpay's published document as it is (read from ../shared at test time, never copied), and
 * only what must differ is adapted: credentials and the v1 media types, the entity, card numbers
 * (one a test run has not tokenized yet), transaction references (unique per run), token hrefs
 * (tokens this service issued) and the challenge reference (a live challenge's). Every answer is
 * checked against Worldpay's response schema by `call`.
 */

type Json = Record<string, any>;

/** null without the documents beside the project: these suites then skip (vitest.config.ts says so once). */
const docs = inject('worldpay');
const THREE_DS_INSTRUMENTS_V1 = new Set(['card/front', 'card/tokenized']);
let cards = 0;

/** A Luhn-valid Visa number no other example used. */
function freshCardNumber(): string {
  cards += 1;
  return luhnComplete(`4444${String(Date.now() % 1e7).padStart(7, '0')}${String(cards).padStart(2, '0')}`, 16);
}

/** A copy of an example with the adaptations the tests may make, and nothing else. */
async function adapt(example: unknown): Promise<Json> {
  const body = structuredClone(example) as Json;
  if (body.merchant) body.merchant.entity = 'default';
  if (typeof body.transactionReference === 'string') body.transactionReference = newReference();
  const instrument = body.paymentInstrument?.type ? body.paymentInstrument : body.instruction?.paymentInstrument;
  if (instrument?.type === 'card/tokenized')
    instrument.href = await tokenHref(tokenBody({ cardNumber: freshCardNumber() }));
  if (instrument?.type === 'card/front' && typeof instrument.cardNumber === 'string')
    instrument.cardNumber = freshCardNumber();
  if (typeof body.cardNumber === 'string') body.cardNumber = freshCardNumber();
  if (typeof body.token === 'string') body.token = await tokenHref(tokenBody({ cardNumber: freshCardNumber() }));
  return body;
}

function examplesOf(operationId: string): [string, unknown][] {
  if (docs === null) return [['(documents not present)', undefined]];
  const op = docs.operations.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no ${operationId} in Worldpay's documents`);
  return op.requestExamples.map((e) => [e.name, e.value]);
}

describe.skipIf(docs === null)("Worldpay's 3DS request examples", () => {
  it.each(examplesOf('deviceDataInitialize'))('deviceDataInitialization: %s', async (_name, example) => {
    const body = await adapt(example);
    const response = await call('/verifications/customers/3ds/deviceDataInitialization', {
      body,
      headers: THREEDS_HEADERS,
    });
    await expectV1Answer(response, body.paymentInstrument?.type, '$.paymentInstrument.type');
  });

  it.each(examplesOf('authenticate'))('authentication: %s', async (_name, example) => {
    const body = await adapt(example);
    const response = await call('/verifications/customers/3ds/authentication', { body, headers: THREEDS_HEADERS });
    await expectV1Answer(response, body.instruction.paymentInstrument.type, '$.instruction.paymentInstrument.type');
  });

  it.each(examplesOf('verify'))('verification: %s', async (_name, example) => {
    const body = await adapt(example);
    // Verification needs a challenge of this transaction: authenticate it first.
    const auth = await call('/verifications/customers/3ds/authenticate', {
      body: authenticateBody({ reference: body.transactionReference, cardHolderName: '3ds2-challenge-identified' }),
      headers: THREEDS_HEADERS,
    });
    body.challenge.reference = (await auth.json<Json>()).challenge.reference;
    const response = await call('/verifications/customers/3ds/verification', { body, headers: THREEDS_HEADERS });
    expect(response.status).toBe(200);
    expect((await response.json<Json>()).outcome).toBe('authenticationFailed');
  });
});

/**
 * 200 for the v1 instruments; Worldpay's v3 document also has `card/networkToken` and
 * `card/wallet+googlepay`, which v1 does not: those are refused at their type, as v1 refuses them.
 */
async function expectV1Answer(response: Response, type: string | undefined, typePath: string): Promise<void> {
  const body = await response.json<Json>();
  if (type === undefined || THREE_DS_INSTRUMENTS_V1.has(type)) {
    expect(response.status, JSON.stringify(body)).toBe(200);
    return;
  }
  expect(response.status).toBe(400);
  expect(body.validationErrors).toEqual([
    expect.objectContaining({ errorName: 'fieldHasInvalidValue', jsonPath: typePath }),
  ]);
}

describe.skipIf(docs === null)("Worldpay's tokens and card BIN request examples", () => {
  it.each(examplesOf('createSecurityToken'))('POST /tokens: %s', async (_name, example) => {
    const body = await adapt(example);
    const created = await call('/tokens', { body, headers: TOKENS_HEADERS });
    expect(created.status).toBe(201);
    // The same request again: the same token, 200.
    const again = await call('/tokens', { body, headers: TOKENS_HEADERS });
    expect(again.status).toBe(200);
    expect((await again.json<Json>()).tokenId).toBe((await created.json<Json>()).tokenId);
  });

  it.each(examplesOf('panLookup'))('panLookup: %s', async (_name, example) => {
    const body = await adapt(example);
    const response = await call('/api/cardBin/panLookup', { body, headers: CARD_BIN_HEADERS });
    expect(response.status).toBe(200);
    expect(response.headers.get('WP-Api-Version')).toBe('1');
  });

  it('finds every operation this service implements in the documents, with examples where Worldpay gives them', () => {
    expect(docs!.operations.map((o) => o.operationId)).toEqual([
      'deviceDataInitialize',
      'authenticate',
      'verify',
      'createSecurityToken',
      'getSecurityToken',
      'deleteSecurityToken',
      'panLookup',
    ]);
    expect(docs!.operations.reduce((n, o) => n + o.requestExamples.length, 0)).toBeGreaterThanOrEqual(15);
  });
});

describe.skipIf(docs === null)('the shape check itself', () => {
  const schema = docs?.operations.find((o) => o.operationId === 'verify')?.responses['200'] ?? {};

  it("knows where Worldpay's document puts each field", () => {
    const places = declaredPlaces(schema);
    expect(places.get('status')).toEqual(new Set(['']));
    expect(places.get('eci')).toEqual(new Set(['authentication']));
  });

  it('fails a documented field found at another place, as the old answers had it', () => {
    const old = {
      outcome: 'authenticated',
      authentication: { version: '2.2.0', eci: '05', status: 'Y', enrolled: 'Y', acsTransactionId: 'x' },
    };
    expect(misplacedFields(schema, old)).toHaveLength(3);
  });

  it('fails an answer that does not match the documented schema', async () => {
    const response = new Response(JSON.stringify({ outcome: 'authenticated', transactionReference: 7 }), {
      status: 200,
    });
    await expect(
      expectWorldpayShape('POST', 'https://edge.test/verifications/customers/3ds/verification', response),
    ).rejects.toThrow(/transactionReference/);
  });
});
