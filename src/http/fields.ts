import * as v from 'valibot';
import { isLuhnValid } from '../bin/luhn';
import { integer, jsonObject, namedCheck } from './validation';

/** Field schemas shared by the APIs, each failure under its SPEC.md §7.4 error name. */

/** A string of min–max characters (fieldIsEmpty for "" when min is 1). */
export const str = (min: number, max: number, what: string) => v.pipe(
  v.string(),
  v.minLength(min, `${what} must have at least ${min} character${min === 1 ? '' : 's'}.`),
  v.maxLength(max, `${what} must have at most ${max} characters.`),
);

/**
 * A card number field: digits only, `minDigits`–19 long, Luhn-valid (fieldIsEmpty,
 * stringFailedRegexCheck, stringIsTooShort/Long, panFailedLuhnCheck). The card BIN API and
 * tokens take 12 digits at least, 3DS 10 (CONTRACT.md §3, §6.1).
 */
export function cardNumberSchema(minDigits: number) {
  return v.pipe(
    v.string(),
    v.minLength(1, 'The card number must not be empty.'),
    v.regex(/^\d*$/, 'The card number must contain digits only.'),
    v.minLength(minDigits, `The card number must have at least ${minDigits} digits.`),
    v.maxLength(19, 'The card number must have at most 19 digits.'),
    namedCheck('panFailedLuhnCheck', isLuhnValid, 'The card number fails the Luhn check.'),
  );
}

/** `{month, year}` of a card's expiry date. */
export const CARD_EXPIRY_DATE = jsonObject({
  month: integer(1, 12),
  year: integer(2000, 9999),
});

export const CARD_HOLDER_NAME = str(1, 255, 'The cardholder name');

/** `merchant` of the 3DS and token APIs: the entity may contain spaces (CONTRACT.md §5). */
export const MERCHANT = jsonObject({
  entity: v.pipe(str(1, 64, 'The entity'), v.regex(/^[A-Za-z0-9 ]*$/, 'The entity may contain only letters, digits and spaces.')),
});
