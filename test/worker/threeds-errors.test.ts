import { describe, it } from 'vitest';
import { basic, call, expectErrorCase, type ErrorCase } from './helpers';
import {
  AMEX_PAN,
  authenticateBody,
  cardFront,
  newReference,
  threeDs,
  THREEDS,
  THREEDS_HEADERS,
  THREEDS_MEDIA,
} from './threeds-helpers';

const init = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  transactionReference: newReference(),
  merchant: { entity: 'default' },
  ...extra,
});
const verification = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  transactionReference: newReference(),
  merchant: { entity: 'default' },
  challenge: { reference: 'A'.repeat(20) },
  ...extra,
});
/** authenticateBody with one path replaced (dot-separated), or deleted when value is undefined. */
function authWith(path: string, value: unknown): Record<string, unknown> {
  const body = authenticateBody() as Record<string, any>;
  const keys = path.split('.');
  const last = keys.pop()!;
  const parent = keys.reduce((o, k) => o[k], body);
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return body;
}
const schema = (
  name: string,
  body: Record<string, unknown>,
  fields: [string, string][],
  step = 'authenticate',
): ErrorCase => ({ name, send: () => threeDs(step, body), status: 400, errorName: 'bodyDoesNotMatchSchema', fields });

const CASES: ErrorCase[] = [
  // Headers and auth, on each step
  ...['deviceDataInitialize', 'authenticate', 'verification'].flatMap((step): ErrorCase[] => [
    {
      name: `${step} without Authorization`,
      send: () => threeDs(step, init(), { Authorization: undefined }),
      status: 401,
      errorName: 'headerIsMissing',
      headerName: 'Authorization',
    },
    {
      name: `${step} with a wrong password`,
      send: () => threeDs(step, init(), { Authorization: basic('test-merchant', 'x') }),
      status: 401,
      errorName: 'accessDenied',
    },
    {
      name: `${step} without Accept`,
      send: () => threeDs(step, init(), { Accept: undefined }),
      status: 400,
      errorName: 'headerIsMissing',
      headerName: 'Accept',
    },
    {
      name: `${step} with Accept application/json`,
      send: () => threeDs(step, init(), { Accept: 'application/json' }),
      status: 406,
      errorName: 'headerHasInvalidValue',
      headerName: 'Accept',
    },
    {
      name: `${step} without Content-Type`,
      send: () => threeDs(step, init(), { 'Content-Type': undefined }),
      status: 400,
      errorName: 'headerIsMissing',
      headerName: 'Content-Type',
    },
    {
      name: `${step} with Content-Type application/json`,
      send: () => threeDs(step, init(), { 'Content-Type': 'application/json' }),
      status: 415,
      errorName: 'headerHasInvalidValue',
      headerName: 'Content-Type',
    },
    {
      name: `${step} with an empty body`,
      send: () => call(`${THREEDS}/${step}`, { headers: THREEDS_HEADERS, rawBody: new Uint8Array(0) }),
      status: 400,
      errorName: 'bodyIsEmpty',
    },
    {
      name: `${step} with a body that is not JSON`,
      send: () => call(`${THREEDS}/${step}`, { headers: THREEDS_HEADERS, rawBody: 'nope' }),
      status: 400,
      errorName: 'bodyIsNotJson',
    },
    {
      name: `${step} for an unknown entity`,
      send: () =>
        threeDs(
          step,
          step === 'authenticate'
            ? authenticateBody({ entity: 'nobody' })
            : step === 'verification'
              ? verification({ merchant: { entity: 'nobody' } })
              : init({ merchant: { entity: 'nobody' } }),
        ),
      status: 400,
      errorName: 'entityIsNotConfigured',
    },
    {
      name: `${step} for the nothreeds entity`,
      send: () =>
        threeDs(
          step,
          step === 'authenticate'
            ? authenticateBody({ entity: 'nothreeds' })
            : step === 'verification'
              ? verification({ merchant: { entity: 'nothreeds' } })
              : init({ merchant: { entity: 'nothreeds' } }),
        ),
      status: 400,
      errorName: 'merchantIsNotConfigured',
    },
  ]),
  // deviceDataInitialize schema
  schema(
    'an empty deviceDataInitialize body',
    {},
    [
      ['fieldIsMissing', '$.transactionReference'],
      ['fieldIsMissing', '$.merchant'],
    ],
    'deviceDataInitialize',
  ),
  schema(
    'a transaction reference with a space',
    init({ transactionReference: 'a b' }),
    [['stringFailedRegexCheck', '$.transactionReference']],
    'deviceDataInitialize',
  ),
  schema(
    'a transaction reference of 65 characters',
    init({ transactionReference: 'a'.repeat(65) }),
    [['stringIsTooLong', '$.transactionReference']],
    'deviceDataInitialize',
  ),
  schema(
    'an instrument of unknown type',
    init({ paymentInstrument: { type: 'card/back' } }),
    [['fieldHasInvalidValue', '$.paymentInstrument.type']],
    'deviceDataInitialize',
  ),
  schema(
    'a card failing Luhn',
    init({ paymentInstrument: { ...cardFront(), cardNumber: '4444333322221112' } }),
    [['panFailedLuhnCheck', '$.paymentInstrument.cardNumber']],
    'deviceDataInitialize',
  ),
  schema(
    'a card of 9 digits',
    init({ paymentInstrument: { ...cardFront(), cardNumber: '444433332' } }),
    [['stringIsTooShort', '$.paymentInstrument.cardNumber']],
    'deviceDataInitialize',
  ),
  schema(
    'an expiry month of 13',
    init({ paymentInstrument: { ...cardFront(), cardExpiryDate: { month: 13, year: 2030 } } }),
    [['integerIsTooLarge', '$.paymentInstrument.cardExpiryDate.month']],
    'deviceDataInitialize',
  ),
  schema(
    'an expiry month of 1.5',
    init({ paymentInstrument: { ...cardFront(), cardExpiryDate: { month: 1.5, year: 2030 } } }),
    [['fieldMustBeInteger', '$.paymentInstrument.cardExpiryDate.month']],
    'deviceDataInitialize',
  ),
  schema(
    'an expiry year as a string',
    init({ paymentInstrument: { ...cardFront(), cardExpiryDate: { month: 1, year: '2030' } } }),
    [['fieldMustBeInteger', '$.paymentInstrument.cardExpiryDate.year']],
    'deviceDataInitialize',
  ),
  schema(
    'a token href of another service',
    init({ paymentInstrument: { type: 'card/tokenized', href: 'https://else.example/tokens/x' } }),
    [['fieldHasInvalidValue', '$.paymentInstrument.href']],
    'deviceDataInitialize',
  ),
  // authenticate schema
  schema('an empty authenticate body', {}, [
    ['fieldIsMissing', '$.transactionReference'],
    ['fieldIsMissing', '$.merchant'],
    ['fieldIsMissing', '$.instruction'],
    ['fieldIsMissing', '$.deviceData'],
    ['fieldIsMissing', '$.challenge'],
  ]),
  schema('a negative amount', authWith('instruction.value.amount', -1), [
    ['integerIsTooSmall', '$.instruction.value.amount'],
  ]),
  schema('an amount over 99999999999', authWith('instruction.value.amount', 100_000_000_000), [
    ['integerIsTooLarge', '$.instruction.value.amount'],
  ]),
  schema('a fractional amount', authWith('instruction.value.amount', 10.5), [
    ['fieldMustBeInteger', '$.instruction.value.amount'],
  ]),
  schema('an amount as a string', authWith('instruction.value.amount', '100'), [
    ['fieldMustBeInteger', '$.instruction.value.amount'],
  ]),
  schema(
    'a returnUrl over 2048 characters',
    authWith('challenge.returnUrl', `https://shop.example/${'r'.repeat(2048)}`),
    [['stringIsTooLong', '$.challenge.returnUrl']],
  ),
  schema('a returnUrl with an IPv6 literal host', authWith('challenge.returnUrl', 'http://[::1]:8080/return'), [
    ['fieldHasInvalidValue', '$.challenge.returnUrl'],
  ]),
  schema('a lower-case currency', authWith('instruction.value.currency', 'gbp'), [
    ['stringFailedRegexCheck', '$.instruction.value.currency'],
  ]),
  schema('no payment instrument', authWith('instruction.paymentInstrument', undefined), [
    ['fieldIsMissing', '$.instruction.paymentInstrument'],
  ]),
  schema('an empty acceptHeader', authWith('deviceData.acceptHeader', ''), [
    ['fieldIsEmpty', '$.deviceData.acceptHeader'],
  ]),
  schema('a userAgentHeader over 2048', authWith('deviceData.userAgentHeader', 'x'.repeat(2049)), [
    ['stringIsTooLong', '$.deviceData.userAgentHeader'],
  ]),
  schema('a browserLanguage over 8', authWith('deviceData.browserLanguage', 'en-GB-oxford'), [
    ['stringIsTooLong', '$.deviceData.browserLanguage'],
  ]),
  schema('browserJavaEnabled as a string', authWith('deviceData.browserJavaEnabled', 'yes'), [
    ['fieldMustBeBoolean', '$.deviceData.browserJavaEnabled'],
  ]),
  schema('a relative returnUrl', authWith('challenge.returnUrl', '/return'), [
    ['fieldHasInvalidValue', '$.challenge.returnUrl'],
  ]),
  schema('an unknown windowSize', authWith('challenge.windowSize', '100x100'), [
    ['fieldHasInvalidValue', '$.challenge.windowSize'],
  ]),
  schema('an unknown preference', authWith('challenge.preference', 'always'), [
    ['fieldHasInvalidValue', '$.challenge.preference'],
  ]),
  schema(
    'a risk date in the wrong format',
    authWith('riskData', { account: { history: { createdAt: '01/02/2020' } } }),
    [['dateHasInvalidFormat', '$.riskData.account.history.createdAt']],
  ),
  schema('riskData as an array', authWith('riskData', []), [['fieldMustBeObject', '$.riskData']]),
  schema('challenge null', authWith('challenge', null), [['fieldIsNull', '$.challenge']]),
  // verification schema
  schema(
    'an empty verification body',
    {},
    [
      ['fieldIsMissing', '$.transactionReference'],
      ['fieldIsMissing', '$.merchant'],
      ['fieldIsMissing', '$.challenge'],
    ],
    'verification',
  ),
  schema(
    'a challenge reference with a dash',
    verification({ challenge: { reference: 'ab-cd'.padEnd(20, 'x') } }),
    [['stringFailedRegexCheck', '$.challenge.reference']],
    'verification',
  ),
  // business rules
  {
    name: 'an Amex card in USD on the limited entity (brand is checked before currency)',
    send: () => threeDs('authenticate', authenticateBody({ entity: 'limited', currency: 'USD', cardNumber: AMEX_PAN })),
    status: 400,
    errorName: 'paymentInstrumentIsNotSupported',
  },
  {
    name: 'a currency the limited entity does not allow',
    send: () => threeDs('authenticate', authenticateBody({ entity: 'limited', currency: 'USD' })),
    status: 400,
    errorName: 'currencyIsNotSupported',
  },
  {
    name: 'an Amex card on the limited entity (authenticate)',
    send: () => threeDs('authenticate', authenticateBody({ entity: 'limited', cardNumber: AMEX_PAN })),
    status: 400,
    errorName: 'paymentInstrumentIsNotSupported',
  },
  {
    name: 'an Amex card on the limited entity (deviceDataInitialize)',
    send: () =>
      threeDs(
        'deviceDataInitialize',
        init({ merchant: { entity: 'limited' }, paymentInstrument: cardFront(undefined, AMEX_PAN) }),
      ),
    status: 400,
    errorName: 'paymentInstrumentIsNotSupported',
  },
  {
    name: "another merchant's entity",
    send: () => threeDs('authenticate', authenticateBody({ entity: 'other' })),
    status: 400,
    errorName: 'entityIsNotConfigured',
  },
  {
    name: 'a verification of an unknown transaction',
    send: () => threeDs('verification', verification()),
    status: 404,
    errorName: 'challengeNotFound',
  },
  {
    name: 'a token that was never issued',
    send: () =>
      threeDs(
        'deviceDataInitialize',
        init({ paymentInstrument: { type: 'card/tokenized', href: 'https://edge.test/tokens/abc' } }),
      ),
    status: 404,
    errorName: 'tokenNotFound',
  },
  {
    name: 'GET on authenticate',
    send: () => call(`${THREEDS}/authenticate`, { method: 'GET', headers: THREEDS_HEADERS }),
    status: 405,
    errorName: 'methodNotAllowed',
  },
];

describe('3DS errors', () => {
  it.each(CASES)('answers $name with $status $errorName', (c) => expectErrorCase(c, THREEDS_MEDIA));
});
