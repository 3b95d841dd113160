import * as v from 'valibot';
import { EXEMPTION_TYPES } from '../../src/schemas/threeds-requests';
import {
  ANONYMOUS_PREPAID,
  BRANDS,
  CATEGORIES,
  FUNDING_TYPES,
  MULTIPLE_ACCOUNT_ACCESS,
  NUMBER_TYPES,
} from '../../src/bin/model';
import { UPDATE_PATHS } from '../../src/tokens/update-paths';

/**
 * The Worker's answers as valibot schemas, for the OpenAPI document only (the Worker builds its
 * answers in src/bin/card-bin-data.ts, src/threeds/outcomes.ts, src/tokens/token-resource.ts and
 * src/http/errors.ts). The integration tests check every answer against the document built from
 * these, so a drift between the two fails a test.
 */

const link = v.object({ href: v.pipe(v.string(), v.url()) });
const links = (...names: string[]) => v.object(Object.fromEntries(names.map((n) => [n, v.optional(link)])));

/** A token's links: itself, and each attribute a PUT updates. */
const TOKEN_LINKS = links('tokens:token', ...Object.keys(UPDATE_PATHS).map((attribute) => `tokens:${attribute}`));

export const FIELD_ERROR = v.object({
  errorName: v.string(),
  message: v.string(),
  jsonPath: v.pipe(v.string(), v.startsWith('$')),
});

export const ERROR_DOCUMENT = v.pipe(
  v.object({
    errorName: v.string(),
    message: v.string(),
    validationErrors: v.optional(v.array(FIELD_ERROR)),
    headerName: v.optional(v.string()),
    allowedMethods: v.optional(v.array(v.string())),
  }),
  v.description(
    'Every error of every endpoint. `errorName` is stable and meant for code; `message` is for people. ' +
      '`validationErrors` lists every field error of a 400 bodyDoesNotMatchSchema or urlContainsInvalidValue, in field order.',
  ),
);

export const CARD_BIN_DATA = v.object({
  type: v.picklist(NUMBER_TYPES),
  brand: v.optional(v.array(v.picklist(BRANDS))),
  bin: v.pipe(v.string(), v.regex(/^\d{1,8}$/)),
  binLength: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(8)),
  fundingType: v.optional(v.picklist(FUNDING_TYPES)),
  issuerName: v.optional(v.string()),
  countryCode: v.optional(v.pipe(v.string(), v.regex(/^([A-Z]{2}|unknown)$/))),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/))),
  dccAllowed: v.boolean(),
  anonymousPrepaid: v.optional(v.picklist(ANONYMOUS_PREPAID)),
  category: v.optional(v.picklist(CATEGORIES)),
  multipleAccountAccess: v.optional(v.picklist(MULTIPLE_ACCOUNT_ACCESS)),
});

export const PREFIX_BIN_DATA = v.pipe(
  v.partial(CARD_BIN_DATA, [
    'type',
    'brand',
    'fundingType',
    'issuerName',
    'countryCode',
    'currency',
    'dccAllowed',
    'anonymousPrepaid',
    'category',
    'multipleAccountAccess',
  ]),
  v.description(
    "panLookup's shape with only the fields every card under the prefix shares: a field the rows under the prefix disagree on is left out, `brand` lists the brands all of them share.",
  ),
);

const VERSION = v.pipe(v.string(), v.regex(/^\d+\.\d+\.\d+$/));
const AUTHENTICATION = v.object({
  version: VERSION,
  eci: v.optional(v.pipe(v.string(), v.regex(/^\d{2}$/))),
  authenticationValue: v.optional(v.string()),
  transactionId: v.optional(v.pipe(v.string(), v.uuid())),
  statusReason: v.optional(
    v.pipe(v.string(), v.regex(/^\d{2}$/), v.description("Live: the issuer's EMV transStatusReason, when given.")),
  ),
  cancellationIndicator: v.optional(
    v.pipe(v.string(), v.regex(/^\d{2}$/), v.description('Live: the EMV challengeCancel of a challenge, when given.')),
  ),
  exemption: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{2}$/),
      v.description('Live, EMV 2.3.1: the exemption the issuer acknowledged (transChallengeExemption).'),
    ),
  ),
});

