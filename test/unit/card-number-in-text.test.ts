import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLuhnValid } from '../../src/bin/luhn';
import { schemeIssues } from '../../src/bin/scheme-ranges';
import { mightContainCardNumber } from '../../src/cards/card-number-in-text';

/** Appends the Luhn check digit to `body`. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

/**
 * Card numbers of the schemes, each a length that scheme issues: (prefix, length), each prefix
 * inside one range of the scheme table with no narrower range of another scheme in it.
 */
const CARD_SHAPES: readonly [string, number][] = [
  ['4', 16],
  ['4444', 19],
  ['51', 16],
  ['2221', 16],
  ['34', 15],
  ['37', 15],
  ['601120', 16],
  ['3528', 16],
  ['36', 14],
  ['622126', 19],
  ['502', 16],
  ['6304', 18],
  ['2200', 16],
];

const cardNumber = fc.constantFrom(...CARD_SHAPES).chain(([prefix, length]) =>
  fc
    .array(fc.integer({ min: 0, max: 9 }), {
      minLength: length - prefix.length - 1,
      maxLength: length - prefix.length - 1,
    })
    .map((digits) => withCheckDigit(prefix + digits.join(''))),
);

/**
 * The card number as a person writes it: in one run, or cut into groups of one to six digits,
 * each gap a run of one to three spaces, dashes or tabs.
 */
const SEPARATOR = fc.constantFrom(' ', '-', '  ', ' - ', '\t', '--');
const written = cardNumber.chain((pan) =>
  fc.oneof(
    fc.constant(pan),
    fc.array(fc.tuple(fc.integer({ min: 1, max: 6 }), SEPARATOR), { minLength: 19, maxLength: 19 }).map((cuts) => {
      let out = '';
      let at = 0;
      for (const [size, separator] of cuts) {
        if (at >= pan.length) break;
        out += (at > 0 ? separator : '') + pan.slice(at, at + size);
        at += size;
      }
      return out;
    }),
  ),
);

/** Text around the number: words, and something that is not a letter or digit next to the number. */
const words = fc.string({ unit: fc.constantFrom(...'abcXYZ ,./#()&é'.split('')), maxLength: 20 });
const edge = fc.constantFrom(' ', ', ', ': ', '(', ')', '#', '/', '\n', '=', '"');

