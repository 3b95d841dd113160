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
 * spaces or dashes (`4444 3333 2222 1111`, `3782-822463-10005`). The Luhn check and the scheme
 * table make a merchant's numeric order ids rarely refused: a 16-digit id is Luhn-valid one time
 * in ten, and must then also start like a card of that length. The group rule keeps references
 * such as `tx-1795682199110-12` (a millisecond timestamp and a counter) from being read as one
 * 15-digit number.
 *
 * The digits are read in groups, so `order 1234 4444333322221111` finds the card whether or not
 * the order number sits beside it. A run of more than 19 digits with no separator is not a card
 * number (nothing issues one that long) and is not searched inside. Nor are identifiers: digits
 * glued to a letter (`INV4444333322221111`, a hex hash's digit run) or inside a UUID (whose groups
 * are all digits now and then: the DDC page's own `SessionId` is one), which a merchant's
 * references often are.
 */

/** Digit groups joined by separators: spaces (any white space) or dashes, up to three at a time. */
const DIGIT_RUN = /\d+(?:[\s-]{1,3}\d+)*/g;
/** A UUID, of any version. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const LETTER = /[A-Za-z]/;
const SEPARATORS = /[\s-]+/;
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
  const searched = text.replace(UUID, ' ');
  for (const match of searched.matchAll(DIGIT_RUN)) {
    const run = match[0];
    const [before, after] = [searched[match.index - 1], searched[match.index + run.length]];
    if ((before !== undefined && LETTER.test(before)) || (after !== undefined && LETTER.test(after))) continue;
    const groups = run.split(SEPARATORS);
    for (let first = 0; first < groups.length; first++) {
      if (looksLikeCardNumber(groups[first]!)) return true;
      // Groups joined into one number: each of them as long as a printed card's groups at most.
      let candidate = '';
      for (let last = first; last < groups.length && groups[last]!.length <= MAX_GROUP; last++) {
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