export const DEVICE_DATA_INITIALIZE_ANSWER = v.object({
  outcome: v.literal('initialized'),
  transactionReference: v.string(),
  deviceDataCollection: v.object({
    jwt: v.string(),
    url: v.pipe(v.string(), v.url()),
    bin: v.optional(v.pipe(v.string(), v.regex(/^\d{6,8}$/))),
  }),
  _links: links('3ds:authenticate'),
});

/**
 * Every outcome of authenticate and verification; `challenged` only from authenticate,
 * `authenticationOutage` only from authenticate in version 3 of the API, `bypassed` from
 * verification only in versions 1 and 2, `decoupled` (an extension) from authenticate and from
 * verification until the issuer's result is known.
 */
export const THREEDS_ANSWER = v.object({
  outcome: v.picklist([
    'authenticated',
    'authenticationFailed',
    'unavailable',
    'bypassed',
    'notEnrolled',
    'signatureFailed',
    'challenged',
    'authenticationOutage',
    'decoupled',
  ]),
  transactionReference: v.string(),
  acsTransactionId: v.optional(v.pipe(v.string(), v.uuid())),
  status: v.optional(
    v.pipe(
      v.picklist(['Y', 'A', 'N', 'U', 'I', 'R']),
      v.description(
        'The EMV transaction status; I: an exemption granted (see `exemption`); R (rejected) in live only.',
      ),
    ),
  ),
  enrolled: v.optional(v.picklist(['Y', 'N', 'U', 'B'])),
  authentication: v.optional(AUTHENTICATION),
  challenge: v.optional(
    v.union([
      v.object({
        reference: v.pipe(v.string(), v.regex(/^[A-Za-z0-9]{20}$/)),
        url: v.pipe(v.string(), v.url()),
        jwt: v.string(),
        payload: v.string(),
      }),
      v.pipe(
        v.strictObject({
          reference: v.pipe(v.string(), v.regex(/^[A-Za-z0-9]{20}$/)),
          payload: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/)),
        }),
        v.description(
          'An app\'s challenge (extension, docs/threeds.md "The app channel"): `payload` is base64url of the JSON an EMV 3DS SDK\'s doChallenge takes ({threeDSServerTransID, acsTransID, acsRefNumber, acsSignedContent}, and threeDSRequestorAppURL when sent).',
        ),
      ),
      v.pipe(
        v.strictObject({ reference: v.pipe(v.string(), v.regex(/^[A-Za-z0-9]{20}$/)) }),
        v.description('`decoupled`: the reference verification takes; there is nothing to show.'),
      ),
    ]),
  ),
  decoupled: v.optional(
    v.pipe(
      v.object({ expiresAt: v.pipe(v.string(), v.isoTimestamp()) }),
      v.description(
        'An extension, with `outcome: "decoupled"` (docs/threeds.md "Decoupled"): the issuer authenticates the cardholder out of band until `expiresAt`; verification, GET and the event carry the result once it is known, `unavailable` if none came by then.',
      ),
    ),
  ),
  dataOnly: v.optional(
    v.pipe(v.literal(true), v.description('An extension: a data-only authentication (nothing was authenticated).')),
  ),
  statusReason: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d\d$/),
      v.description(
        'An extension, on a 3RI answered `unavailable` (docs/threeds.md "Series and 3RI"): the issuer\'s reason (EMV transStatusReason), e.g. 21 3RI not supported, 22 ACS technical issue.',
      ),
    ),
  ),
  exemption: v.optional(
    v.pipe(
      v.object({
        requested: v.picklist(EXEMPTION_TYPES),
        sent: v.object({
          threeDSRequestorChallengeInd: v.pipe(v.string(), v.regex(/^\d\d$/)),
          messageCategory: v.picklist(['01', '80']),
        }),
        applied: v.boolean(),
        downgraded: v.boolean(),
      }),
      v.description(
        'An extension (docs/threeds.md "Exemptions"): the exemption asked for, what the AReq said for it, whether the issuer granted it, and whether the version had no indicator for it (sent as 02).',
      ),
    ),
  ),
  _links: v.optional(links('3ds:authenticate', '3ds:verify')),
});

