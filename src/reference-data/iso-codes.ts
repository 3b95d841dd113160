import currencyCodes from 'currency-codes';
import { whereAlpha2, whereNumeric } from 'iso-3166-1';

/**
 * ISO 4217 currencies and ISO 3166-1 countries, from maintained datasets (the npm packages
 * `currency-codes` and `iso-3166-1`) rather than a hand list: what an EMV message needs to say an
 * amount's currency and a country as numbers.
 */

/**
 * ISO 4217 numeric codes that are not currencies a payment can be in (bond market units,
 * precious metals, the test and "no currency" codes): EMV refuses them in an amount.
 */
const NOT_PAYMENT_CURRENCIES = new Set(['955', '956', '957', '958', '959', '960', '961', '962', '963', '964', '999']);

export interface CurrencyNumeric {
  /** ISO 4217 numeric code, 3 digits. */
  number: string;
  /** Minor units: the exponent of the amount (2 for GBP, 0 for JPY, 3 for BHD). */
  digits: number;
}

/**
 * The numeric code and exponent of an ISO 4217 currency a payment can be in, or undefined.
 *
 * @example
 * ```ts
 * currencyNumeric('GBP'); // { number: '826', digits: 2 }
 * currencyNumeric('XAU'); // undefined: gold is not a payment currency
 * ```
 */
export function currencyNumeric(alpha: string): CurrencyNumeric | undefined {
  const record = currencyCodes.code(alpha);
  if (!record || NOT_PAYMENT_CURRENCIES.has(record.number)) return undefined;
  return { number: record.number, digits: record.digits };
}

/**
 * The ISO 3166-1 numeric code of an alpha-2 country code, or undefined.
 *
 * @example
 * ```ts
 * countryNumeric('GB'); // '826'
 * ```
 */
export function countryNumeric(alpha2: string): string | undefined {
  return whereAlpha2(alpha2)?.numeric;
}

/** Whether a 3-digit string is an ISO 3166-1 numeric country code. */
export function isCountryNumeric(code: string): boolean {
  return /^\d{3}$/.test(code) && whereNumeric(code) !== undefined;
}
