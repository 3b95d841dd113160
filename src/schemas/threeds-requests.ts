import * as v from 'valibot';
import {
  billingAddress,
  CARD_EXPIRY_DATE,
  CARD_HOLDER_NAME,
  cardNumberSchema,
  MERCHANT,
  MERCHANT_ENTITY,
  NO_CARD_NUMBER,
  NO_CARD_NUMBER_IN_URL,
  addressText,
  freeText,
  str,
} from './fields';
import { asJsonObject, integer, jsonObject, namedCheck, namedRequirement } from './field-errors';

/** Request schemas of the 3DS API (docs/threeds.md), with Worldpay's field rules. */

export const TRANSACTION_REFERENCE = v.pipe(
  str(1, 64, 'The transaction reference'),
  v.regex(/^[-A-Za-z0-9_!@#$%()*=.:;?[\]{}~`/+]*$/, 'The transaction reference has a character that is not allowed.'),
  // It names the transaction's object and KV keys: never a card number.
  NO_CARD_NUMBER,
);

function isIsoDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.getUTCMonth() === Number(m[2]) - 1 && date.getUTCDate() === Number(m[3]);
}
const DATE = v.pipe(v.string(), namedCheck('dateHasInvalidFormat', isIsoDate, 'Dates are YYYY-MM-DD.'));

/** A DNS host name (letters, digits, hyphens in dot-separated labels) or an IPv4 address. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/;

/**
 * An absolute http(s) URL whose host holds only the characters a host name may hold. The
 * challenge page names the returnUrl's origin in its CSP `form-action`, so a host with `;`, `,`
 * or `'` (which the URL parser lets through) or an IPv6 literal (which CSP cannot express) is
 * refused here. International names arrive punycoded from the parser and pass.
 */
function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && HOST_NAME.test(url.hostname);
  } catch {
    return false;
  }
}

export const CARD_FRONT = v.object({
  type: v.literal('card/front'),
  cardNumber: cardNumberSchema(10),
  cardExpiryDate: CARD_EXPIRY_DATE,
  cardHolderName: v.optional(CARD_HOLDER_NAME),
  billingAddress: v.optional(billingAddress(15)),
});

export const CARD_TOKENIZED = v.object({
  type: v.literal('card/tokenized'),
  href: v.pipe(v.string(), v.minLength(1, 'The token href must not be empty.')),
});

/**
 * The v1 and v2 instruments. Worldpay's v3 document adds `card/networkToken` (taken from v3
 * clients: threeds-requests-v3.ts) and `card/wallet+googlepay`, which v1 does not have: they
 * answer fieldHasInvalidValue at `type`.
 */
export const PAYMENT_INSTRUMENT = asJsonObject(v.variant('type', [CARD_FRONT, CARD_TOKENIZED]));
export type PaymentInstrument = v.InferOutput<typeof PAYMENT_INSTRUMENT>;

export const DEVICE_DATA_INITIALIZE = jsonObject({
  transactionReference: TRANSACTION_REFERENCE,
  merchant: MERCHANT,
  paymentInstrument: v.optional(PAYMENT_INSTRUMENT),
});

const EMAIL = v.pipe(
  str(3, 128, 'The email address'),
  v.regex(/^.+@.+$/, 'An email address has an @ between two parts.'),
  NO_CARD_NUMBER,
);
const PHONE_NUMBER = v.pipe(
  str(4, 20, 'The phone number'),
  v.regex(/^[0-9]*$/, 'Phone numbers are digits only.'),
  NO_CARD_NUMBER,
);
const CURRENCY = v.pipe(
  str(3, 3, 'The currency'),
  v.regex(/^[A-Z]{3}$/, 'Currencies are three capital letters (ISO 4217).'),
);

