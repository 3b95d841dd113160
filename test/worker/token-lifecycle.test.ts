import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { quickObjects, restoreObjects, StorageHarness } from './faulty-env';
import {
  burst,
  call,
  expectErrorCase,
  expectNotFound,
  OTHER_AUTH,
  TEST_AUTH,
  type ErrorCase,
  type Fetch,
} from './helpers';
import {
  type Attribute,
  ATTRIBUTE_PATHS,
  countedUpdates,
  createToken,
  objectWritesOf,
  freshCard,
  putAttribute,
  expectConsistent,
  projectionSettled,
  tokenBody,
  tokenCall,
  tokenGroupOf,
  tokenIdOf,
  type TokenLike,
  TOKENS_MEDIA,
  authenticateWithToken,
  type Made,
  type NewToken,
  newToken as tokenize,
  listed,
  lookupByToken,
  newNamespace,
  queryTokens,
} from './token-helpers';

/**
 * The token life cycle in Worldpay's Tokens API shape (docs/tokens.md): updates of one attribute
 * per `PUT`, the rolling limit of 50 updates, the conflicts of a second tokenization (read and
 * accepted on their own link), namespaces of at most 16 cards, the lifetime extension of a token
 * used past half its life, and all of it under bursts. Every answer goes through `call`, so it is
 * also checked against our OpenAPI document and Worldpay's.
 */

type Json = Record<string, any>;

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const TEST_LIFETIME = 7 * DAY;

const ADDRESS_A = { address1: '12 Brook Street', postalCode: 'W1S 1AA', city: 'London', countryCode: 'GB' };
const ADDRESS_B = {
  address1: '7 Quayside Walk',
  address2: 'Flat 3',
  postalCode: 'NE1 3DX',
  city: 'Newcastle',
  state: 'Tyne and Wear',
  countryCode: 'GB',
};

/** Worldpay's date and time: UTC, whole seconds. */
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

// No test here is about KV's second per key: the objects write a key every tenth of a second, so
// that a test waiting for a projection to settle does not wait a second per write.
beforeEach(() => quickObjects());

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  restoreObjects();
});

/** Tokenizes a fresh card (named, with billing address A unless told otherwise: `address: null` for none). */
function newToken(o: Omit<NewToken, 'address'> & { address?: Json | null } = {}): Promise<Made> {
  return tokenize({ ...o, address: o.address === null ? undefined : (o.address ?? ADDRESS_A) });
}

async function getToken(href: string, headers: Record<string, string | undefined> = {}, via?: Fetch): Promise<Json> {
  const response = await tokenCall('GET', href, headers, via);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json<Json>();
}

/** A conflicting POST: 409 with its `tokens:conflicts` link. */
async function conflictOf(body: Json, via?: Fetch): Promise<{ answer: Json; link: string }> {
  const response = await createToken(body, {}, via);
  expect(response.status, await response.clone().text()).toBe(409);
  const answer = await response.json<Json>();
  return { answer, link: answer._links['tokens:conflicts'].href as string };
}

/** GET or PUT (no body) on a conflict link. */
function onConflict(
  method: 'GET' | 'PUT',
  link: string,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return tokenCall(method, link, headers, via);
}

/** A card body in a namespace. */
function inNamespace(namespace: string, cardNumber: string, entity = 'default'): Json {
  return tokenBody({ cardNumber, entity, extra: { namespace } });
}

/** The KV record of a token, which must exist, once its object's projection has settled. */
async function record(token: TokenLike): Promise<Json> {
  const stored = await expectConsistent(token);
  expect(stored, `token:${tokenIdOf(token)}`).not.toBeNull();
  return stored!;
}

/** KV holds the token's version that its object holds, once the projection settled. */
const expectGuardAgrees = record;

// --- updates -------------------------------------------------------------------------------------

/** One update of each attribute: the value sent, where GET shows it, and what must never be in clear. */
const UPDATES: { attribute: Attribute; value: unknown; apply: (t: Json, v: any) => void; secrets?: string[] }[] = [
  { attribute: 'description', value: "Ada's new card", apply: (t, v) => (t.description = v) },
  {
    attribute: 'cardHolderName',
    value: 'Augusta Ada King',
    apply: (t, v) => (t.paymentInstrument.cardHolderName = v),
    secrets: ['Augusta Ada King'],
  },
  {
    attribute: 'cardExpiryDate',
    value: { month: 3, year: 2031 },
    apply: (t, v) => (t.paymentInstrument.cardExpiryDate = v),
  },
  {
    attribute: 'billingAddress',
    value: ADDRESS_B,
    apply: (t, v) => (t.paymentInstrument.billingAddress = v),
    secrets: ['Quayside', 'NE1 3DX', 'Newcastle', 'Tyne and Wear'],
  },
  {
    attribute: 'schemeTransactionReference',
    value: 'MCC123456 0612',
    apply: (t, v) => (t.schemeTransactionReference = v),
  },
];

describe('token updates', () => {
  it.each(UPDATES)(
    'updates $attribute through its link: 204, GET shows it and nothing else changed, version 2',
    async ({ attribute, value, apply, secrets }) => {
      const { token, href, cardNumber } = await newToken({ extra: { schemeTransactionReference: 'abc123' } });
      // The link the token answer gives is the one that updates.
      expect(token._links[`tokens:${attribute}`].href).toBe(`${href}/${ATTRIBUTE_PATHS[attribute]}`);
      const response = await putAttribute(href, attribute, value);
      expect(response.status, await response.clone().text()).toBe(204);
      expect(await response.text()).toBe('');
      const expected = structuredClone(token);
      apply(expected, value);
      expect(await getToken(href)).toEqual(expected);
      const stored = await expectGuardAgrees(token);
      expect(stored.version).toBe(2);
      expect(stored.updatedAt).toBeGreaterThanOrEqual(stored.createdAt);
      // The card number, the cardholder name and the billing address are sealed: never in clear.
      const text = JSON.stringify(stored);
      for (const secret of [...(secrets ?? []), cardNumber, 'Ada Lovelace', 'Brook Street'])
        expect(text).not.toContain(secret);
    },
  );

  it('builds each update on the last: five attributes in turn, versions 2 to 6, all five shown', async () => {
    const { token, href } = await newToken();
    const expected = structuredClone(token);
    for (const [i, { attribute, value, apply }] of UPDATES.entries()) {
      expect((await putAttribute(href, attribute, value)).status).toBe(204);
      apply(expected, value);
      expect((await record(token)).version).toBe(i + 2);
    }
    expect(await getToken(href)).toEqual(expected);
    expect((await expectGuardAgrees(token)).version).toBe(6);
  });

  it('takes the new details into account when the same card is tokenized again', async () => {
    const { token, href, cardNumber } = await newToken();
    expect((await putAttribute(href, 'cardHolderName', 'Augusta Ada King')).status).toBe(204);
    expect((await putAttribute(href, 'cardExpiryDate', { month: 3, year: 2031 })).status).toBe(204);
    const same = tokenBody({ cardNumber, name: 'Augusta Ada King', month: 3, year: 2031 });
    same.paymentInstrument.billingAddress = ADDRESS_A;
    const answered = await createToken(same);
    expect(answered.status).toBe(200);
    expect((await answered.json<Json>()).tokenId).toBe(token.tokenId);
    const old = tokenBody({ cardNumber, name: 'Ada Lovelace', month: 12, year: 2035 });
    const conflict = await createToken(old);
    expect(conflict.status).toBe(409);
    expect((await conflict.json<Json>()).conflicts.paymentInstrument).toEqual({
      cardHolderName: 'Ada Lovelace',
      cardExpiryDate: { month: 12, year: 2035 },
    });
  });
});

