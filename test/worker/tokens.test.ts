import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  call,
  CARD_BIN_HEADERS,
  expectErrorCase,
  luhnComplete,
  OTHER_AUTH,
  panLookup,
  type ErrorCase,
} from './helpers';
import {
  createToken,
  freshCard,
  projectionSettled,
  tokenGroupOf,
  TOKENS_HEADERS as HEADERS,
  tokenBody,
  tokenCall,
  TOKENS_MEDIA,
} from './token-helpers';

type Json = Record<string, any>;

const DAY = 24 * 60 * 60 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

describe('token life cycle', () => {
  it('creates a token (201 + Location), reads it, deletes it (204), and then it is gone', async () => {
    const cardNumber = luhnComplete('45713684', 16, '7');
    const created = await createToken(
      tokenBody({ cardNumber, name: 'Ada Lovelace', extra: { description: "Ada's Visa" } }),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('Content-Type')).toBe(TOKENS_MEDIA);
    const token: Json = await created.json();
    expect(created.headers.get('Location')).toBe(token.tokenPaymentInstrument.href);
    expect(token).toMatchObject({
      // The href names the token's object (its id), then the token (docs/tokens.md "Token ids and hrefs").
      tokenPaymentInstrument: {
        type: 'card/tokenized',
        href: expect.stringMatching(new RegExp(`^https://edge\\.test/tokens/[0-9a-f]{64}${token.tokenId}$`)),
      },
      description: "Ada's Visa",
      paymentInstrument: {
        type: 'card/masked',
        cardNumber: `${cardNumber.slice(0, 6)}******${cardNumber.slice(-4)}`,
        cardExpiryDate: { month: 12, year: 2035 },
        cardHolderName: 'Ada Lovelace',
        bin: '457136',
        brand: 'visa',
        fundingType: 'debit',
        countryCode: 'DK',
      },
    });
    // Worldpay's token id: 15–21 digits and capitals without I or O.
    expect(token.tokenId).toMatch(/^[0-9A-HJ-NP-Z]{21}$/);
    const href = token.tokenPaymentInstrument.href as string;
    expect(token._links).toEqual({
      'tokens:token': { href },
      'tokens:description': { href: `${href}/description` },
      'tokens:cardHolderName': { href: `${href}/paymentInstrument/cardHolderName` },
      'tokens:cardExpiryDate': { href: `${href}/paymentInstrument/cardExpiryDate` },
      'tokens:billingAddress': { href: `${href}/paymentInstrument/billingAddress` },
      'tokens:schemeTransactionReference': { href: `${href}/schemeTransactionReference` },
    });
    expect(token.tokenExpiryDateTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const expiry = Date.parse(token.tokenExpiryDateTime) - Date.now();
    expect(expiry).toBeGreaterThan(7 * DAY - 60_000);
    expect(expiry).toBeLessThanOrEqual(7 * DAY);
    expect(JSON.stringify(token)).not.toContain(cardNumber);

    const read = await tokenCall('GET', token.tokenPaymentInstrument.href);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(token);

    const deleted = await tokenCall('DELETE', token.tokenPaymentInstrument.href);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(404);
    // DELETE is idempotent: a retry (or a repeat) still ends in the token being gone, with 204.
    expect((await tokenCall('DELETE', token.tokenPaymentInstrument.href)).status).toBe(204);
    // A lookup asks the token's object (docs/storage.md "Reads"): 404 at once, not once KV settles.
    const lookup = await panLookup({ merchant: { entity: 'default' }, token: token.tokenPaymentInstrument.href });
    expect(lookup.status).toBe(404);
    expect((await lookup.json<Json>()).errorName).toBe('tokenNotFound');
  });

  it('answers panLookup by a token made the request before, and 404 tokenNotFound on the request right after its deletion (20 of 20)', async () => {
    for (let i = 0; i < 20; i++) {
      const made = await createToken(tokenBody({ cardNumber: freshCard() }));
      expect(made.status).toBe(201);
      const href = (await made.json<Json>()).tokenPaymentInstrument.href as string;
      const found = await panLookup({ merchant: { entity: 'default' }, token: href });
      expect(found.status, `try ${i}: ${await found.clone().text()}`).toBe(200);
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      const gone = await panLookup({ merchant: { entity: 'default' }, token: href });
      expect(gone.status, `try ${i}`).toBe(404);
      expect((await gone.json<Json>()).errorName).toBe('tokenNotFound');
    }
  });

  it('answers the same card again for the same merchant with 200 and the same token', async () => {
    const body = tokenBody({ cardNumber: luhnComplete('531265', 16, '3') });
    const first: Json = await (await createToken(body)).json();
    const again = await createToken(body);
    expect(again.status).toBe(200);
    expect((await again.json<Json>()).tokenId).toBe(first.tokenId);
  });

  it('answers 409 with the conflicts for the same number with another expiry date or name, and a new token after a delete', async () => {
    const cardNumber = luhnComplete('531265', 16, '4');
    const first: Json = await (await createToken(tokenBody({ cardNumber, year: 2035, name: 'Ada' }))).json();
    const reissued = await createToken(tokenBody({ cardNumber, year: 2036, name: 'Ada L' }));
    expect(reissued.status).toBe(409);
    expect(reissued.headers.get('Location')).toBe(first.tokenPaymentInstrument.href);
    const conflict = await reissued.json<Json>();
    // The token keeps its details; the conflicts are what this request sent differently.
    expect(conflict).toMatchObject({
      tokenId: first.tokenId,
      paymentInstrument: { cardExpiryDate: { year: 2035 }, cardHolderName: 'Ada' },
    });
    expect(conflict.conflicts).toEqual({
      conflictsExpiryDateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      paymentInstrument: { cardHolderName: 'Ada L', cardExpiryDate: { month: 12, year: 2036 } },
    });
    expect(conflict._links['tokens:conflicts'].href).toMatch(
      new RegExp(`^${first.tokenPaymentInstrument.href}/conflicts/[\\w-]{22}$`),
    );
    // Leaving a detail out is no conflict.
    expect((await createToken(tokenBody({ cardNumber, year: 2035 }))).status).toBe(200);
    await tokenCall('DELETE', first.tokenPaymentInstrument.href);
    const recreated = await createToken(tokenBody({ cardNumber, year: 2035 }));
    expect(recreated.status).toBe(201);
    expect((await recreated.json<Json>()).tokenId).not.toBe(first.tokenId);
  });

  it('keeps the billing address with the card: GET shows it, and the same request again is no conflict', async () => {
    const cardNumber = luhnComplete('45713684', 16, '5');
    const billingAddress = {
      address1: '12 Brook Street',
      postalCode: 'W1S 1AA',
      city: 'London',
      countryCode: 'GB',
    };
    const body = tokenBody({ cardNumber, name: 'Ada Lovelace', extra: {} });
    body.paymentInstrument.billingAddress = billingAddress;
    const created: Json = await (await createToken(body)).json();
    expect(created.paymentInstrument.billingAddress).toEqual(billingAddress);
    const read: Json = await (await tokenCall('GET', created.tokenPaymentInstrument.href)).json();
    expect(read.paymentInstrument.billingAddress).toEqual(billingAddress);
    const again = await createToken(body);
    expect(again.status).toBe(200);
    const moved = structuredClone(body);
    moved.paymentInstrument.billingAddress.city = 'Cambridge';
    const conflict = await createToken(moved);
    expect(conflict.status).toBe(409);
    expect((await conflict.json<Json>()).conflicts).toEqual({
      conflictsExpiryDateTime: expect.any(String),
      paymentInstrument: { billingAddress: { ...billingAddress, city: 'Cambridge' } },
    });
    // Sealed with the card: no part of it is stored in clear.
    const stored = (await env.SESSIONS.get(`token:${created.tokenId}`))!;
    expect(stored).not.toContain('Brook Street');
  });

  it('honours a requested tokenExpiryDateTime (to the second) and forgets the token after it', async () => {
    const at = new Date(Date.now() + 2 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const token: Json = await (
      await createToken(tokenBody({ cardNumber: luhnComplete('432376', 16, '5'), extra: { tokenExpiryDateTime: at } }))
    ).json();
    expect(token.tokenExpiryDateTime).toBe(at);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * DAY + 1000);
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(404);
    expect(
      (await panLookup({ merchant: { entity: 'default' }, token: token.tokenPaymentInstrument.href })).status,
    ).toBe(404);
  });

  it('expires a default token after 7 days in test', async () => {
    const token: Json = await (await createToken(tokenBody({ cardNumber: luhnComplete('432376', 16, '6') }))).json();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 7 * DAY + 1000);
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(404);
  });
});