/** `riskData` exactly as Worldpay's document has it: names, places, enums and bounds. */
const RISK_DATA = jsonObject({
  account: v.optional(
    jsonObject({
      previousSuspiciousActivity: v.optional(v.boolean()),
      type: v.optional(
        v.picklist([
          'guestUser',
          'registeredUser',
          'federatedAccount',
          'issuerCredentials',
          'thirdPartyAuthentication',
          'fidoAuthenticator',
        ]),
      ),
      email: v.optional(EMAIL),
      history: v.optional(
        jsonObject({
          createdAt: v.optional(DATE),
          modifiedAt: v.optional(DATE),
          passwordModifiedAt: v.optional(DATE),
          paymentAccountEnrolledAt: v.optional(DATE),
        }),
      ),
    }),
  ),
  transaction: v.optional(
    jsonObject({
      reorder: v.optional(v.boolean()),
      preOrderDate: v.optional(DATE),
      firstName: v.optional(freeText(1, 22, 'The first name')),
      lastName: v.optional(freeText(1, 22, 'The last name')),
      phoneNumber: v.optional(PHONE_NUMBER),
      history: v.optional(
        jsonObject({
          attemptsLastDay: v.optional(integer(0, 999)),
          attemptsLastYear: v.optional(integer(0, 999)),
          completedLastSixMonths: v.optional(integer(0, 9999)),
          addCardsLastDay: v.optional(integer(0, 999)),
          shippingAddressFirstUsedAt: v.optional(DATE),
        }),
      ),
      giftCardsPurchase: v.optional(
        jsonObject({
          totalValue: v.optional(jsonObject({ amount: integer(0, 99_999_999_999), currency: CURRENCY })),
          quantity: v.optional(integer(0, 99)),
        }),
      ),
    }),
  ),
  shipping: v.optional(
    jsonObject({
      nameMatchesAccountName: v.optional(v.boolean()),
      method: v.optional(
        v.picklist([
          'billingAddress',
          'verifiedAddress',
          'otherAddress',
          'store',
          'digital',
          'unshippedTickets',
          'other',
        ]),
      ),
      timeFrame: v.optional(v.picklist(['electronic', 'twoDaysPlus', 'nextDay', 'sameDay'])),
      email: v.optional(EMAIL),
      address: v.optional(
        jsonObject({
          address1: addressText(1, 80, 'The first address line'),
          address2: v.optional(addressText(1, 80, 'The second address line')),
          address3: v.optional(addressText(1, 80, 'The third address line')),
          postalCode: addressText(1, 15, 'The postal code'),
          city: addressText(0, 15, 'The city'),
          countryCode: str(2, 2, 'The country code'),
          stateCode: str(1, 2, 'The state code'),
          phoneNumber: v.optional(PHONE_NUMBER),
        }),
      ),
    }),
  ),
});
export type RiskData = v.InferOutput<typeof RISK_DATA>;

export const WINDOW_SIZES = ['250x400', '390x400', '500x600', '600x400', 'fullPage'] as const;
export const CHALLENGE_PREFERENCES = [
  'noPreference',
  'noChallengeRequested',
  'challengeRequested',
  'challengeMandated',
  'noChallengeRequestedTRAPerformed',
] as const;

/** The exemptions `authenticate` takes (src/threeds/exemptions.ts says what each is in EMV). */
export const EXEMPTION_TYPES = [
  'lowValue',
  'TRA',
  'trustedBeneficiary',
  'secureCorporate',
  'scaDelegation',
  'dataOnly',
] as const;

/** The browser's device data (the default channel): what the AReq's browser fields are made of. */
const BROWSER_FIELDS = {
  acceptHeader: freeText(1, 2048, 'The Accept header'),
  userAgentHeader: freeText(1, 2048, 'The User-Agent header'),
  // Empty is allowed: a checkout whose device data collection did not run sends "".
  collectionReference: v.optional(freeText(0, 200, 'The collection reference')),
  browserLanguage: v.optional(str(1, 8, 'The browser language')),
  ipAddress: v.optional(freeText(1, 45, 'The IP address')),
  browserColorDepth: v.optional(v.picklist(['1', '4', '8', '15', '16', '24', '32', '48'])),
  browserScreenHeight: v.optional(integer(0, 999_999)),
  browserScreenWidth: v.optional(integer(0, 999_999)),
  timeZone: v.optional(
    v.pipe(v.string(), v.regex(/^[+-]?\d{1,4}$/, 'The time zone is the offset from UTC in minutes.')),
  ),
  browserJavaEnabled: v.optional(v.boolean()),
  browserJavascriptEnabled: v.optional(v.boolean()),
};

