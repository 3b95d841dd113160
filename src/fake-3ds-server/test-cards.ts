import { isLuhnValid } from '../bin/luhn';

/**
 * Card numbers for the fake 3DS Server's scenarios (src/fake-3ds-server/scenarios.ts), which, like
 * 3dsecure.io's sandbox, reads its scenario from the last four digits. Those four digits are
 * chosen, so the digit before them is the one that makes the number pass the Luhn check the
 * service applies to every card number.
 */

/**
 * A Luhn-valid card number that starts with `prefix` and ends with the 4-digit `suffix`.
 *
 * @example
 * ```ts
 * scenarioCard('2003'); // '40001005…2003': frictionless Y with a 3DS Method, versions 2.2.0 only
 * ```
 */
export function scenarioCard(suffix: string, prefix = '400010', length = 16): string {
  if (!/^\d{4}$/.test(suffix) || !/^\d+$/.test(prefix) || prefix.length > length - 5) {
    throw new Error(`no ${length}-digit card number of prefix ${prefix} ends with ${suffix}`);
  }
  const body = prefix.padEnd(length - 5, '0');
  for (let x = 0; x <= 9; x++) {
    const candidate = `${body}${x}${suffix}`;
    if (isLuhnValid(candidate)) return candidate;
  }
  throw new Error('unreachable: one of ten digits always fits');
}
