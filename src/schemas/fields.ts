import * as v from 'valibot';
import { isLuhnValid } from '../bin/luhn';
import { mightContainCardNumber } from '../cards/card-number-in-text';
import { integer, jsonObject, namedCheck } from './field-errors';

/** Field schemas shared by the APIs, each failure under its field error name (docs/errors.md "Field errors"). */

/** A string of min–max characters (fieldIsEmpty for "" when min is 1). */
export const str = (min: number, max: number, what: string) =>
  v.pipe(
    v.string(),
    v.minLength(min, `${what} must have at least ${min} character${min === 1 ? '' : 's'}.`),
    v.maxLength(
      max,
      min === max ? `${what} must have ${max} characters.` : `${what} must have at most ${max} characters.`,
    ),
  );

const holdsNoCardNumber = (value: string): boolean => !mightContainCardNumber(value);

/**
 * Refuses a free-text value that looks like a card number (src/cards/card-number-in-text.ts):
 * such a field is stored, echoed, logged or part of a key, where a card number must never be in
 * clear (docs/errors.md "A card number in a free-text field"). The message never repeats it.
 */
export const NO_CARD_NUMBER = namedCheck(
  'fieldMightContainCardNumber',
  holdsNoCardNumber,
  'This field might contain a card number. Send a card number only in a card number field.',
);

/**
 * A URL as a reader of it sees it: each percent escape of an ASCII character decoded, and `+` as
 * the space a form-encoded query makes of it (other escapes, malformed ones included, kept).
 */
function urlText(value: string): string {
  return value
    .replace(/\+/g, ' ')
    .replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * {@link NO_CARD_NUMBER} for a URL: as sent, and as decoded (`%20`, `+` and escaped digits would
 * otherwise hide a card number from the check, not from whoever reads the URL).
 */
export const NO_CARD_NUMBER_IN_URL = namedCheck(
  'fieldMightContainCardNumber',
  (value: string) => holdsNoCardNumber(value) && holdsNoCardNumber(urlText(value)),
  'This field might contain a card number. Send a card number only in a card number field.',
);

/** {@link NO_CARD_NUMBER} for an address line, under Worldpay's name for it. */
export const NO_CARD_NUMBER_IN_ADDRESS = namedCheck(
  'billingAddressMightContainCardNumber',
  holdsNoCardNumber,
  'The address might contain a card number.',
);

/** A free-text string of min–max characters that must not hold a card number. */
export const freeText = (min: number, max: number, what: string) => v.pipe(str(min, max, what), NO_CARD_NUMBER);

/** An address field of min–max characters that must not hold a card number. */
export const addressText = (min: number, max: number, what: string) =>
  v.pipe(str(min, max, what), NO_CARD_NUMBER_IN_ADDRESS);

/**
 * A card number field: digits only, `minDigits`–19 long, Luhn-valid (fieldIsEmpty,
 * stringFailedRegexCheck, stringIsTooShort/Long, panFailedLuhnCheck). The card BIN API takes 12
 * digits at least, 3DS and tokens 10 (docs/card-bin.md, docs/threeds.md, docs/tokens.md). `what`
 * names the number in the messages (a 3DS v3 network token number has the same rules).
 */
export function cardNumberSchema(minDigits: number, what = 'The card number') {
  return v.pipe(
    v.string(),
    v.minLength(1, `${what} must not be empty.`),
    v.regex(/^\d*$/, `${what} must contain digits only.`),
    v.minLength(minDigits, `${what} must have at least ${minDigits} digits.`),
    v.maxLength(19, `${what} must have at most 19 digits.`),
    namedCheck('panFailedLuhnCheck', isLuhnValid, `${what} fails the Luhn check.`),
  );
}

/** `{month, year}` of a card's expiry date. */
export const CARD_EXPIRY_DATE = jsonObject({
  month: integer(1, 12),
  year: integer(1, 9999),
});

export const CARD_HOLDER_NAME = freeText(1, 255, 'The cardholder name');

/** The entity of the 3DS and token APIs: it may contain spaces (docs/threeds.md "Overview"). */
export const MERCHANT_ENTITY = v.pipe(
  str(1, 64, 'The entity'),
  v.regex(/^[A-Za-z0-9 ]*$/, 'The entity may contain only letters, digits and spaces.'),
);

/** `merchant` of the 3DS and token APIs. */
export const MERCHANT = jsonObject({ entity: MERCHANT_ENTITY });

/**
 * An ISO 8601 date and time with a zone that exists: a real calendar date (no 30 February), a
 * UTC offset between −12:00 and +14:00, and an instant the platform can parse. Anything else is
 * dateHasInvalidFormat, never a 500 further down.
 */
export function isIsoDateTime(value: string): boolean {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):([0-5]\d))$/.exec(
      value,
    );
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return false;
  const [sign, hours, minutes] = [m[5], m[6], m[7]];
  if (sign !== undefined && Number(hours) * 60 + Number(minutes) > (sign === '+' ? 14 * 60 : 12 * 60)) return false;
  return Number.isFinite(Date.parse(value));
}

export const ISO_DATE_TIME = v.pipe(
  v.string(),
  namedCheck(
    'dateHasInvalidFormat',
    isIsoDateTime,
    'Use an ISO 8601 date and time with a zone, e.g. 2027-01-31T23:59:59Z.',
  ),
);

/**
 * A billing address as Worldpay's documents have it: the same fields in the 3DS and token APIs,
 * but the 3DS document allows a city of 15 characters and the token document one of 50.
 */
export function billingAddress(cityMaxLength: 15 | 50) {
  return jsonObject({
    address1: addressText(1, 80, 'The first address line'),
    address2: v.optional(addressText(0, 80, 'The second address line')),
    address3: v.optional(addressText(0, 80, 'The third address line')),
    postalCode: addressText(1, 15, 'The postal code'),
    city: addressText(1, cityMaxLength, 'The city'),
    state: v.optional(addressText(1, 30, 'The state')),
    countryCode: v.pipe(
      str(2, 2, 'The country code'),
      v.regex(/^[A-Z]{2}$/, 'Country codes are two capital letters (ISO 3166).'),
    ),
  });
}