const UUID = (what: string) =>
  v.pipe(
    v.string(),
    v.regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, `${what} is a UUID.`),
  );
const COORDINATE = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{43}$/, 'A P-256 coordinate is 32 bytes in base64url (43 characters).'),
);

/** What an app's EMV 3DS SDK gives for authenticate (CONTRACT.md §12): EMV's `sdk*` fields. */
export const SDK_UI_TYPES = ['text', 'singleSelect', 'multiSelect', 'oob', 'html'] as const;
export const SDK_INTERFACES = ['native', 'html', 'both'] as const;
const SDK_FIELDS = jsonObject({
  appId: UUID('The SDK app id'),
  encData: v.pipe(
    str(1, 64_000, 'The SDK encrypted data'),
    v.regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]*){4}$/, 'The SDK encrypted data is a compact JWE.'),
  ),
  ephemeralPublicKey: jsonObject({
    kty: v.literal('EC', 'The key type is EC.'),
    crv: v.literal('P-256', 'The curve is P-256.'),
    x: COORDINATE,
    y: COORDINATE,
  }),
  maxTimeout: integer(5, 99),
  referenceNumber: v.pipe(
    str(1, 32, 'The SDK reference number'),
    v.regex(/^[\x20-\x7e]*$/, 'The SDK reference number is printable ASCII.'),
    // Kept with an app challenge in test (its key derivation's PartyVInfo): never a card number.
    NO_CARD_NUMBER,
  ),
  transactionId: UUID('The SDK transaction id'),
  interface: v.picklist(SDK_INTERFACES, 'The SDK interface is native, html or both.'),
  uiTypes: v.pipe(
    v.array(v.picklist(SDK_UI_TYPES, 'A UI type is text, singleSelect, multiSelect, oob or html.')),
    v.nonEmpty('Give at least one UI type.'),
    v.check((types) => new Set(types).size === types.length, 'Each UI type at most once.'),
  ),
  appUrl: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(256, 'The app URL must be at most 256 characters.'),
      namedCheck('fieldHasInvalidValue', isHttpsUrl, 'The app URL must be an absolute https URL.'),
      NO_CARD_NUMBER_IN_URL,
    ),
  ),
  // EMV 2.3.1's Default-SDK type: the SDK's variant (01 native; 80–99 a Directory Server's) and
  // whether a wrapper embeds it. A Split-SDK is not taken.
  variant: v.optional(
    v.pipe(v.string(), v.regex(/^(01|[89]\d)$/, "The SDK variant is 01 (native) or a Directory Server's 80 to 99.")),
  ),
  wrapped: v.optional(v.boolean()),
});

/** What the rule across the SDK's fields reads. */
type SdkUiShape = v.InferOutput<typeof SDK_FIELDS>;

/**
 * The SDK's fields, and EMV's rule across two of them: the HTML UI type (`sdkUiType` 05) is an
 * HTML interface's (`sdkInterface` 02 or 03); a native-only SDK offering it makes an AReq the
 * Directory Server refuses, which would cost the transaction its one AReq.
 */
const SDK = v.pipe(
  SDK_FIELDS,
  v.forward<SdkUiShape, v.PartialCheckIssue<SdkUiShape>, ['uiTypes']>(
    v.partialCheck(
      [['interface'], ['uiTypes']],
      namedRequirement(
        'fieldHasInvalidValue',
        (input: SdkUiShape) => input.interface !== 'native' || !input.uiTypes.includes('html'),
      ),
      'The html UI type needs the html or both interface.',
    ),
    ['uiTypes'],
  ),
);
export type SdkData = v.InferOutput<typeof SDK>;

