import * as v from 'valibot';
import {
  billingAddress,
  CARD_EXPIRY_DATE,
  CARD_HOLDER_NAME,
  cardNumberSchema,
  ISO_DATE_TIME,
  MERCHANT,
  NO_CARD_NUMBER,
  str,
} from './fields';
import { jsonObject } from './field-errors';

/** Request schemas of the token API (docs/tokens.md, Worldpay's tokens document). */

/** `description`: 1 to 255 characters without `&` or `<`. */
export const TOKEN_DESCRIPTION = v.pipe(
  str(1, 255, 'The description'),
  v.regex(/^[^&<]*$/, 'The description may not contain & or <.'),
  NO_CARD_NUMBER,
);

/** `namespace`: 1 to 64 characters, no spaces, `&` or `<`, not starting with `_`. */
export const TOKEN_NAMESPACE = v.pipe(
  str(1, 64, 'The namespace'),
  v.regex(/^[^_\s&<][^\s&<]*$/, 'A namespace has no spaces, & or <, and does not start with _.'),
  NO_CARD_NUMBER,
);

/** `schemeTransactionReference`: 1 to 56 letters, digits and spaces. */
export const SCHEME_TRANSACTION_REFERENCE = v.pipe(
  str(1, 56, 'The scheme transaction reference'),
  v.regex(/^[a-zA-Z0-9 ]*$/, 'Scheme transaction references are letters, digits and spaces.'),
  NO_CARD_NUMBER,
);

/** The token's billing address, as on creation. */
export const TOKEN_BILLING_ADDRESS = billingAddress(50);

export const CREATE_TOKEN = jsonObject({
  paymentInstrument: jsonObject({
    type: v.literal('card/front'),
    cardHolderName: v.optional(CARD_HOLDER_NAME),
    cardNumber: cardNumberSchema(10),
    cardExpiryDate: CARD_EXPIRY_DATE,
    billingAddress: v.optional(TOKEN_BILLING_ADDRESS),
  }),
  merchant: MERCHANT,
  description: v.optional(TOKEN_DESCRIPTION),
  tokenExpiryDateTime: v.optional(ISO_DATE_TIME),
  namespace: v.optional(TOKEN_NAMESPACE),
  schemeTransactionReference: v.optional(SCHEME_TRANSACTION_REFERENCE),
});

/**
 * The body of each update (docs/tokens.md "Updates"), validated as on creation: a bare JSON
 * string for the cardholder name, the description and the scheme transaction reference, an
 * object for the expiry date and the billing address. Field errors name `$` (the whole body).
 */
export const TOKEN_UPDATES = {
  cardHolderName: CARD_HOLDER_NAME,
  cardExpiryDate: CARD_EXPIRY_DATE,
  billingAddress: TOKEN_BILLING_ADDRESS,
  description: TOKEN_DESCRIPTION,
  schemeTransactionReference: SCHEME_TRANSACTION_REFERENCE,
} as const;

/** The query of `GET /tokens`: a namespace, a token id, or both. */
export const TOKEN_QUERY = v.pipe(
  v.object({
    namespace: v.optional(TOKEN_NAMESPACE),
    tokenId: v.optional(v.pipe(str(1, 256, 'The token id'), v.regex(/^[A-Za-z0-9_-]*$/, 'Not a token id.'))),
  }),
);
