import * as v from 'valibot';
import { isLuhnValid } from '../bin/luhn';
import { namedCheck } from './validation';

/**
 * A card number field: digits only, `minDigits`–19 long, Luhn-valid, each failure under its own
 * error name (fieldIsEmpty, stringFailedRegexCheck, stringIsTooShort/Long, panFailedLuhnCheck).
 * The card BIN API takes 12 digits at least, 3DS 10 (CONTRACT.md §3, §6.1).
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