function isHttpsUrl(value: string): boolean {
  return isHttpUrl(value) && value.startsWith('https:');
}

/**
 * authenticate's device data: the browser's (`channel` absent or `browser`), or an app's through
 * its EMV 3DS SDK (`channel: "app"`, `sdk` required, the browser's fields optional and unused).
 */
const DEVICE_DATA = asJsonObject(
  v.variant(
    'channel',
    [
      v.object({
        channel: v.optional(v.literal('browser')),
        ...BROWSER_FIELDS,
        // An SDK's data without `channel: "app"` is a mistake, not a browser's request.
        sdk: v.optional(v.never('SDK data is for deviceData.channel "app".')),
      }),
      v.object({
        channel: v.literal('app'),
        sdk: SDK,
        ...Object.fromEntries(Object.entries(BROWSER_FIELDS).map(([k, s]) => [k, v.optional(s)])),
      } as { channel: v.LiteralSchema<'app', undefined>; sdk: typeof SDK } & {
        [K in keyof typeof BROWSER_FIELDS]: v.OptionalSchema<(typeof BROWSER_FIELDS)[K], undefined>;
      }),
    ],
    'The channel is browser or app.',
  ),
);

/** authenticate's merchant: the entity, and the name and acquirer Worldpay lets a merchant pass on. */
const AUTHENTICATE_MERCHANT = jsonObject({
  entity: MERCHANT_ENTITY,
  overrideName: v.optional(
    v.pipe(
      str(1, 25, 'The merchant name'),
      v.regex(/^[^><&'"]*$/, 'The merchant name may not contain < > & \' or ".'),
      NO_CARD_NUMBER,
    ),
  ),
  acquirerId: v.optional(
    v.pipe(str(1, 20, 'The acquirer id'), v.regex(/^[0-9]*$/, 'Acquirer ids are digits only.'), NO_CARD_NUMBER),
  ),
});

export const AUTHENTICATE = jsonObject({
  transactionReference: TRANSACTION_REFERENCE,
  merchant: AUTHENTICATE_MERCHANT,
  instruction: jsonObject({
    value: jsonObject({
      amount: integer(0, 99_999_999_999),
      currency: CURRENCY,
    }),
    paymentInstrument: PAYMENT_INSTRUMENT,
  }),
  deviceData: DEVICE_DATA,
  challenge: jsonObject({
    // Required for the browser channel (src/threeds/app-channel-rules.ts), unused for an app.
    returnUrl: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(2048, 'The return URL must be at most 2048 characters.'),
        namedCheck(
          'fieldHasInvalidValue',
          isHttpUrl,
          'The return URL must be an absolute http or https URL whose host is a host name or an IPv4 address.',
        ),
        NO_CARD_NUMBER_IN_URL,
      ),
    ),
    windowSize: v.optional(v.picklist(WINDOW_SIZES), '390x400'),
    preference: v.optional(v.picklist(CHALLENGE_PREFERENCES), 'noPreference'),
  }),
  riskData: v.optional(RISK_DATA),
  // Extensions of Worldpay's API (docs/compatibility.md): a series set up on this payment
  // (docs/threeds.md "Series and 3RI"); the exemption asked for, and its explicit result;
  // decoupled authentication allowed, for up to maxMinutes (docs/threeds.md "Decoupled").
  recurring: v.optional(
    jsonObject({
      type: v.picklist(['recurring', 'instalment'], 'The series type is recurring or instalment.'),
      expiry: DATE,
      frequencyDays: integer(1, 9999),
      instalments: v.optional(integer(2, 999)),
    }),
  ),
  exemption: v.optional(
    jsonObject({
      type: v.picklist(
        EXEMPTION_TYPES,
        'The exemption is lowValue, TRA, trustedBeneficiary, secureCorporate, scaDelegation or dataOnly.',
      ),
    }),
  ),
  decoupled: v.optional(jsonObject({ maxMinutes: integer(1, 10_080) })),
});