describe('token update errors', () => {
  let href = '';
  beforeAll(async () => {
    ({ href } = await newToken({ extra: { schemeTransactionReference: 'abc123' } }));
  });

  const put = (attribute: Attribute, value: unknown) => () => putAttribute(href, attribute, value);
  const raw = (attribute: Attribute, text: string) => () =>
    call(`${new URL(href).pathname}/${ATTRIBUTE_PATHS[attribute]}`, {
      method: 'PUT',
      rawBody: new TextEncoder().encode(text),
      headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, 'Content-Type': TOKENS_MEDIA },
    });
  const schema = (name: string, send: () => Promise<Response>, fields: [string, string][]): ErrorCase => ({
    name,
    send,
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields,
  });

  const CASES: ErrorCase[] = [
    schema('an empty cardholder name', put('cardHolderName', ''), [['fieldIsEmpty', '$']]),
    schema('a cardholder name of 256 characters', put('cardHolderName', 'n'.repeat(256)), [['stringIsTooLong', '$']]),
    schema('a cardholder name as an object', put('cardHolderName', { cardHolderName: 'Ada' }), [
      ['fieldMustBeString', '$'],
    ]),
    schema('a null cardholder name', put('cardHolderName', null), [['fieldIsNull', '$']]),
    schema('an empty description', put('description', ''), [['fieldIsEmpty', '$']]),
    schema('a description holding &', put('description', 'Tom & Jerry'), [['stringFailedRegexCheck', '$']]),
    schema('a description holding <', put('description', 'a<b'), [['stringFailedRegexCheck', '$']]),
    schema('a description of 256 characters', put('description', 'd'.repeat(256)), [['stringIsTooLong', '$']]),
    schema('a description as a number', put('description', 42), [['fieldMustBeString', '$']]),
    schema('a description as an object', put('description', { description: 'x' }), [['fieldMustBeString', '$']]),
    schema('an empty scheme transaction reference', put('schemeTransactionReference', ''), [['fieldIsEmpty', '$']]),
    schema('a scheme transaction reference with a dash', put('schemeTransactionReference', 'abc-123'), [
      ['stringFailedRegexCheck', '$'],
    ]),
    schema('a scheme transaction reference of 57 characters', put('schemeTransactionReference', '5'.repeat(57)), [
      ['stringIsTooLong', '$'],
    ]),
    schema('a scheme transaction reference as an array', put('schemeTransactionReference', ['abc']), [
      ['fieldMustBeString', '$'],
    ]),
    schema('an expiry date as a string', put('cardExpiryDate', '12/2035'), [['fieldMustBeObject', '$']]),
    schema('an expiry date as an array', put('cardExpiryDate', [12, 2035]), [['fieldMustBeObject', '$']]),
    schema('an expiry date with month 13', put('cardExpiryDate', { month: 13, year: 2035 }), [
      ['integerIsTooLarge', '$.month'],
    ]),
    schema('an expiry date with month 0 and no year', put('cardExpiryDate', { month: 0 }), [
      ['integerIsTooSmall', '$.month'],
      ['fieldIsMissing', '$.year'],
    ]),
    schema('an expiry date with a month in a string', put('cardExpiryDate', { month: '12', year: 2035 }), [
      ['fieldMustBeInteger', '$.month'],
    ]),
    schema('a billing address as a string', put('billingAddress', '12 Brook Street, London'), [
      ['fieldMustBeObject', '$'],
    ]),
    schema('an empty billing address', put('billingAddress', {}), [
      ['fieldIsMissing', '$.address1'],
      ['fieldIsMissing', '$.postalCode'],
      ['fieldIsMissing', '$.city'],
      ['fieldIsMissing', '$.countryCode'],
    ]),
    schema(
      'a billing address with a lower-case country code',
      put('billingAddress', { ...ADDRESS_A, countryCode: 'gb' }),
      [['stringFailedRegexCheck', '$.countryCode']],
    ),
    schema(
      'a billing address with a city of 51 characters',
      put('billingAddress', { ...ADDRESS_A, city: 'c'.repeat(51) }),
      [['stringIsTooLong', '$.city']],
    ),
    {
      name: 'a cardholder name that is not JSON (no quotes)',
      send: raw('cardHolderName', 'Ada Lovelace'),
      status: 400,
      errorName: 'bodyIsNotJson',
    },
    {
      name: 'a billing address cut short',
      send: raw('billingAddress', '{"address1": '),
      status: 400,
      errorName: 'bodyIsNotJson',
    },
    { name: 'an empty body', send: raw('description', ''), status: 400, errorName: 'bodyIsEmpty' },
  ];

  it.each(CASES)('answers $name with $status $errorName', (c) => expectErrorCase(c, TOKENS_MEDIA));

  it('left the token as it was: none of those counted or changed anything', async () => {
    for (const c of CASES) expect((await c.send()).status).toBe(400);
    expect((await record(href)).version).toBe(1);
  });

  it("answers 404 resourceNotFound on every update link of an unknown, another merchant's, or a deleted token", async () => {
    const { href: mine, token } = await newToken();
    const unknown = 'https://edge.test/tokens/ABCDEFGHJKLMNPQRSTUVW';
    const deleted = (await newToken()).href;
    expect((await tokenCall('DELETE', deleted)).status).toBe(204);
    for (const { attribute, value } of UPDATES) {
      await expectNotFound(await putAttribute(unknown, attribute, value));
      await expectNotFound(await putAttribute(mine, attribute, value, { Authorization: OTHER_AUTH }));
      await expectNotFound(await putAttribute(deleted, attribute, value));
    }
    // The owner's token did not change.
    expect((await record(token)).version).toBe(1);
    expect(await getToken(mine)).toEqual(token);
  });

  it('answers 404 on an update of a token that has expired', async () => {
    const { href } = await newToken();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + TEST_LIFETIME + 1000);
    await expectNotFound(await putAttribute(href, 'description', 'too late'));
  });

  it('answers 400 urlContainsInvalidValue for a token id with bad characters', async () => {
    const response = await call('/tokens/bad$id/description', {
      method: 'PUT',
      body: 'x',
      headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, 'Content-Type': TOKENS_MEDIA },
    });
    expect(response.status).toBe(400);
    const body = await response.json<Json>();
    expect(body.errorName).toBe('urlContainsInvalidValue');
    expect(body.validationErrors.map((e: Json) => e.jsonPath)).toEqual(['$.tokenId']);
  });

  it.each(['GET', 'POST', 'DELETE'])('answers %s on an update link with 405 and Allow: PUT', async (method) => {
    for (const attribute of Object.keys(ATTRIBUTE_PATHS) as Attribute[]) {
      const response = await tokenCall(method, `${href}/${ATTRIBUTE_PATHS[attribute]}`);
      expect(response.status, attribute).toBe(405);
      expect(response.headers.get('Allow')).toBe('PUT');
      expect((await response.json<Json>()).errorName).toBe('methodNotAllowed');
    }
  });
});