describe('tokens between merchants', () => {
  it('keeps a token invisible to another merchant (404 everywhere: resourceNotFound on /tokens, tokenNotFound by reference)', async () => {
    const token: Json = await (await createToken(tokenBody({ cardNumber: luhnComplete('45713684', 16, '8') }))).json();
    const href = token.tokenPaymentInstrument.href;
    for (const method of ['GET', 'DELETE']) {
      const response = await tokenCall(method, href, { Authorization: OTHER_AUTH });
      expect(response.status).toBe(404);
      expect((await response.json<Json>()).errorName).toBe('resourceNotFound');
    }
    const lookup = await panLookup({ merchant: { entity: 'other' }, token: href }, { Authorization: OTHER_AUTH });
    expect(lookup.status).toBe(404);
    // Still there for its owner.
    expect((await tokenCall('GET', href)).status).toBe(200);
  });

  it('does not de-duplicate across merchants: the same card gets each merchant its own token', async () => {
    const cardNumber = luhnComplete('45713684', 16, '9');
    const mine: Json = await (await createToken(tokenBody({ cardNumber }))).json();
    const theirs = await createToken(tokenBody({ cardNumber, entity: 'other' }), { Authorization: OTHER_AUTH });
    expect(theirs.status).toBe(201);
    expect((await theirs.json<Json>()).tokenId).not.toBe(mine.tokenId);
  });
});

