import { describe, expect, inject, it } from 'vitest';
import { THREE_DS_MEDIA_TYPES, TOKENS_MEDIA_TYPES, type ApiVersion } from '../../src/media-types';
import { call, CARD_BIN_HEADERS, luhnComplete, TEST_AUTH } from './helpers';
import { tokenBody, tokenHref } from './token-helpers';
import { authenticateBody, newReference } from './threeds-helpers';
import { declaredPlaces, expectWorldpayShape, misplacedFields } from './worldpay-compat';

/**
 * Worldpay's own request examples, sent through the Worker. Each example is taken from
 * Worldpay's published document as it is (read from ../shared at test time, never copied), and
 * only what must differ is adapted: credentials, the entity, card numbers (one a test run has not
 * tokenized yet), transaction references (unique per run), token hrefs (tokens this service
 * issued) and the challenge reference (a live challenge's). Every example is sent twice: with the
 * v1 media types (the documents stand in for v1's, docs/compatibility.md) and with the documents'
 * own v3 media types. Every answer is checked against Worldpay's response schema by `call`, and
 * must come in the media type of the version asked for.
 */

type Json = Record<string, any>;

/** null without the documents beside the project: these suites then skip (vitest.config.ts says so once). */
const docs = inject('worldpay');
const THREE_DS_INSTRUMENTS_V1 = ['card/front', 'card/tokenized'];
/** The instruments each version takes: v1's cards and tokens; v3 also its network tokens (docs/threeds.md "Versions"). */
const THREE_DS_INSTRUMENTS: Record<ApiVersion, Set<string>> = {
  1: new Set(THREE_DS_INSTRUMENTS_V1),
  2: new Set(THREE_DS_INSTRUMENTS_V1),
  3: new Set([...THREE_DS_INSTRUMENTS_V1, 'card/networkToken']),
};
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

/** The versions every example is sent with: v1 (the service's default) and v3 (the documents' own). */
const VERSIONS: ApiVersion[] = [1, 3];

/** Headers of a 3DS or Tokens request in one version's media type. */
function versioned(types: Readonly<Record<ApiVersion, string>>, version: ApiVersion): Record<string, string> {
  return { Authorization: TEST_AUTH, Accept: types[version], 'Content-Type': types[version] };
}

describe.skipIf(docs === null).each(VERSIONS)("Worldpay's 3DS request examples, in v%i", (version) => {
  const headers = versioned(THREE_DS_MEDIA_TYPES, version);

  it.each(examplesOf('deviceDataInitialize'))('deviceDataInitialization: %s', async (_name, example) => {
    const body = await adapt(example);
    const response = await call('/verifications/customers/3ds/deviceDataInitialization', { body, headers });
    await expectCardAnswer(response, version, body.paymentInstrument?.type, '$.paymentInstrument.type');
  });

  it.each(examplesOf('authenticate'))('authentication: %s', async (_name, example) => {
    const body = await adapt(example);
    const response = await call('/verifications/customers/3ds/authentication', { body, headers });
    await expectCardAnswer(
      response,
      version,
      body.instruction.paymentInstrument.type,
      '$.instruction.paymentInstrument.type',
    );
  });

  it.each(examplesOf('verify'))('verification: %s', async (_name, example) => {
    const body = await adapt(example);
    // Verification needs a challenge of this transaction: authenticate it first.
    const auth = await call('/verifications/customers/3ds/authenticate', {
      body: authenticateBody({ reference: body.transactionReference, cardHolderName: '3ds2-challenge-identified' }),
      headers,
    });
    body.challenge.reference = (await auth.json<Json>()).challenge.reference;
    const response = await call('/verifications/customers/3ds/verification', { body, headers });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(THREE_DS_MEDIA_TYPES[version]);
    expect((await response.json<Json>()).outcome).toBe('authenticationFailed');
  });
});

/**
 * 200 for the card instruments the service implements in the version (`card/front`,
 * `card/tokenized`; in v3 also `card/networkToken`), in the media type asked for; Worldpay's v3
 * document also has `card/wallet+googlepay`, which the service does not implement in any version,
 * and `card/networkToken`, which v1 does not have: those are refused at their type
 * (docs/compatibility.md "Differences").
 */
async function expectCardAnswer(
  response: Response,
  version: ApiVersion,
  type: string | undefined,
  typePath: string,
): Promise<void> {
  const body = await response.json<Json>();
  expect(response.headers.get('Content-Type')).toBe(THREE_DS_MEDIA_TYPES[version]);
  if (type === undefined || THREE_DS_INSTRUMENTS[version].has(type)) {
    expect(response.status, JSON.stringify(body)).toBe(200);
    return;
  }
  expect(response.status).toBe(400);
  expect(body.validationErrors).toEqual([
    expect.objectContaining({ errorName: 'fieldHasInvalidValue', jsonPath: typePath }),
  ]);
}

describe.skipIf(docs === null).each(VERSIONS)("Worldpay's tokens request examples, in v%i", (version) => {
  const headers = versioned(TOKENS_MEDIA_TYPES, version);

  it.each(examplesOf('createSecurityToken'))('POST /tokens: %s', async (_name, example) => {
    const body = await adapt(example);
    const created = await call('/tokens', { body, headers });
    expect(created.status).toBe(201);
    expect(created.headers.get('Content-Type')).toBe(TOKENS_MEDIA_TYPES[version]);
    // The same request again: the same token, 200.
    const again = await call('/tokens', { body, headers });
    expect(again.status).toBe(200);
    expect((await again.json<Json>()).tokenId).toBe((await created.json<Json>()).tokenId);
  });
});

describe.skipIf(docs === null)("Worldpay's card BIN request examples, and the documents", () => {
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
