/**
 * Luhn (mod 10) check of a string of digits, as card numbers carry it.
 *
 * @example
 * ```ts
 * isLuhnValid('4444333322221111'); // true
 * isLuhnValid('4444333322221112'); // false
 * ```
 */
export function isLuhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}
