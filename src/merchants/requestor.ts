import * as v from 'valibot';
import { BRANDS } from '../bin/model';
import { isCountryNumeric } from '../reference-data/iso-codes';

/**
 * An entity's 3DS Requestor block (docs/configuration.md "Entities", docs/threeds.md "Live"): who
 * the merchant is to the card schemes' Directory Servers, as the AReq of a live authentication
 * names it. The acquirer assigns these values per scheme; one value serves every scheme unless a
 * scheme's differs. Checked when the configuration loads: an entity with 3DS enabled has a valid
 * block for `live` or the Worker does not start (and `npm test` fails), never a checkout.
 */

const perScheme = (max: number, what: string) => {
  const value = v.pipe(v.string(), v.minLength(1), v.maxLength(max, `${what} is at most ${max} characters`));
  return v.union([
    value,
    v.pipe(
      v.record(v.string(), value),
      v.check((r) => typeof r.default === 'string', `${what} per scheme needs a "default"`),
      v.check(
        (r) => Object.keys(r).every((k) => k === 'default' || (BRANDS as readonly string[]).includes(k)),
        `${what} per scheme is keyed by brand names`,
      ),
    ),
  ]);
};

const countryCode = (what: string) =>
  v.pipe(v.string(), v.check(isCountryNumeric, `${what} is an ISO 3166-1 numeric country code`));

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:' && value.length <= 2048;
  } catch {
    return false;
  }
}

/**
 * The block, as data/merchants.json has it: `acquirerBIN` (at most 11 characters) and
 * `acquirerMerchantID` (at most 35) as one value for every scheme or per scheme with a
 * `default`; `mcc` (4 digits, ISO 18245); `merchantName` (at most 40 characters, as cardholders
 * know the merchant); `merchantCountryCode` and `acquirerCountryCode` (ISO 3166-1 numeric; the
 * latter for EMV 2.3.1); `threeDSRequestorURL` (the merchant's https website).
 */
export const REQUESTOR_BLOCK = v.strictObject({
  acquirerBIN: perScheme(11, 'acquirerBIN'),
  acquirerMerchantID: perScheme(35, 'acquirerMerchantID'),
  mcc: v.pipe(v.string(), v.regex(/^\d{4}$/, 'mcc is 4 digits')),
  merchantName: v.pipe(v.string(), v.minLength(1), v.maxLength(40, 'merchantName is at most 40 characters')),
  merchantCountryCode: countryCode('merchantCountryCode'),
  threeDSRequestorURL: v.pipe(v.string(), v.check(isHttpsUrl, 'threeDSRequestorURL is an https URL')),
  acquirerCountryCode: countryCode('acquirerCountryCode'),
});

export type RequestorBlock = v.InferOutput<typeof REQUESTOR_BLOCK>;