describe('the card expiry date after an update', () => {
  it('takes a past expiry date (as creation does): lookups and 3DS by the token then answer underlyingPaymentInstrumentHasExpired, until it is updated again', async () => {
    const { href, cardNumber, token } = await newToken();
    expect((await lookupByToken(href)).status).toBe(200);
    expect((await putAttribute(href, 'cardExpiryDate', { month: 1, year: 2020 })).status).toBe(204);
    expect((await getToken(href)).paymentInstrument.cardExpiryDate).toEqual({ month: 1, year: 2020 });
    // A lookup reads KV's copy of the token, written after the answer (docs/storage.md "Reads").
    await projectionSettled(href);
    const lookup = await lookupByToken(href);
    expect(lookup.status).toBe(400);
    expect((await lookup.json<Json>()).errorName).toBe('underlyingPaymentInstrumentHasExpired');
    const auth = await authenticateWithToken(href);
    expect(auth.status).toBe(400);
    expect((await auth.json<Json>()).errorName).toBe('underlyingPaymentInstrumentHasExpired');
    // The card's new expiry date is what a second tokenization is compared with.
    const reissued = await createToken(tokenBody({ cardNumber, month: 1, year: 2020 }));
    expect(reissued.status).toBe(200);
    expect((await reissued.json<Json>()).tokenId).toBe(token.tokenId);

    expect((await putAttribute(href, 'cardExpiryDate', { month: 12, year: 2035 })).status).toBe(204);
    await projectionSettled(href);
    expect((await lookupByToken(href)).status).toBe(200);
    expect((await authenticateWithToken(href)).status).toBe(200);
  });

  it('gives 3DS the updated cardholder name (the test scenario it picks)', async () => {
    const { href } = await newToken({ name: 'Any Name' });
    expect((await (await authenticateWithToken(href)).json<Json>()).outcome).toBe('challenged');
    expect((await putAttribute(href, 'cardHolderName', '3ds2-frictionless-identified')).status).toBe(204);
    const auth = await (await authenticateWithToken(href)).json<Json>();
    expect(auth.outcome).toBe('authenticated');
    expect(auth.authentication.eci).toBe('05');
  });
});

// --- the update limit ---------------------------------------------------------------------------

describe('the update limit', () => {
  it(
    'allows 50 updates in 30 days, answers the 51st 429 maximumUpdatesExceeded with a Retry-After of about 30 days, and lets the next through once it has passed',
    { timeout: 120_000 },
    async () => {
      // An expiry chosen far out, so that the token outlives the 30 days.
      const { href, token } = await newToken({ extra: { tokenExpiryDateTime: iso(Date.now() + 400 * DAY) } });
      const started = Date.now();
      for (let i = 0; i < 50; i++) {
        const response = await putAttribute(href, i % 2 ? 'description' : 'cardHolderName', `Update ${i}`);
        expect(response.status, `update ${i + 1}`).toBe(204);
      }
      const finished = Date.now();
      for (const { attribute, value } of UPDATES) {
        const refused = await putAttribute(href, attribute, value);
        expect(refused.status, attribute).toBe(429);
        expect((await refused.json<Json>()).errorName).toBe('maximumUpdatesExceeded');
        const retryAfter = Number(refused.headers.get('Retry-After'));
        const window = 30 * DAY;
        expect(retryAfter * 1000).toBeLessThanOrEqual(window);
        expect(retryAfter * 1000).toBeGreaterThan(window - (Date.now() - started) - 60_000);
      }
      const stored = await expectGuardAgrees(token);
      expect(stored.version).toBe(51);
      const shown = await getToken(href);
      expect(shown.description).toBe('Update 49');
      expect(shown.paymentInstrument.cardHolderName).toBe('Update 48');
      expect(shown.paymentInstrument.billingAddress).toEqual(ADDRESS_A);

      // Once those updates have left the 30 days, updates are allowed again.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(finished + 30 * DAY + 1000);
      expect((await putAttribute(href, 'description', 'A month later')).status).toBe(204);
      expect((await getToken(href)).description).toBe('A month later');
    },
  );

  it(
    'lets exactly the updates left through when 20 arrive at once with 5 left: 5 × 204, 15 × 429, and one of the five stands',
    { timeout: 120_000 },
    async () => {
      const { href, token } = await newToken();
      for (let i = 0; i < 45; i++) expect((await putAttribute(href, 'description', `Update ${i}`)).status).toBe(204);
      const values = Array.from({ length: 20 }, (_, i) => `Burst ${i}`);
      const responses = await burst(20, (i) => putAttribute(href, 'description', values[i]));
      const passed = values.filter((_, i) => responses[i]!.status === 204);
      expect(passed).toHaveLength(5);
      for (const refused of responses.filter((r) => r.status !== 204)) {
        expect(refused.status).toBe(429);
        expect((await refused.json<Json>()).errorName).toBe('maximumUpdatesExceeded');
        expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(29 * 24 * 3600);
      }
      expect(passed).toContain((await getToken(href)).description);
      expect((await expectGuardAgrees(token)).version).toBe(51);
      expect((await putAttribute(href, 'description', 'one too many')).status).toBe(429);
    },
  );

  it(
    'counts the acceptance of a conflict as an update, and a refused acceptance leaves the conflict to accept later',
    { timeout: 120_000 },
    async () => {
      const { href, cardNumber, token } = await newToken({ name: 'Ada' });
      for (let i = 0; i < 49; i++) expect((await putAttribute(href, 'description', `Update ${i}`)).status).toBe(204);
      const first = await conflictOf(tokenBody({ cardNumber, name: 'Ada B' }));
      expect((await onConflict('PUT', first.link)).status).toBe(204);
      const refused = await putAttribute(href, 'description', 'one too many');
      expect(refused.status).toBe(429);
      expect((await refused.json<Json>()).errorName).toBe('maximumUpdatesExceeded');

      const second = await conflictOf(tokenBody({ cardNumber, name: 'Ada C' }));
      const notNow = await onConflict('PUT', second.link);
      expect(notNow.status).toBe(429);
      expect(Number(notNow.headers.get('Retry-After'))).toBeGreaterThan(29 * 24 * 3600);
      const still = await onConflict('GET', second.link);
      expect(still.status).toBe(200);
      expect((await still.json<Json>()).conflicts.paymentInstrument).toEqual({ cardHolderName: 'Ada C' });
      expect((await getToken(href)).paymentInstrument.cardHolderName).toBe('Ada B');
      expect((await record(token)).version).toBe(51);
    },
  );
});