const ISO_SECONDS = v.pipe(v.string(), v.regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/));

/**
 * GET of a 3DS transaction (docs/threeds.md "Retrieve a transaction"): its state, and once
 * `completed` its final outcome as `verification` (challenged) or `authenticate` (frictionless)
 * answered it.
 */
export const THREEDS_TRANSACTION = v.object({
  transactionReference: v.string(),
  merchant: v.object({ entity: v.string() }),
  state: v.pipe(
    v.picklist(['initialized', 'challenged', 'decoupled', 'completed']),
    v.description(
      '`initialized`: deviceDataInitialize ran, authenticate has not; `challenged`: a challenge without a result yet; `decoupled`: a decoupled authentication whose issuer has not answered yet; `completed`: `result` holds the final outcome.',
    ),
  ),
  createdAt: ISO_SECONDS,
  updatedAt: ISO_SECONDS,
  result: v.optional(THREEDS_ANSWER),
  _links: links('3ds:transaction'),
});

const MASKED_CARD = v.object({
  type: v.literal('card/masked'),
  cardNumber: v.pipe(v.string(), v.regex(/^\d{6}\*+\d{4}$/)),
  cardExpiryDate: v.object({ month: v.number(), year: v.number() }),
  cardHolderName: v.optional(v.string()),
  bin: v.optional(v.string()),
  brand: v.optional(v.picklist(BRANDS)),
  fundingType: v.optional(v.picklist(['credit', 'debit', 'prepaid'])),
  countryCode: v.optional(v.string()),
  billingAddress: v.optional(
    v.object({
      address1: v.string(),
      address2: v.optional(v.string()),
      address3: v.optional(v.string()),
      postalCode: v.string(),
      city: v.string(),
      state: v.optional(v.string()),
      countryCode: v.string(),
    }),
  ),
});

export const TOKEN_RESOURCE = v.object({
  tokenPaymentInstrument: v.object({ type: v.literal('card/tokenized'), href: v.pipe(v.string(), v.url()) }),
  tokenId: v.pipe(v.string(), v.regex(/^[0-9A-HJ-NP-Z]{15,21}$/)),
  description: v.string(),
  tokenExpiryDateTime: v.string(),
  namespace: v.optional(v.string()),
  paymentInstrument: MASKED_CARD,
  schemeTransactionReference: v.optional(v.string()),
  _links: v.pipe(
    TOKEN_LINKS,
    v.description('The token, and the link of each attribute a PUT updates (follow them: their shape may change).'),
  ),
});

export const TOKEN_CONFLICT = v.object({
  ...TOKEN_RESOURCE.entries,
  conflicts: v.pipe(
    v.object({
      conflictsExpiryDateTime: v.pipe(
        v.string(),
        v.description('Until when the conflict can be read and accepted (30 minutes).'),
      ),
      paymentInstrument: v.optional(v.record(v.string(), v.unknown())),
      schemeTransactionReference: v.optional(v.string()),
    }),
    v.description('What the second tokenization sent that differs from the existing token.'),
  ),
  _links: v.pipe(
    v.object({ ...TOKEN_LINKS.entries, 'tokens:conflicts': link }),
    v.description("The token's links, and `tokens:conflicts`: GET reads the conflict, PUT accepts it."),
  ),
});

export const TOKEN_LIST = v.object({
  _embedded: v.object({ tokens: v.array(TOKEN_RESOURCE) }),
});

export const SANDBOX_CHALLENGE_ANSWER = v.object({
  outcome: v.literal('challengeCompleted'),
  transactionReference: v.string(),
  challenge: v.object({
    reference: v.pipe(v.string(), v.regex(/^[A-Za-z0-9]{20}$/)),
    result: v.pipe(
      v.picklist(['passed', 'failed', 'cancelled', 'timedOut', 'notCompleted']),
      v.description("The challenge's one result: what this call asked, or how the challenge had already ended."),
    ),
  }),
  _links: links('3ds:verify'),
});
