import * as v from 'valibot';
import { CARD_EXPIRY_DATE, CARD_HOLDER_NAME, cardNumberSchema, ISO_DATE_TIME, MERCHANT, str } from '../schemas/fields';
import { jsonObject } from '../schemas/rules';

/** Request schemas of the token API (CONTRACT.md §4, Worldpay's tokens document). */

/** A billing address as Worldpay's tokens document has it (its city may be longer than 3DS's). */
const BILLING_ADDRESS = jsonObject({
  address1: str(1, 80, 'The first address line'),
  address2: v.optional(str(0, 80, 'The second address line')),
  address3: v.optional(str(0, 80, 'The third address line')),
  postalCode: str(1, 15, 'The postal code'),
  city: str(1, 50, 'The city'),
  state: v.optional(str(1, 30, 'The state')),
  countryCode: v.pipe(
    str(2, 2, 'The country code'),
    v.regex(/^[A-Z]*$/, 'Country codes are two capital letters (ISO 3166).'),
  ),
});

export const CREATE_TOKEN = jsonObject({
  paymentInstrument: jsonObject({
    type: v.literal('card/front'),
    cardHolderName: v.optional(CARD_HOLDER_NAME),
    cardNumber: cardNumberSchema(10),
    cardExpiryDate: CARD_EXPIRY_DATE,
    billingAddress: v.optional(BILLING_ADDRESS),
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