/**
 * authenticate's rule across its fields (CONTRACT.md §12): a browser's request names where its
 * challenge returns; an app's needs no return URL. A schema error (`fieldIsMissing` at
 * `$.challenge.returnUrl`), so it comes before the business rules; the validation aborts a pipe at
 * its first error, so it is reported once the fields are otherwise valid.
 */
export function withReturnUrlRule<S extends v.GenericSchema<unknown, ReturnUrlShape>>(
  schema: S,
): v.GenericSchema<unknown, v.InferOutput<S>> {
  const rule = v.forward<ReturnUrlShape, v.PartialCheckIssue<ReturnUrlShape>, ['challenge', 'returnUrl']>(
    v.partialCheck(
      [
        ['deviceData', 'channel'],
        ['challenge', 'returnUrl'],
      ],
      namedRequirement(
        'fieldIsMissing',
        (input: ReturnUrlShape) => input.deviceData.channel === 'app' || input.challenge.returnUrl !== undefined,
      ),
      'This field is required.',
    ),
    ['challenge', 'returnUrl'],
  );
  return v.pipe(schema, rule);
}

/** What the rule reads. */
interface ReturnUrlShape extends Record<string, unknown> {
  deviceData: { channel?: string };
  challenge: { returnUrl?: string };
}

/** The 3RI reasons `merchantInitiated` takes (src/threeds/series-rules.ts maps them to EMV's threeRIInd). */
export const THREE_RI_TYPE_VALUES = [
  'recurring',
  'instalment',
  'addCard',
  'maintainCard',
  'accountVerification',
  'splitShipment',
  'topUp',
  'mailOrder',
  'telephoneOrder',
  'trustListStatusCheck',
  'otherPayment',
] as const;

/** `merchantInitiated` (docs/threeds.md "Series and 3RI"): a 3RI authentication of a series' card. */
export const MERCHANT_INITIATED = jsonObject({
  transactionReference: TRANSACTION_REFERENCE,
  merchant: MERCHANT,
  priorTransactionReference: TRANSACTION_REFERENCE,
  type: v.picklist(THREE_RI_TYPE_VALUES, 'The type is one of the 3RI reasons (docs/threeds.md "Series and 3RI").'),
  instruction: jsonObject({
    value: jsonObject({ amount: integer(0, 99_999_999_999), currency: CURRENCY }),
    paymentInstrument: PAYMENT_INSTRUMENT,
  }),
});
export type MerchantInitiatedRequest = v.InferOutput<typeof MERCHANT_INITIATED>;

export const VERIFICATION = jsonObject({
  transactionReference: TRANSACTION_REFERENCE,
  merchant: MERCHANT,
  challenge: jsonObject({
    reference: v.pipe(
      str(20, 20, 'The challenge reference'),
      v.regex(/^[A-Za-z0-9]*$/, 'Challenge references are letters and digits.'),
    ),
  }),
});
export type VerificationRequest = v.InferOutput<typeof VERIFICATION>;

/** The sandbox control that completes a pending challenge (`test` only; src/threeds/steps/complete-challenge.ts). */
export const COMPLETE_CHALLENGE = jsonObject({
  transactionReference: TRANSACTION_REFERENCE,
  merchant: MERCHANT,
  challenge: VERIFICATION.pipe[1].entries.challenge,
  result: v.picklist(
    ['passed', 'failed', 'cancelled', 'timedOut'],
    'The result is passed, failed, cancelled or timedOut.',
  ),
});
export type CompleteChallengeRequest = v.InferOutput<typeof COMPLETE_CHALLENGE>;

/**
 * GET of a transaction (docs/threeds.md "Retrieve a transaction"): the reference from the path
 * (percent-decoded) and the entity from the query, with the rules they have in the steps' bodies.
 */
export const TRANSACTION_QUERY = v.object({
  transactionReference: TRANSACTION_REFERENCE,
  entity: MERCHANT_ENTITY,
});