// --- conflicts -----------------------------------------------------------------------------------

describe('conflicts', () => {
  it('accepts a conflict once when 20 identical PUTs arrive at once: all 204, one version, one update counted, one KV write', async () => {
    const { token, href, cardNumber } = await newToken({ name: 'Ada' });
    const { link } = await conflictOf(tokenBody({ cardNumber, name: 'Ada B' }));
    await projectionSettled(token);
    const harness = new StorageHarness().throughObjects();
    const responses = await burst(20, () => onConflict('PUT', link, {}, (r) => harness.fetch(r)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
    const stored = await expectGuardAgrees(token);
    expect(objectWritesOf(harness, token)).toBe(1);
    expect(stored.version).toBe(2);
    expect(await countedUpdates(stored)).toBe(1);
    expect((await getToken(href)).paymentInstrument.cardHolderName).toBe('Ada B');
  });

  it('keeps the conflicts of a second tokenization on their own link: GET reads them, PUT makes them the token, then they are used up', async () => {
    const cardNumber = freshCard();
    const { token, href } = await newToken({
      cardNumber,
      name: 'Ada',
      extra: { schemeTransactionReference: 'abc123', description: 'kept' },
    });
    const differing = tokenBody({
      cardNumber,
      name: 'Ada L',
      month: 1,
      year: 2036,
      extra: { schemeTransactionReference: 'xyz789', description: 'ignored' },
    });
    differing.paymentInstrument.billingAddress = ADDRESS_B;
    const before = Date.now();
    const { answer, link } = await conflictOf(differing);
    // The token as it stands, with what this request sent differently.
    expect(answer).toMatchObject({ ...token, _links: { ...token._links, 'tokens:conflicts': { href: link } } });
    expect(answer.conflicts).toEqual({
      conflictsExpiryDateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      paymentInstrument: {
        cardHolderName: 'Ada L',
        cardExpiryDate: { month: 1, year: 2036 },
        billingAddress: ADDRESS_B,
      },
      schemeTransactionReference: 'xyz789',
    });
    const ends = Date.parse(answer.conflicts.conflictsExpiryDateTime);
    expect(ends).toBeGreaterThanOrEqual(before + 30 * MINUTE - 1000);
    expect(ends).toBeLessThanOrEqual(Date.now() + 30 * MINUTE);
    expect(link).toMatch(new RegExp(`^${href}/conflicts/[\\w-]{22}$`));

    // The conflicting details are kept sealed in the card's guard: no name or address in clear.
    const stored = await record(token);
    const kept = await runInDurableObject(tokenGroupOf(stored), (_g, state) =>
      JSON.stringify(state.storage.sql.exec('SELECT * FROM conflicts').toArray()),
    );
    expect(kept).toContain(link.slice(-22));
    for (const secret of ['Ada L', 'Quayside', 'Newcastle', 'xyz789']) expect(kept).not.toContain(secret);

    const read = await onConflict('GET', link);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(answer);

    // The same differences again: the same conflict.
    expect((await conflictOf(differing)).link).toBe(link);

    const accepted = await onConflict('PUT', link);
    expect(accepted.status, await accepted.clone().text()).toBe(204);
    const after = await getToken(href);
    expect(after).toEqual({
      ...token,
      paymentInstrument: {
        ...token.paymentInstrument,
        cardHolderName: 'Ada L',
        cardExpiryDate: { month: 1, year: 2036 },
        billingAddress: ADDRESS_B,
      },
      schemeTransactionReference: 'xyz789',
    });
    expect((await expectGuardAgrees(token)).version).toBe(2);

    // Used up: GET no longer shows it; a repeated PUT (a retry whose answer was lost) answers 204
    // again while the conflict would have lived, and changes nothing.
    await expectNotFound(await onConflict('GET', link));
    expect((await onConflict('PUT', link)).status).toBe(204);
    expect(await getToken(href)).toEqual(after);
    expect((await expectGuardAgrees(token)).version).toBe(2);
    // Those details are now the token's: no conflict; the old ones are one, with a new link.
    expect((await createToken(differing)).status).toBe(200);
    const old = tokenBody({ cardNumber, name: 'Ada', extra: { schemeTransactionReference: 'abc123' } });
    const back = await conflictOf(old);
    expect(back.link).not.toBe(link);
    expect(back.answer.conflicts).toEqual({
      conflictsExpiryDateTime: expect.any(String),
      paymentInstrument: { cardHolderName: 'Ada', cardExpiryDate: { month: 12, year: 2035 } },
      schemeTransactionReference: 'abc123',
    });
  });

  it('accepts a conflict with a body too (it is ignored), and keeps different conflicts apart', async () => {
    const cardNumber = freshCard();
    const { href } = await newToken({ cardNumber, name: 'Ada' });
    const b = await conflictOf(tokenBody({ cardNumber, name: 'Ada B' }));
    const c = await conflictOf(tokenBody({ cardNumber, name: 'Ada C' }));
    expect(b.link).not.toBe(c.link);
    const withBody = await call(new URL(c.link).pathname, {
      method: 'PUT',
      body: { cardHolderName: 'Somebody Else' },
      headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, 'Content-Type': TOKENS_MEDIA },
    });
    expect(withBody.status, await withBody.clone().text()).toBe(204);
    expect((await getToken(href)).paymentInstrument.cardHolderName).toBe('Ada C');
    // The other conflict is still there, and still says what it said.
    const other = await onConflict('GET', b.link);
    expect(other.status).toBe(200);
    const otherBody = await other.json<Json>();
    expect(otherBody.conflicts.paymentInstrument).toEqual({ cardHolderName: 'Ada B' });
    expect(otherBody.paymentInstrument.cardHolderName).toBe('Ada C');
  });

  it('ends a conflict after 30 minutes: GET and PUT answer 404 and the token keeps its details', async () => {
    const cardNumber = freshCard();
    const { href } = await newToken({ cardNumber, name: 'Ada' });
    const { link } = await conflictOf(tokenBody({ cardNumber, name: 'Ada L' }));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 29 * MINUTE);
    expect((await onConflict('GET', link)).status).toBe(200);
    vi.setSystemTime(Date.now() + 2 * MINUTE);
    await expectNotFound(await onConflict('GET', link));
    await expectNotFound(await onConflict('PUT', link));
    expect((await getToken(href)).paymentInstrument.cardHolderName).toBe('Ada');
  });

  it('answers 20 identical conflicting POSTs at once with 409 and one conflict link', async () => {
    const cardNumber = freshCard();
    const { token } = await newToken({ cardNumber, name: 'Ada' });
    const body = tokenBody({ cardNumber, name: 'Ada Burst', year: 2040 });
    const responses = await burst(20, () => createToken(body));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(409));
    const answers = await Promise.all(responses.map((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => a.tokenId))).toEqual(new Set([token.tokenId]));
    const links = new Set(answers.map((a) => a._links['tokens:conflicts'].href as string));
    expect(links.size).toBe(1);
    const [link] = [...links];
    expect((await onConflict('GET', link!)).status).toBe(200);
    const rows = await runInDurableObject(
      tokenGroupOf(token),
      (_g, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM conflicts').one().n,
    );
    expect(rows).toBe(1);
  });

  it("answers 404 for another merchant's conflict link, a conflict of another token, and an unknown conflict", async () => {
    const cardNumber = freshCard();
    const { href } = await newToken({ cardNumber, name: 'Ada' });
    const { link } = await conflictOf(tokenBody({ cardNumber, name: 'Ada L' }));
    for (const method of ['GET', 'PUT'] as const) {
      await expectNotFound(await onConflict(method, link, { Authorization: OTHER_AUTH }));
    }
    // The other merchant's own token of the same card, with this conflict's id.
    const theirs = await createToken(tokenBody({ cardNumber, entity: 'other', name: 'Ada' }), {
      Authorization: OTHER_AUTH,
    });
    expect(theirs.status).toBe(201);
    const theirHref = (await theirs.json<Json>()).tokenPaymentInstrument.href as string;
    const conflictId = link.slice(-22);
    for (const method of ['GET', 'PUT'] as const) {
      await expectNotFound(
        await onConflict(method, `${theirHref}/conflicts/${conflictId}`, { Authorization: OTHER_AUTH }),
      );
    }
    // Another token of the same merchant, with this conflict's id; and ids nobody gave.
    const other = await newToken({ name: 'Ada' });
    for (const method of ['GET', 'PUT'] as const) {
      await expectNotFound(await onConflict(method, `${other.href}/conflicts/${conflictId}`));
      await expectNotFound(await onConflict(method, `${href}/conflicts/AAAAAAAAAAAAAAAAAAAAAA`));
      await expectNotFound(await onConflict(method, `${href}/conflicts/x`));
    }
    // Its own token still has it, untouched.
    expect((await onConflict('GET', link)).status).toBe(200);
    expect((await getToken(href)).paymentInstrument.cardHolderName).toBe('Ada');
  });

  it('answers 404 on the conflict link of a deleted token, and 405 with Allow for other methods', async () => {
    const cardNumber = freshCard();
    const { href } = await newToken({ cardNumber, name: 'Ada' });
    const { link } = await conflictOf(tokenBody({ cardNumber, name: 'Ada L' }));
    for (const method of ['DELETE', 'POST']) {
      const response = await tokenCall(method, link);
      expect(response.status).toBe(405);
      expect(new Set(response.headers.get('Allow')!.split(/,\s*/))).toEqual(new Set(['GET', 'PUT']));
    }
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    await expectNotFound(await onConflict('GET', link));
    await expectNotFound(await onConflict('PUT', link));
  });
});