describe('card BIN lookup by token', () => {
  it('answers exactly as the lookup by card number, for a sample of the shipped data', async () => {
    const prefixes = [
      '341142',
      '360218',
      '432376',
      '45713684',
      '45716190',
      '45710800',
      '45710801',
      '453748',
      '467726',
      '410131',
      '525500',
      '531265',
      '542976',
      '450935',
      '670686',
      '49999999',
      '27200000',
      '62000000',
    ];
    for (const prefix of prefixes) {
      const cardNumber = luhnComplete(prefix, prefix.startsWith('3') ? 15 : 16);
      const byCard = await panLookup({ merchant: { entity: 'default' }, cardNumber });
      const token: Json = await (await createToken(tokenBody({ cardNumber }))).json();
      const byToken = await panLookup({ merchant: { entity: 'default' }, token: token.tokenPaymentInstrument.href });
      expect(byToken.status, prefix).toBe(200);
      expect(await byToken.json(), prefix).toEqual(await byCard.json());
    }
  });

  it('lets the non-PCI entity look up by token, though not by card number', async () => {
    const cardNumber = luhnComplete('432376', 16, '1');
    const token: Json = await (await createToken(tokenBody({ cardNumber }))).json();
    expect((await panLookup({ merchant: { entity: 'nonpci' }, cardNumber })).status).toBe(400);
    expect((await panLookup({ merchant: { entity: 'nonpci' }, token: token.tokenPaymentInstrument.href })).status).toBe(
      200,
    );
  });

  it('tokenizes an expired card, as Worldpay does, and a lookup by the token answers underlyingPaymentInstrumentHasExpired', async () => {
    const created = await createToken(
      tokenBody({ cardNumber: luhnComplete('4323769', 16, '1'), month: 1, year: 2020 }),
    );
    expect(created.status).toBe(201);
    const lookup = await panLookup({
      merchant: { entity: 'default' },
      token: (await created.json<Json>()).tokenPaymentInstrument.href,
    });
    expect(lookup.status).toBe(400);
    expect((await lookup.json<Json>()).errorName).toBe('underlyingPaymentInstrumentHasExpired');
  });

  it('answers underlyingPaymentInstrumentHasExpired once the card behind the token has expired', async () => {
    const now = new Date();
    const token: Json = await (
      await createToken(
        tokenBody({
          cardNumber: luhnComplete('432376', 16, '2'),
          month: now.getUTCMonth() + 1,
          year: now.getUTCFullYear(),
          extra: { tokenExpiryDateTime: new Date(Date.now() + 365 * DAY).toISOString() },
        }),
      )
    ).json();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) + 1000);
    const response = await panLookup({ merchant: { entity: 'default' }, token: token.tokenPaymentInstrument.href });
    expect(response.status).toBe(400);
    expect((await response.json<Json>()).errorName).toBe('underlyingPaymentInstrumentHasExpired');
  });

  it('applies the entity brand rule to the card behind the token', async () => {
    const token: Json = await (await createToken(tokenBody({ cardNumber: luhnComplete('341142', 15) }))).json();
    const response = await panLookup({ merchant: { entity: 'limited' }, token: token.tokenPaymentInstrument.href });
    expect((await response.json<Json>()).errorName).toBe('paymentInstrumentIsNotSupported');
  });
});

