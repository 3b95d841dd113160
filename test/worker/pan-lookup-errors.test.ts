import { describe, expect, it } from 'vitest';
import { basic, call, CARD_BIN_HEADERS, expectErrorCase, luhnComplete, panLookup, type ErrorCase } from './helpers';

const VISA = '4444333322221111';
const PATH = '/api/cardBin/panLookup';
const ok = { merchant: { entity: 'default' }, cardNumber: VISA };

const CASES: ErrorCase[] = [
  // Routing
  {
    name: 'an unknown path',
    send: () => call('/api/cardBin/nope', { body: ok, headers: CARD_BIN_HEADERS }),
    status: 404,
    errorName: 'resourceNotFound',
  },
  {
    name: 'GET on the lookup path',
    send: () => call(PATH, { method: 'GET', headers: CARD_BIN_HEADERS }),
    status: 405,
    errorName: 'methodNotAllowed',
  },
  // Authentication
  {
    name: 'no Authorization header',
    send: () => panLookup(ok, { Authorization: undefined }),
    status: 401,
    errorName: 'headerIsMissing',
    headerName: 'Authorization',
  },
  {
    name: 'a Bearer Authorization',
    send: () => panLookup(ok, { Authorization: 'Bearer abc' }),
    status: 401,
    errorName: 'headerHasInvalidValue',
    headerName: 'Authorization',
  },
  {
    name: 'Basic with bad base64',
    send: () => panLookup(ok, { Authorization: 'Basic %%%' }),
    status: 401,
    errorName: 'headerHasInvalidValue',
    headerName: 'Authorization',
  },
  {
    name: 'Basic without a colon',
    send: () => panLookup(ok, { Authorization: `Basic ${btoa('test-merchant')}` }),
    status: 401,
    errorName: 'headerHasInvalidValue',
    headerName: 'Authorization',
  },
  {
    name: 'a wrong password',
    send: () => panLookup(ok, { Authorization: basic('test-merchant', 'nope') }),
    status: 401,
    errorName: 'accessDenied',
  },
  {
    name: 'an unknown user',
    send: () => panLookup(ok, { Authorization: basic('nobody', 'test-password') }),
    status: 401,
    errorName: 'accessDenied',
  },
  // Headers
  {
    name: 'no Content-Type',
    send: () => panLookup(ok, { 'Content-Type': undefined }),
    status: 400,
    errorName: 'headerIsMissing',
    headerName: 'Content-Type',
  },
  {
    name: 'Content-Type text/plain',
    send: () => panLookup(ok, { 'Content-Type': 'text/plain' }),
    status: 415,
    errorName: 'headerHasInvalidValue',
    headerName: 'Content-Type',
  },
  {
    name: 'no WP-Api-Version',
    send: () => panLookup(ok, { 'WP-Api-Version': undefined }),
    status: 400,
    errorName: 'headerIsMissing',
    headerName: 'WP-Api-Version',
  },
  {
    name: 'WP-Api-Version 2',
    send: () => panLookup(ok, { 'WP-Api-Version': '2' }),
    status: 400,
    errorName: 'headerHasInvalidValue',
    headerName: 'WP-Api-Version',
  },
  {
    name: 'Accept text/html',
    send: () => panLookup(ok, { Accept: 'text/html' }),
    status: 406,
    errorName: 'headerHasInvalidValue',
    headerName: 'Accept',
  },
  {
    name: 'Accept application/json;q=0',
    send: () => panLookup(ok, { Accept: 'application/json;q=0' }),
    status: 406,
    errorName: 'headerHasInvalidValue',
    headerName: 'Accept',
  },
  // Body
  {
    name: 'a body over 64 KiB',
    send: () => panLookup({ ...ok, padding: 'x'.repeat(65 * 1024) }),
    status: 413,
    errorName: 'bodyIsTooLarge',
  },
  {
    name: 'an empty body',
    send: () => call(PATH, { headers: CARD_BIN_HEADERS, rawBody: new Uint8Array(0) }),
    status: 400,
    errorName: 'bodyIsEmpty',
  },
  {
    name: 'a whitespace body',
    send: () => call(PATH, { headers: CARD_BIN_HEADERS, rawBody: new TextEncoder().encode(' \n ') }),
    status: 400,
    errorName: 'bodyIsEmpty',
  },
  {
    name: 'a body that is not JSON',
    send: () => call(PATH, { headers: CARD_BIN_HEADERS, rawBody: '{"merchant":' }),
    status: 400,
    errorName: 'bodyIsNotJson',
  },
  {
    name: 'a JSON array body',
    send: () => call(PATH, { headers: CARD_BIN_HEADERS, rawBody: '[1,2]' }),
    status: 400,
    errorName: 'bodyIsNotJson',
  },
  {
    name: 'a JSON null body',
    send: () => call(PATH, { headers: CARD_BIN_HEADERS, rawBody: 'null' }),
    status: 400,
    errorName: 'bodyIsNotJson',
  },
  {
    name: 'a body that is not UTF-8',
    send: () => call(PATH, { headers: CARD_BIN_HEADERS, rawBody: new Uint8Array([0x7b, 0xff, 0x7d]) }),
    status: 400,
    errorName: 'bodyIsNotJson',
  },
  // Schema
  {
    name: 'an empty object',
    send: () => panLookup({}),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [
      ['fieldIsMissing', '$.merchant'],
      ['fieldIsMissing', '$.cardNumber'],
    ],
  },
  {
    name: 'merchant as a string',
    send: () => panLookup({ merchant: 'default', cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldMustBeObject', '$.merchant']],
  },
  {
    name: 'merchant as an array',
    send: () => panLookup({ merchant: [], cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldMustBeObject', '$.merchant']],
  },
  {
    name: 'merchant null',
    send: () => panLookup({ merchant: null, cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldIsNull', '$.merchant']],
  },
  {
    name: 'no entity',
    send: () => panLookup({ merchant: {}, cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldIsMissing', '$.merchant.entity']],
  },
  {
    name: 'an empty entity',
    send: () => panLookup({ merchant: { entity: '' }, cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldIsEmpty', '$.merchant.entity']],
  },
  {
    name: 'a numeric entity',
    send: () => panLookup({ merchant: { entity: 7 }, cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldMustBeString', '$.merchant.entity']],
  },
  {
    name: 'an entity of 65 characters',
    send: () => panLookup({ merchant: { entity: 'a'.repeat(65) }, cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['stringIsTooLong', '$.merchant.entity']],
  },
  {
    name: 'an entity with a space',
    send: () => panLookup({ merchant: { entity: 'de fault' }, cardNumber: VISA }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['stringFailedRegexCheck', '$.merchant.entity']],
  },
  {
    name: 'a numeric card number',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: 4444333322221111 }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldMustBeString', '$.cardNumber']],
  },
  {
    name: 'a null card number',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: null }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldIsNull', '$.cardNumber']],
  },
  {
    name: 'an empty card number',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: '' }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldIsEmpty', '$.cardNumber']],
  },
  {
    name: 'a card number with spaces',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: '4444 3333 2222 1111' }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['stringFailedRegexCheck', '$.cardNumber']],
  },
  {
    name: 'a card number of 11 digits',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: luhnComplete('4444', 11) }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['stringIsTooShort', '$.cardNumber']],
  },
  {
    name: 'a card number of 20 digits',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: luhnComplete('4444', 20) }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['stringIsTooLong', '$.cardNumber']],
  },
  {
    name: 'a card number failing Luhn',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: '4444333322221112' }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['panFailedLuhnCheck', '$.cardNumber']],
  },
  {
    name: 'both cardNumber and token',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: VISA, token: 'https://edge.test/tokens/abc' }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldIsNotAllowed', '$.token']],
  },
  {
    name: "a token that is not this service's href",
    send: () => panLookup({ merchant: { entity: 'default' }, token: 'https://elsewhere.example/tokens/abc' }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [['fieldHasInvalidValue', '$.token']],
  },
  {
    name: 'several field errors at once',
    send: () => panLookup({ merchant: { entity: 'bad entity' }, cardNumber: '4444333322221112' }),
    status: 400,
    errorName: 'bodyDoesNotMatchSchema',
    fields: [
      ['stringFailedRegexCheck', '$.merchant.entity'],
      ['panFailedLuhnCheck', '$.cardNumber'],
    ],
  },
  // Business rules
  {
    name: 'an entity that is not configured',
    send: () => panLookup({ merchant: { entity: 'unknown' }, cardNumber: VISA }),
    status: 400,
    errorName: 'entityIsNotConfigured',
  },
  {
    name: "another merchant's entity",
    send: () => panLookup({ merchant: { entity: 'other' }, cardNumber: VISA }),
    status: 400,
    errorName: 'entityIsNotConfigured',
  },
  {
    name: 'a card number from a non-PCI entity',
    send: () => panLookup({ merchant: { entity: 'nonpci' }, cardNumber: VISA }),
    status: 400,
    errorName: 'merchantIsNotConfigured',
  },
  {
    name: 'an Amex card on the limited entity',
    send: () => panLookup({ merchant: { entity: 'limited' }, cardNumber: '378282246310005' }),
    status: 400,
    errorName: 'paymentInstrumentIsNotSupported',
  },
  // Domain
  {
    name: 'a card number no data or scheme covers',
    send: () => panLookup({ merchant: { entity: 'default' }, cardNumber: luhnComplete('0000', 16) }),
    status: 404,
    errorName: 'binNotFound',
  },
  {
    name: 'a well-formed token href that was never issued',
    send: () => panLookup({ merchant: { entity: 'default' }, token: 'https://edge.test/tokens/abc' }),
    status: 404,
    errorName: 'tokenNotFound',
  },
];

describe('POST /api/cardBin/panLookup errors', () => {
  it.each(CASES)('answers $name with $status $errorName', (c) => expectErrorCase(c, 'application/json'));

  it('lists the allowed methods on 405, in the body and in Allow', async () => {
    const response = await call(PATH, { method: 'PUT', headers: CARD_BIN_HEADERS, body: ok });
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('POST');
    expect(await response.json()).toMatchObject({ errorName: 'methodNotAllowed', allowedMethods: ['POST'] });
  });

  it('never echoes the card number in an error', async () => {
    const cardNumber = '4444333322221112';
    const response = await panLookup({ merchant: { entity: 'default' }, cardNumber });
    expect(await response.text()).not.toContain(cardNumber);
  });
});

describe('POST /api/cardBin/panLookup header tolerance', () => {
  it.each([
    ['Content-Type with a charset', { 'Content-Type': 'application/json; charset=utf-8' }],
    ['Content-Type in capitals', { 'Content-Type': 'APPLICATION/JSON' }],
    ['Accept */*', { Accept: '*/*' }],
    ['Accept application/*', { Accept: 'application/*' }],
    ['Accept listing json among others', { Accept: 'text/html, application/json;q=0.9' }],
  ])('accepts %s', async (_name, headers) => {
    const response = await panLookup(ok, headers);
    expect(response.status).toBe(200);
  });

  it('echoes a valid inbound WP-CorrelationId and replaces an invalid one', async () => {
    const id = crypto.randomUUID();
    expect((await panLookup(ok, { 'WP-CorrelationId': id })).headers.get('WP-CorrelationId')).toBe(id);
    const replaced = (await panLookup(ok, { 'WP-CorrelationId': 'not-a-uuid' })).headers.get('WP-CorrelationId');
    expect(replaced).not.toBe('not-a-uuid');
    expect(replaced).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
