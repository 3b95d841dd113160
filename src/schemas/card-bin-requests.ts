import * as v from 'valibot';
import { cardNumberSchema } from './fields';
import { jsonObject } from './field-errors';

/** Request schemas of the Card BIN API (docs/card-bin.md): panLookup and the lookup by BIN prefix. */

/** The Card BIN API's entity: letters and digits (the 3DS and token APIs also allow spaces). */
export const ENTITY_ID = v.pipe(
  v.string(),
  v.minLength(1, 'The entity must not be empty.'),
  v.maxLength(64, 'The entity must be at most 64 characters.'),
  v.regex(/^[A-Za-z0-9]*$/, 'The entity may contain only letters and digits.'),
);

/** panLookup: exactly one of cardNumber and token is checked by the route (oneCardIdentifier). */
export const PAN_LOOKUP = jsonObject({
  merchant: jsonObject({ entity: ENTITY_ID }),
  cardNumber: v.optional(cardNumberSchema(12)),
  token: v.optional(v.pipe(v.string(), v.minLength(1, 'The token must not be empty.'))),
});

const BIN_PREFIX = v.pipe(
  v.string(),
  v.minLength(1, 'The BIN must not be empty.'),
  v.regex(/^\d*$/, 'The BIN must contain digits only.'),
  v.minLength(6, 'The BIN must have at least 6 digits.'),
  v.maxLength(8, 'The BIN must have at most 8 digits: send the leading digits only, never a card number.'),
);

/** binLookup: 6 to 8 leading digits. */
export const BIN_LOOKUP = jsonObject({
  merchant: jsonObject({ entity: ENTITY_ID }),
  bin: BIN_PREFIX,
});