describe('a card number in free text (pure)', () => {
  it('is found whatever the separators between its digits and wherever it sits in the text', () => {
    fc.assert(
      fc.property(words, edge, written, edge, words, (before, open, number, close, after) => {
        expect(mightContainCardNumber(`${before}${open}${number}${close}${after}`)).toBe(true);
        // At the very start or end of the text too.
        expect(mightContainCardNumber(`${number}${close}${after}`)).toBe(true);
        expect(mightContainCardNumber(`${before}${open}${number}`)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('is found beside a shorter number in the same run of digit groups', () => {
    expect(mightContainCardNumber('order 1234 4444333322221111')).toBe(true);
    expect(mightContainCardNumber('4444 3333 2222 1111 12')).toBe(true);
    expect(mightContainCardNumber('Flat 2, 4444-3333-2222-1111 Road')).toBe(true);
    // A group glued to a letter is left out; the rest of its run is still read.
    expect(mightContainCardNumber('Unit B2 4444 3333 2222 1111')).toBe(true);
    expect(mightContainCardNumber('4444 3333 2222 1111 2B')).toBe(true);
    expect(mightContainCardNumber('INV1234 4444333322221111')).toBe(true);
    // Separated by the punctuation a transaction reference may hold: such a reference names a KV key.
    for (const separator of ['.', '/', '_', ':', '+'])
      expect(mightContainCardNumber(['4444', '3333', '2222', '1111'].join(separator))).toBe(true);
  });

  it('accepts a 16-digit order number that fails the Luhn check', () => {
    expect(isLuhnValid('4444333322221112')).toBe(false);
    expect(mightContainCardNumber('order 4444333322221112')).toBe(false);
    fc.assert(
      fc.property(cardNumber, fc.integer({ min: 1, max: 9 }), (pan, shift) => {
        const last = (Number(pan.at(-1)) + shift) % 10;
        expect(mightContainCardNumber(`ref ${pan.slice(0, -1)}${last}`)).toBe(false);
      }),
    );
  });

  it('accepts Luhn-valid numbers that no scheme issues: no IIN range, or a length the scheme does not issue', () => {
    const noScheme = withCheckDigit('999999999999999'); // 16 digits, no scheme's range
    expect(schemeIssues(noScheme)).toBe(false);
    expect(mightContainCardNumber(`order ${noScheme}`)).toBe(false);
    const visa15 = withCheckDigit('44443333222211'); // Visa's range, but Visa issues no 15 digits
    expect(mightContainCardNumber(visa15)).toBe(false);
    const phone = withCheckDigit('491511234567'); // a 13-digit phone number with its country code
    expect(mightContainCardNumber(phone)).toBe(false);
  });

  it('accepts a reference of a timestamp and a counter: groups longer than a printed card group are not joined', () => {
    const reference = '1795682199110-14';
    expect(isLuhnValid(reference.replace('-', ''))).toBe(true);
    expect(schemeIssues(reference.replace('-', ''))).toBe(true); // UATP, 15 digits
    expect(mightContainCardNumber(`tx-${reference}`)).toBe(false);
    expect(mightContainCardNumber('3782 822463 10005')).toBe(true); // American Express, 4-6-5
  });

  it('accepts identifiers: a UUID whose groups are digits, digits glued to letters', () => {
    const twelve = withCheckDigit('50123456789'); // 12 digits in Maestro's range: no card is that long
    // The DDC page's SessionId, a UUID whose last group happens to be all digits.
    expect(mightContainCardNumber(`0_12345678-1234-4123-8123-${twelve}`)).toBe(false);
    expect(mightContainCardNumber(`ref 12345678-1234-4123-8123-${twelve}`.toUpperCase())).toBe(false);
    expect(mightContainCardNumber(`INV${'4444333322221111'}`)).toBe(false);
    expect(mightContainCardNumber(`sha 3f${'4444333322221111'}ab`)).toBe(false);
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        expect(mightContainCardNumber(`0_${uuid}`)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts 12-digit international phone numbers that start like Maestro (+57, +58, +593, +595, +63)', () => {
    for (const prefix of ['57300', '58412', '59399', '59598', '63905']) {
      const phone = withCheckDigit(`${prefix}123456`); // 12 digits, Luhn-valid
      expect(mightContainCardNumber(phone)).toBe(false);
      expect(mightContainCardNumber(`Tel +${prefix.slice(0, 2)} ${phone.slice(2)}`)).toBe(false);
    }
  });

  it('accepts runs of fewer than 12 or more than 19 digits, and digits broken by other characters', () => {
    expect(mightContainCardNumber('12345678901')).toBe(false);
    expect(mightContainCardNumber(`00${'4444333322221111'}00`)).toBe(false); // 20 digits with no separator
    expect(mightContainCardNumber('4444,3333,2222,1111')).toBe(false);
    expect(mightContainCardNumber('2026-11-26T10:00:00Z')).toBe(false);
    expect(mightContainCardNumber('')).toBe(false);
  });

  it('refuses few order numbers: about one 16-digit number in ten passes Luhn, and fewer still start like a card', () => {
    // A deterministic sample of 16-digit numbers: the share refused stays under the Luhn share.
    let refused = 0;
    const rng = fc.sample(fc.bigInt({ min: 10n ** 15n, max: 10n ** 16n - 1n }), { numRuns: 5000, seed: 42 });
    for (const n of rng) if (mightContainCardNumber(`order-${n}`)) refused++;
    expect(refused / rng.length).toBeGreaterThan(0.01); // the rule does refuse some: it is not a no-op
    expect(refused / rng.length).toBeLessThan(0.1);
  });
});
