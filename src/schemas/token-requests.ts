import * as v from 'valibot';
import {
  billingAddress,
  CARD_EXPIRY_DATE,
  CARD_HOLDER_NAME,
  cardNumberSchema,
  ISO_DATE_TIME,
  MERCHANT,
  str,
} from './fields';
import { jsonObject } from './field-errors';

/** Request schemas of the token API (docs/tokens.md, Worldpay's tokens document). */

export const CREATE_TOKEN = jsonObject({
  paymentInstrument: jsonObject({
    type: v.literal('card/front'),
    cardHolderName: v.optional(CARD_HOLDER_NAME),
    cardNumber: cardNumberSchema(10),
    cardExpiryDate: CARD_EXPIRY_DATE,
    billingAddress: v.optional(billingAddress(50)),
  }),
  merchant: MERCHANT,
  description: v.optional(
    v.pipe(str(1, 255, 'The description'), v.regex(/^[^&<]*$/, 'The description may not contain & or <.')),
  ),
  tokenExpiryDateTime: v.optional(ISO_DATE_TIME),
  namespace: v.optional(
    v.pipe(
      str(1, 64, 'The namespace'),
      v.regex(/^[^_\s&<][^\s&<]*$/, 'A namespace has no spaces, & or <, and does not start with _.'),
    ),
  ),
  schemeTransactionReference: v.optional(
    v.pipe(
      str(1, 56, 'The scheme transaction reference'),
      v.regex(/^[a-zA-Z0-9 ]*$/, 'Scheme transaction references are letters, digits and spaces.'),
    ),
  ),
});
