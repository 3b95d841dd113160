import { isLuhnValid } from '../bin/luhn';
import { schemeIssues } from '../bin/scheme-ranges';

/**
 * Card numbers where a careless client puts them: a free-text field (an address line, a
 * description, a reference). The service stores, echoes, logs or keys by such fields, so it
 * refuses a value that looks like a card number (docs/errors.md "A card number in a free-text
 * field") rather than keep it in clear.
 *
 * What looks like one: 12 to 19 digits that pass the Luhn check and that the scheme table
 * recognises (a scheme's IIN range and a length that scheme issues), written as a person writes a
 * card number: in one run (`4444333322221111`), or in groups of at most six digits separated by
 * spaces, dashes or the punctuation a reference may hold (`4444 3333 2222 1111`,
 * `3782-822463-10005`, `4444.3333.2222.1111`). The Luhn check and the scheme table make a
 * merchant's numeric order ids rarely refused: a 16-digit id is Luhn-valid one time in ten, and
 * must then also start like a card of that length. The group rule keeps references such as
 * `tx-1795682199110-14` (a millisecond timestamp and a counter) from being read as one 15-digit
 * number, and UUIDs (8-4-4-4-12) from ever matching.
 *
 * The digits are read in groups, so `order 1234 4444333322221111` finds the card whether or not
 * the order number sits beside it. A group glued to a letter belongs to a word or an identifier
 * (`INV4444333322221111`, a hex hash's digits), not to a written card number, and is left out; the
 * other groups of its run are still read. A run of more than 19 digits with no separator is not a
 * card number (nothing issues one that long) and is not searched inside.
 */

/** Digit groups joined by separators: white space, dashes, `. / _ : +`, up to three at a time. */
const DIGIT_RUN = /\d+(?:[\s\-./_:+]{1,3}\d+)*/g;
const SEPARATORS = /[\s\-./_:+]+/;
const LETTER = /[A-Za-z]/;
const MIN_DIGITS = 12;
const MAX_DIGITS = 19;
/** The longest group of a card number as printed: 4-4-4-4, American Express 4-6-5, Diners 4-6-4. */
const MAX_GROUP = 6;

/**
 * Whether `text` holds something that looks like a card number (above).
 *
 * @example mightContainCardNumber('Flat 2, 4444 3333 2222 1111 Road') // true
 * @example mightContainCardNumber('order 1234567890123456') // false: fails Luhn
 */
export function mightContainCardNumber(text: string): boolean {
  // Quick exit for the common case: fewer than 12 digits cannot hold a card number.
  let digits = 0;
  for (let i = 0; i < text.length && digits < MIN_DIGITS; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  if (digits < MIN_DIGITS) return false;
  for (const match of text.matchAll(DIGIT_RUN)) {
    const run = match[0];
    const groups = run.split(SEPARATORS);
    const from = LETTER.test(text[match.index - 1] ?? '') ? 1 : 0;
    const to = LETTER.test(text[match.index + run.length] ?? '') ? groups.length - 1 : groups.length;
    for (let first = from; first < to; first++) {
      if (looksLikeCardNumber(groups[first]!)) return true;
      // Groups joined into one number: each of them as long as a printed card's groups at most.
      let candidate = '';
      for (let last = first; last < to && groups[last]!.length <= MAX_GROUP; last++) {
        candidate += groups[last];
        if (candidate.length > MAX_DIGITS) break;
        if (last > first && looksLikeCardNumber(candidate)) return true;
      }
    }
  }
  return false;
}

function looksLikeCardNumber(digits: string): boolean {
  return digits.length >= MIN_DIGITS && digits.length <= MAX_DIGITS && isLuhnValid(digits) && schemeIssues(digits);
}