// --- namespaces ----------------------------------------------------------------------------------

describe('namespaces', () => {
  it('lists the tokens of a namespace, narrows to one by tokenId, and finds a token without a namespace by tokenId alone', async () => {
    const namespace = newNamespace();
    const a = await newToken({ extra: { namespace } });
    expect(a.token.namespace).toBe(namespace);
    const b = await newToken({ extra: { namespace } });
    const outside = await newToken();

    const all = await queryTokens(`namespace=${namespace}`);
    expect(all.status).toBe(200);
    const listing = await all.json<Json>();
    // Oldest first; two made within the same millisecond may come in either order.
    expect(listing._embedded.tokens).toHaveLength(2);
    expect(listing._embedded.tokens).toEqual(expect.arrayContaining([a.token, b.token]));

    const one = await queryTokens(`namespace=${namespace}&tokenId=${b.token.tokenId}`);
    expect((await one.json<Json>())._embedded.tokens).toEqual([b.token]);
    // By id alone: only a token without a namespace.
    const alone = await queryTokens(`tokenId=${outside.token.tokenId}`);
    expect(alone.status).toBe(200);
    expect((await alone.json<Json>())._embedded.tokens).toEqual([outside.token]);
    await expectNotFound(await queryTokens(`tokenId=${a.token.tokenId}`));
    // A token of another namespace, or none, in this one's query.
    await expectNotFound(await queryTokens(`namespace=${namespace}&tokenId=${outside.token.tokenId}`));
    await expectNotFound(await queryTokens(`namespace=${newNamespace()}&tokenId=${a.token.tokenId}`));
    await expectNotFound(await queryTokens(`namespace=${newNamespace()}`));
    // An update shows in the listing.
    expect((await putAttribute(a.href, 'description', 'updated in place')).status).toBe(204);
    expect(
      (await (await queryTokens(`namespace=${namespace}&tokenId=${a.token.tokenId}`)).json<Json>())._embedded.tokens[0]
        .description,
    ).toBe('updated in place');
  });

  it.each([
    ['no query', '', '$.namespace'],
    ['an unknown parameter only', 'other=1', '$.namespace'],
    ['a namespace starting with _', 'namespace=_x', '$.namespace'],
    ['a namespace with a space', 'namespace=a%20b', '$.namespace'],
    ['a token id with bad characters', 'tokenId=bad$id', '$.tokenId'],
  ])('answers GET /tokens with %s: 400 urlContainsInvalidValue', async (_name, query, jsonPath) => {
    const response = await queryTokens(query);
    expect(response.status).toBe(400);
    const body = await response.json<Json>();
    expect(body.errorName).toBe('urlContainsInvalidValue');
    expect(body.validationErrors.map((e: Json) => e.jsonPath)).toEqual([jsonPath]);
  });

  it('gives a card one token per namespace, and another one without a namespace', async () => {
    const cardNumber = freshCard();
    const [n1, n2] = [newNamespace(), newNamespace()];
    const first = await createToken(inNamespace(n1, cardNumber));
    const second = await createToken(inNamespace(n2, cardNumber));
    const none = await createToken(tokenBody({ cardNumber }));
    expect([first.status, second.status, none.status]).toEqual([201, 201, 201]);
    const made = await Promise.all([first, second, none].map((r) => r.json<Json>()));
    const ids = made.map((t) => t.tokenId as string);
    expect(new Set(ids).size).toBe(3);
    // The same card in the same namespace again: the same token.
    const again = await createToken(inNamespace(n1, cardNumber));
    expect(again.status).toBe(200);
    expect((await again.json<Json>()).tokenId).toBe(ids[0]);
    expect(await listed(n1)).toEqual([ids[0]]);
    expect(await listed(n2)).toEqual([ids[1]]);
    // Updating one leaves the others as they are.
    expect((await putAttribute(made[0]!.tokenPaymentInstrument.href, 'description', 'only n1')).status).toBe(204);
    for (const other of made.slice(1)) expect((await record(other)).version).toBe(1);
  });

  it('lists a namespace from its object, whatever KV shows (a location KV has not reached yet)', async () => {
    const namespace = newNamespace();
    const { token } = await newToken({ extra: { namespace } });
    await projectionSettled(token);
    await env.SESSIONS.delete(`token:${token.tokenId}`);
    expect(await listed(namespace)).toEqual([token.tokenId]);
    const one = await queryTokens(`namespace=${namespace}&tokenId=${token.tokenId}`);
    expect(one.status).toBe(200);
  });

  it('holds at most 16 cards: the 17th gets 403 tooManyTokensForNamespace, a card already in takes no new place, and a DELETE frees one', async () => {
    const namespace = newNamespace();
    const cards = Array.from({ length: 17 }, () => freshCard());
    const made: Json[] = [];
    for (const card of cards.slice(0, 16)) {
      const response = await createToken(inNamespace(namespace, card));
      expect(response.status).toBe(201);
      made.push(await response.json<Json>());
    }
    const refused = await createToken(inNamespace(namespace, cards[16]!));
    expect(refused.status).toBe(403);
    expect((await refused.json<Json>()).errorName).toBe('tooManyTokensForNamespace');
    // A card already in: 200, its token.
    const again = await createToken(inNamespace(namespace, cards[3]!));
    expect(again.status).toBe(200);
    expect((await again.json<Json>()).tokenId).toBe(made[3]!.tokenId);
    expect((await createToken(inNamespace(namespace, cards[16]!))).status).toBe(403);
    // The same card outside the namespace is not counted against it.
    expect((await createToken(tokenBody({ cardNumber: cards[16] }))).status).toBe(201);

    expect((await tokenCall('DELETE', made[5]!.tokenPaymentInstrument.href)).status).toBe(204);
    const now = await createToken(inNamespace(namespace, cards[16]!));
    expect(now.status).toBe(201);
    const added = (await now.json<Json>()).tokenId as string;
    const expected = made.map((t) => t.tokenId as string).filter((_, i) => i !== 5);
    expect(new Set(await listed(namespace))).toEqual(new Set([...expected, added]));
    expect((await createToken(inNamespace(namespace, cards[5]!))).status).toBe(403);
  });

  it('lets exactly 16 of 20 different cards into an empty namespace at once (201), refuses 4 (403), and lists exactly the 16', async () => {
    const namespace = newNamespace();
    const cards = Array.from({ length: 20 }, () => freshCard());
    const responses = await burst(20, (i) => createToken(inNamespace(namespace, cards[i]!)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(16);
    expect(statuses.filter((s) => s === 403)).toHaveLength(4);
    const answers = await Promise.all(responses.map((r) => r.json<Json>()));
    for (const [i, a] of answers.entries()) {
      if (statuses[i] === 403) expect(a.errorName).toBe('tooManyTokensForNamespace');
    }
    const created = answers.filter((_, i) => statuses[i] === 201).map((a) => a.tokenId as string);
    const ids = await listed(namespace);
    expect(ids).toHaveLength(16);
    expect(new Set(ids)).toEqual(new Set(created));
    // The 16 again at once: all 200, nothing new.
    const again = await burst(20, (i) => createToken(inNamespace(namespace, cards[i]!)));
    expect(again.map((r) => r.status)).toEqual(statuses.map((s) => (s === 201 ? 200 : 403)));
    expect(new Set(await listed(namespace))).toEqual(new Set(created));
  });

  it("keeps namespaces apart between merchants: the same name is another merchant's own namespace", async () => {
    const namespace = newNamespace();
    const mine = await newToken({ extra: { namespace } });
    const them = { Authorization: OTHER_AUTH };
    await expectNotFound(await queryTokens(`namespace=${namespace}`, them));
    await expectNotFound(await queryTokens(`namespace=${namespace}&tokenId=${mine.token.tokenId}`, them));
    const theirs = await createToken(inNamespace(namespace, mine.cardNumber, 'other'), them);
    expect(theirs.status).toBe(201);
    const theirId = (await theirs.json<Json>()).tokenId as string;
    expect(theirId).not.toBe(mine.token.tokenId);
    expect(await listed(namespace, them)).toEqual([theirId]);
    expect(await listed(namespace)).toEqual([mine.token.tokenId]);
    await expectNotFound(await queryTokens(`namespace=${namespace}&tokenId=${theirId}`));
  });

  it('lists a namespace without its deleted tokens, and answers 404 once it is empty', async () => {
    const namespace = newNamespace();
    const a = await newToken({ extra: { namespace } });
    const b = await newToken({ extra: { namespace } });
    expect((await tokenCall('DELETE', a.href)).status).toBe(204);
    expect(await listed(namespace)).toEqual([b.token.tokenId]);
    expect((await tokenCall('DELETE', b.href)).status).toBe(204);
    await expectNotFound(await queryTokens(`namespace=${namespace}`));
  });
});

// --- bursts --------------------------------------------------------------------------------------

describe('updates under bursts', () => {
  it.each([
    ['description', 'Same every time'],
    ['cardHolderName', 'Augusta Ada King'],
    ['billingAddress', ADDRESS_B],
    ['cardExpiryDate', { month: 3, year: 2033 }],
    ['schemeTransactionReference', 'REF 42'],
  ] as [Attribute, unknown][])(
    'answers 20 identical PUTs of %s at once with 204 and writes KV once: one new version, one update counted',
    async (attribute, value) => {
      const { token, href } = await newToken();
      await projectionSettled(token);
      const harness = new StorageHarness().throughObjects();
      const responses = await burst(20, () => putAttribute(href, attribute, value, {}, (r) => harness.fetch(r)));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
      const stored = await expectGuardAgrees(token);
      // The value held already changes nothing: one version, one write of the token's key.
      expect(objectWritesOf(harness, token)).toBe(1);
      expect(stored.version).toBe(2);
      expect(await countedUpdates(stored)).toBe(1);
      const shown = await getToken(href);
      const held =
        attribute === 'description' || attribute === 'schemeTransactionReference' ? shown : shown.paymentInstrument;
      expect(held[attribute]).toEqual(value);
    },
  );

  it(
    'answers a PUT of the value the token holds with 204 and changes nothing, also past the limit',
    { timeout: 120_000 },
    async () => {
      const { token, href } = await newToken({ name: 'Ada' });
      await projectionSettled(token);
      const harness = new StorageHarness().throughObjects();
      expect((await putAttribute(href, 'cardHolderName', 'Ada', {}, (r) => harness.fetch(r))).status).toBe(204);
      expect((await record(token)).version).toBe(1);
      expect(objectWritesOf(harness, token)).toBe(0);
      for (let i = 0; i < 50; i++) expect((await putAttribute(href, 'description', `Update ${i}`)).status).toBe(204);
      expect((await putAttribute(href, 'description', 'Update 49')).status).toBe(204);
      expect((await putAttribute(href, 'description', 'Update 50')).status).toBe(429);
      expect((await record(token)).version).toBe(51);
    },
  );

  it('answers 20 PUTs of one attribute at once with 204: one of the values stands, version 21', async () => {
    const { token, href } = await newToken();
    const values = Array.from({ length: 20 }, (_, i) => `Holder ${i}`);
    const responses = await burst(20, (i) => putAttribute(href, 'cardHolderName', values[i]));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
    expect(values).toContain((await getToken(href)).paymentInstrument.cardHolderName);
    expect((await expectGuardAgrees(token)).version).toBe(21);
  });

  it('answers 20 PUTs spread over the five attributes at once with 204: each attribute holds one of its values, version 21', async () => {
    const { token, href } = await newToken();
    const attributes = Object.keys(ATTRIBUTE_PATHS) as Attribute[];
    const valueOf = (i: number): unknown => {
      const n = Math.floor(i / 5);
      switch (attributes[i % 5]) {
        case 'description':
          return `Description ${n}`;
        case 'cardHolderName':
          return `Holder ${n}`;
        case 'cardExpiryDate':
          return { month: n + 1, year: 2030 + n };
        case 'billingAddress':
          return { ...ADDRESS_A, address1: `${n} Brook Street` };
        default:
          return `REF ${n}`;
      }
    };
    const responses = await burst(20, (i) => putAttribute(href, attributes[i % 5]!, valueOf(i)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
    const shown = await getToken(href);
    const sent = (attribute: Attribute) =>
      Array.from({ length: 20 }, (_, i) => i)
        .filter((i) => attributes[i % 5] === attribute)
        .map(valueOf);
    expect(sent('description')).toContainEqual(shown.description);
    expect(sent('cardHolderName')).toContainEqual(shown.paymentInstrument.cardHolderName);
    expect(sent('cardExpiryDate')).toContainEqual(shown.paymentInstrument.cardExpiryDate);
    expect(sent('billingAddress')).toContainEqual(shown.paymentInstrument.billingAddress);
    expect(sent('schemeTransactionReference')).toContainEqual(shown.schemeTransactionReference);
    expect((await expectGuardAgrees(token)).version).toBe(21);
  });

  it.each([1, 2, 3])('leaves a token gone for good when updates race its DELETE (round %i)', async () => {
    const harness = new StorageHarness();
    const via: Fetch = (r) => harness.fetch(r);
    const { href, token } = await newToken({ via });
    const responses = await burst(12, (i) =>
      i === 6 ? tokenCall('DELETE', href, {}, via) : putAttribute(href, 'description', `Racing ${i}`, {}, via),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses[6]).toBe(204);
    for (const [i, s] of statuses.entries()) if (i !== 6) expect([204, 404], `PUT ${i}`).toContain(s);
    // Gone at once on every exact path.
    await expectNotFound(await tokenCall('GET', href));
    await expectNotFound(await putAttribute(href, 'description', 'after'));
    // KV's copy, which lookups read, is deleted once the projection settles, and stays so.
    expect(await expectConsistent(token)).toBeNull();
    const lookup = await lookupByToken(href);
    expect(lookup.status).toBe(404);
    expect((await lookup.json<Json>()).errorName).toBe('tokenNotFound');
    await harness.settled();
    await expectNotFound(await tokenCall('GET', href));
  });

  it('gives one token when updates race POSTs of the same card: each POST 200 or 409, as the token stood', async () => {
    const { token, href, cardNumber } = await newToken({ name: 'Original', address: null });
    const post = tokenBody({ cardNumber, name: 'Original' });
    const responses = await burst(20, (i) =>
      i % 2 ? createToken(post) : putAttribute(href, 'cardHolderName', `Renamed ${i}`),
    );
    const puts = responses.filter((_, i) => i % 2 === 0);
    const posts = responses.filter((_, i) => i % 2 === 1);
    expect(puts.map((r) => r.status)).toEqual(Array(10).fill(204));
    for (const response of posts) {
      const answer = await response.json<Json>();
      expect(answer.tokenId).toBe(token.tokenId);
      if (response.status === 200) {
        expect(answer.paymentInstrument.cardHolderName).toBe('Original');
        expect(answer).not.toHaveProperty('conflicts');
      } else {
        expect(response.status).toBe(409);
        expect(answer.paymentInstrument.cardHolderName).toMatch(/^Renamed \d+$/);
        expect(answer.conflicts.paymentInstrument).toEqual({ cardHolderName: 'Original' });
      }
    }
    expect((await getToken(href)).paymentInstrument.cardHolderName).toMatch(/^Renamed \d+$/);
    expect((await expectGuardAgrees(token)).version).toBe(11);
  });
});

// --- lifetime ------------------------------------------------------------------------------------

/**
 * Ages a token by `byMs`, white-box: its record in its object and in KV get an older creation and
 * start of life and a nearer end, as if it had been made that long ago.
 */
async function age(token: Json, byMs: number): Promise<Json> {
  const stored = await record(token);
  const older = (r: Json): Json => {
    const expiresAt = r.expiresAt - byMs;
    return {
      ...r,
      createdAt: r.createdAt - byMs,
      lifeStartedAt: (r.lifeStartedAt ?? r.createdAt) - byMs,
      expiresAt,
      tokenExpiryDateTime: iso(expiresAt),
    };
  };
  const aged = older(stored);
  await runInDurableObject(tokenGroupOf(stored), (_g, state) => {
    state.storage.sql.exec(
      'UPDATE tokens SET record = ?, expires_at = ? WHERE token_id = ?',
      JSON.stringify(aged),
      aged.expiresAt,
      stored.tokenId,
    );
  });
  await env.SESSIONS.put(`token:${stored.tokenId}`, JSON.stringify(aged), { expirationTtl: 8 * 24 * 3600 });
  return aged;
}

/** A tokenExpiryDateTime about the test lifetime from now (extended just now). */
function expectExtended(tokenExpiryDateTime: string, since: number): void {
  const end = Date.parse(tokenExpiryDateTime);
  expect(end).toBeGreaterThanOrEqual(Math.floor((since + TEST_LIFETIME) / 1000) * 1000);
  expect(end).toBeLessThanOrEqual(Date.now() + TEST_LIFETIME);
}

describe('token lifetime', () => {
  it('extends a token read past half its life by 7 days from now, once', async () => {
    const { token, href } = await newToken();
    expect((await record(token)).version).toBe(1);
    // Read before half its life: as it was.
    expect((await getToken(href)).tokenExpiryDateTime).toBe(token.tokenExpiryDateTime);
    const aged = await age(token, 4 * DAY);
    const since = Date.now();
    const read = await getToken(href);
    expectExtended(read.tokenExpiryDateTime, since);
    expect(Date.parse(read.tokenExpiryDateTime)).toBeGreaterThan(aged.expiresAt + 3 * DAY);
    const stored = await expectGuardAgrees(token);
    expect(stored.version).toBe(2);
    expect(stored.createdAt).toBe(aged.createdAt);
    expect(stored.lifeStartedAt).toBeGreaterThanOrEqual(since);
    expect(stored.tokenExpiryDateTime).toBe(read.tokenExpiryDateTime);
    // Read again: no longer past half its (new) life.
    expect((await getToken(href)).tokenExpiryDateTime).toBe(read.tokenExpiryDateTime);
    expect((await record(token)).version).toBe(2);
  });

  it('extends a token read by 20 requests at once past half its life once, in one version', async () => {
    const { token, href } = await newToken();
    await age(token, 4 * DAY);
    const since = Date.now();
    await projectionSettled(token);
    const harness = new StorageHarness().throughObjects();
    const reads = await burst(20, () => getToken(href, {}, (r) => harness.fetch(r)));
    const ends = new Set(reads.map((read) => read.tokenExpiryDateTime));
    expect(ends.size).toBe(1);
    expectExtended(reads[0]!.tokenExpiryDateTime, since);
    const stored = await expectGuardAgrees(token);
    // One new version, written once: the reads that found it extended changed nothing.
    expect(stored.version).toBe(2);
    expect(objectWritesOf(harness, token)).toBe(1);
  });

  it('never extends a token whose expiry the merchant chose', async () => {
    const chosen = iso(Date.now() + 2 * DAY);
    const { token, href } = await newToken({ extra: { tokenExpiryDateTime: chosen } });
    expect(token.tokenExpiryDateTime).toBe(chosen);
    const aged = await age(token, 1.5 * DAY);
    expect((await getToken(href)).tokenExpiryDateTime).toBe(aged.tokenExpiryDateTime);
    expect((await putAttribute(href, 'description', 'still chosen')).status).toBe(204);
    const stored = await record(token);
    expect(stored.version).toBe(2);
    expect(stored.tokenExpiryDateTime).toBe(aged.tokenExpiryDateTime);
    expect(stored.expiryChosen).toBe(true);
  });

  it('extends in the same version as an update made past half its life', async () => {
    const { token, href } = await newToken();
    await age(token, 5 * DAY);
    const since = Date.now();
    expect((await putAttribute(href, 'description', 'used late')).status).toBe(204);
    const stored = await expectGuardAgrees(token);
    expect(stored.version).toBe(2);
    expect(stored.description).toBe('used late');
    expectExtended(stored.tokenExpiryDateTime, since);
  });

  it('extends a token used past half its life by a lookup, by 3DS, and by a POST of its card', async () => {
    const harness = new StorageHarness();
    const via: Fetch = (r) => harness.fetch(r);
    const byLookup = await newToken();
    const by3ds = await newToken();
    const byPost = await newToken({ name: 'Ada Lovelace' });
    for (const made of [byLookup, by3ds, byPost]) await age(made.token, 4 * DAY);
    const since = Date.now();

    expect((await lookupByToken(byLookup.href, via)).status).toBe(200);
    expect((await authenticateWithToken(by3ds.href, via)).status).toBe(200);
    const body = tokenBody({ cardNumber: byPost.cardNumber, name: 'Ada Lovelace' });
    body.paymentInstrument.billingAddress = ADDRESS_A;
    const posted = await createToken(body, {}, via);
    expect(posted.status).toBe(200);
    expectExtended((await posted.json<Json>()).tokenExpiryDateTime, since);
    // The lookup and 3DS extend after their answer.
    await harness.settled();
    for (const made of [byLookup, by3ds, byPost]) {
      const stored = await expectGuardAgrees(made.token);
      expect(stored.version).toBe(2);
      expectExtended(stored.tokenExpiryDateTime, since);
      expectExtended((await getToken(made.href)).tokenExpiryDateTime, since);
    }
  });

  it(
    'keeps an extended token in its namespace past its first end, and does not count extensions as updates',
    { timeout: 120_000 },
    async () => {
      const namespace = newNamespace();
      const { token, href } = await newToken({ extra: { namespace } });
      for (let i = 0; i < 50; i++) expect((await putAttribute(href, 'description', `Update ${i}`)).status).toBe(204);
      const aged = await age(token, 4 * DAY);
      const since = Date.now();
      const listing = await queryTokens(`namespace=${namespace}`);
      expect(listing.status).toBe(200);
      expectExtended((await listing.json<Json>())._embedded.tokens[0].tokenExpiryDateTime, since);
      expect((await record(token)).version).toBe(52);
      // Past the end it had before: still there, and still listed.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(aged.expiresAt + MINUTE);
      expect(await listed(namespace)).toEqual([token.tokenId]);
      expect((await tokenCall('GET', href)).status).toBe(200);
    },
  );
});

// --- logs ----------------------------------------------------------------------------------------

describe('log lines of a whole life cycle', () => {
  it('never hold the full card number', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(String(line)));
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(String(line)));
    const namespace = newNamespace();
    const cardNumber = freshCard();
    const { href } = await newToken({ cardNumber, name: 'Any Name' });
    const inNs = await createToken(inNamespace(namespace, cardNumber));
    expect(inNs.status).toBe(201);
    await getToken(href);
    for (const { attribute, value } of UPDATES) expect((await putAttribute(href, attribute, value)).status).toBe(204);
    await expectErrorCase(
      {
        name: 'bad',
        send: () => putAttribute(href, 'cardHolderName', ''),
        status: 400,
        errorName: 'bodyDoesNotMatchSchema',
        fields: [['fieldIsEmpty', '$']],
      },
      TOKENS_MEDIA,
    );
    const { link } = await conflictOf(tokenBody({ cardNumber, name: 'Ada L' }));
    expect((await onConflict('GET', link)).status).toBe(200);
    expect((await onConflict('PUT', link)).status).toBe(204);
    expect((await queryTokens(`namespace=${namespace}`)).status).toBe(200);
    expect((await lookupByToken(href)).status).toBe(200);
    expect((await authenticateWithToken(href)).status).toBe(200);
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    expect((await putAttribute(href, 'description', 'gone')).status).toBe(404);
    expect(lines.length).toBeGreaterThan(10);
    const logged = lines.join('\n');
    expect(logged).toContain(`${cardNumber.slice(0, 6)}******${cardNumber.slice(-4)}`);
    expect(logged).not.toContain(cardNumber);
    expect(logged).not.toContain(cardNumber.slice(6, 12));
  });
});