describe('token storage', () => {
  it("keeps no card number in clear in any KV key or value, nor anywhere in the token's object", async () => {
    const cardNumber = luhnComplete('45713684', 16, '6');
    const created = await createToken(tokenBody({ cardNumber, name: 'Grace Hopper' }));
    const token = await created.json<Json>();
    // A conflict keeps the details a second tokenization sent: sealed too.
    const conflicting = await createToken(tokenBody({ cardNumber, name: 'Grace B Hopper' }));
    expect(conflicting.status).toBe(409);
    await projectionSettled(token);
    const keys = (await env.SESSIONS.list({ prefix: 'token' })).keys.map((k) => k.name);
    expect(keys).toContain(`token:${token.tokenId}`);
    const secrets = [cardNumber, cardNumber.slice(6, 12), 'Grace Hopper', 'Grace B Hopper'];
    for (const key of keys) {
      expect(key).not.toContain(cardNumber);
      const value = (await env.SESSIONS.get(key))!;
      for (const secret of secrets) expect(value).not.toContain(secret);
    }
    // Every row of every table of the token's object, white-box.
    const rows = await runInDurableObject(tokenGroupOf(token), (_g, state) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
        )
        .toArray()
        .map((t) => t.name);
      return JSON.stringify(tables.map((t) => [t, sql.exec(`SELECT * FROM "${t}"`).toArray()]));
    });
    expect(rows).toContain('"tokens"');
    expect(rows).toContain('"conflicts"');
    for (const secret of secrets) expect(rows).not.toContain(secret);
  });

  it('answers 503 serviceUnavailable for a token sealed with a key no longer configured, never a 500', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const created = await createToken(tokenBody({ cardNumber: luhnComplete('45713684', 16, '5') }));
    const token = await created.json<Json>();
    await projectionSettled(token);
    // As if the key the card was sealed with had been dropped from TOKEN_ENCRYPTION_KEYS.
    const dropped = (record: Json): Json => ({ ...record, sealed: { ...record.sealed, kid: 'dropped' } });
    await runInDurableObject(tokenGroupOf(token), (_g, state) => {
      const row = state.storage.sql.exec<{ record: string }>('SELECT record FROM tokens').one();
      state.storage.sql.exec('UPDATE tokens SET record = ?', JSON.stringify(dropped(JSON.parse(row.record) as Json)));
    });
    const key = `token:${token.tokenId}`;
    await env.SESSIONS.put(key, JSON.stringify(dropped((await env.SESSIONS.get<Json>(key, 'json'))!)));
    for (const response of [
      await tokenCall('GET', token.tokenPaymentInstrument.href),
      await panLookup({ merchant: { entity: 'default' }, token: token.tokenPaymentInstrument.href }),
    ]) {
      expect(response.status).toBe(503);
      expect(response.headers.get('Retry-After')).toMatch(/^\d+$/);
      expect((await response.json<Json>()).errorName).toBe('serviceUnavailable');
    }
  });
});

const TOKEN_ERRORS: ErrorCase[] = [
  {
    name: 'no Accept',
    send: () => createToken(tokenBody(), { Accept: undefined }),
    status: 400,
    errorName: 'headerIsMissing',
    headerName: 'Accept',
  },
  {
    name: 'Content-Type application/json',
    send: () => createToken(tokenBody(), { 'Content-Type': 'application/json' }),
    status: 415,
    errorName: 'headerHasInvalidValue',
    headerName: 'Content-Type',
  },
  {
    name: 'no credentials',
    send: () => createToken(tokenBody(), { Authorization: undefined }),
    status: 401,
    errorName: 'headerIsMissing',
    headerName: 'Authorization',
  },
  {
    name: 'an empty body',
    send: () => createToken({}),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [
      ['fieldIsMissing', '$.paymentInstrument'],
      ['fieldIsMissing', '$.merchant'],
    ],
  },
  {
    name: 'a card/tokenized instrument',
    send: () =>
      createToken({ ...tokenBody(), paymentInstrument: { ...tokenBody().paymentInstrument, type: 'card/tokenized' } }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldHasInvalidValue', '$.paymentInstrument.type']],
  },
  {
    name: 'a card failing Luhn',
    send: () => createToken(tokenBody({ cardNumber: '4444333322221112' })),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['panFailedLuhnCheck', '$.paymentInstrument.cardNumber']],
  },
  {
    name: 'a token expiry that is not a date-time',
    send: () => createToken(tokenBody({ extra: { tokenExpiryDateTime: 'tomorrow' } })),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['dateHasInvalidFormat', '$.tokenExpiryDateTime']],
  },
  {
    name: 'a token expiry on 30 February',
    send: () => createToken(tokenBody({ extra: { tokenExpiryDateTime: '2027-02-30T00:00:00Z' } })),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['dateHasInvalidFormat', '$.tokenExpiryDateTime']],
  },
  {
    name: 'a token expiry in the past',
    send: () => createToken(tokenBody({ extra: { tokenExpiryDateTime: '2020-01-01T00:00:00Z' } })),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldHasInvalidValue', '$.tokenExpiryDateTime']],
  },
  {
    name: 'a token expiry in the past, with another field error, for a non-PCI entity (field errors come first, together)',
    send: () =>
      createToken(
        tokenBody({
          cardNumber: '4444333322221112',
          entity: 'nonpci',
          extra: { tokenExpiryDateTime: '2020-01-01T00:00:00Z' },
        }),
      ),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [
      ['panFailedLuhnCheck', '$.paymentInstrument.cardNumber'],
      ['fieldHasInvalidValue', '$.tokenExpiryDateTime'],
    ],
  },
  {
    name: 'a token expiry beyond 4 years',
    send: () => createToken(tokenBody({ extra: { tokenExpiryDateTime: '2099-01-01T00:00:00Z' } })),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldHasInvalidValue', '$.tokenExpiryDateTime']],
  },
  {
    name: 'an unknown entity',
    send: () => createToken(tokenBody({ entity: 'nobody' })),
    status: 400,
    errorName: 'entityIsNotConfigured',
  },
  {
    name: 'a card number from the non-PCI entity',
    send: () => createToken(tokenBody({ entity: 'nonpci' })),
    status: 400,
    errorName: 'merchantIsNotConfigured',
  },
  {
    name: 'an Amex card on the limited entity',
    send: () => createToken(tokenBody({ entity: 'limited', cardNumber: luhnComplete('341142', 15) })),
    status: 400,
    errorName: 'paymentInstrumentIsNotSupported',
  },
  {
    name: 'GET of an id with bad characters',
    send: () => tokenCall('GET', 'https://edge.test/tokens/bad$id'),
    status: 400,
    errorName: 'urlContainsInvalidValue',
    fields: [['fieldHasInvalidValue', '$.tokenId']],
  },
  {
    name: 'GET of an unknown token',
    send: () => tokenCall('GET', 'https://edge.test/tokens/AAAAAAAAAAAAAAAAAAAAAAAA'),
    status: 404,
    errorName: 'resourceNotFound',
  },
  {
    name: "GET of an id as long as Worldpay's",
    send: () => tokenCall('GET', `https://edge.test/tokens/${'eyJrIjoxLCJkIjoi'.repeat(10)}`),
    status: 404,
    errorName: 'resourceNotFound',
  },
  {
    name: 'POST of a number no card scheme claims',
    send: () => createToken(tokenBody({ cardNumber: luhnComplete('9999', 16) })),
    status: 422,
    errorName: 'unrecognizedCardBrand',
  },
  {
    name: 'POST with a description holding <',
    send: () => createToken(tokenBody({ extra: { description: 'a<b' } })),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['stringFailedRegexCheck', '$.description']],
  },
  {
    name: 'PUT on a token',
    send: () => call('/tokens/abc', { method: 'PUT', headers: HEADERS, body: {} }),
    status: 405,
    errorName: 'methodNotAllowed',
  },
];

describe('token errors', () => {
  it.each(TOKEN_ERRORS)('answers $name with $status $errorName', (c) => expectErrorCase(c, TOKENS_MEDIA));

  it('answers a lookup by a token href of another service with fieldHasInvalidValue at $.token', async () => {
    const response = await call('/api/cardBin/panLookup', {
      body: { merchant: { entity: 'default' }, token: 'https://elsewhere.example/tokens/AAAAAAAAAAAAAAAAAAAAAAAA' },
      headers: CARD_BIN_HEADERS,
    });
    expect((await response.json<Json>()).validationErrors).toEqual([
      expect.objectContaining({ errorName: 'fieldHasInvalidValue', jsonPath: '$.token' }),
    ]);
  });
});
