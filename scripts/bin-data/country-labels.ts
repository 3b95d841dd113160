import countryToCurrency from 'country-to-currency';
import { labelKey } from './label-key';

/** Alpha-2 codes the country→currency dataset knows: the only codes we can give a currency. */
const KNOWN_ALPHA2: ReadonlySet<string> = new Set(Object.keys(countryToCurrency));

/**
 * Alpha-3 codes of the issuing countries that are common in public BIN lists. Deliberately not
 * the whole ISO 3166 table: a code missing here is counted as an unmapped label, which is the
 * signal to add it.
 */
const ALPHA3: Readonly<Record<string, string>> = {
  USA: 'US',
  CAN: 'CA',
  MEX: 'MX',
  BRA: 'BR',
  ARG: 'AR',
  CHL: 'CL',
  COL: 'CO',
  PER: 'PE',
  VEN: 'VE',
  ECU: 'EC',
  URY: 'UY',
  PRY: 'PY',
  BOL: 'BO',
  CRI: 'CR',
  PAN: 'PA',
  GTM: 'GT',
  DOM: 'DO',
  PRI: 'PR',
  GBR: 'GB',
  IRL: 'IE',
  FRA: 'FR',
  DEU: 'DE',
  ITA: 'IT',
  ESP: 'ES',
  PRT: 'PT',
  NLD: 'NL',
  BEL: 'BE',
  LUX: 'LU',
  CHE: 'CH',
  AUT: 'AT',
  DNK: 'DK',
  NOR: 'NO',
  SWE: 'SE',
  FIN: 'FI',
  ISL: 'IS',
  POL: 'PL',
  CZE: 'CZ',
  SVK: 'SK',
  HUN: 'HU',
  ROU: 'RO',
  BGR: 'BG',
  GRC: 'GR',
  HRV: 'HR',
  SVN: 'SI',
  SRB: 'RS',
  UKR: 'UA',
  RUS: 'RU',
  BLR: 'BY',
  LTU: 'LT',
  LVA: 'LV',
  EST: 'EE',
  TUR: 'TR',
  ISR: 'IL',
  SAU: 'SA',
  ARE: 'AE',
  QAT: 'QA',
  KWT: 'KW',
  BHR: 'BH',
  OMN: 'OM',
  EGY: 'EG',
  MAR: 'MA',
  NGA: 'NG',
  ZAF: 'ZA',
  KEN: 'KE',
  GHA: 'GH',
  IND: 'IN',
  PAK: 'PK',
  BGD: 'BD',
  LKA: 'LK',
  CHN: 'CN',
  HKG: 'HK',
  TWN: 'TW',
  JPN: 'JP',
  KOR: 'KR',
  SGP: 'SG',
  MYS: 'MY',
  IDN: 'ID',
  THA: 'TH',
  VNM: 'VN',
  PHL: 'PH',
  AUS: 'AU',
  NZL: 'NZ',
  KAZ: 'KZ',
  UZB: 'UZ',
};

/** English names that differ from what Intl.DisplayNames prints (older or informal names). */
const NAME_ALIASES: Readonly<Record<string, string>> = {
  usa: 'US',
  unitedstatesofamerica: 'US',
  uk: 'GB',
  greatbritain: 'GB',
  england: 'GB',
  russianfederation: 'RU',
  korearepublicof: 'KR',
  republicofkorea: 'KR',
  korea: 'KR',
  czechrepublic: 'CZ',
  turkey: 'TR',
  hongkong: 'HK',
  macau: 'MO',
  macao: 'MO',
  ivorycoast: 'CI',
  cotedivoire: 'CI',
  holland: 'NL',
  macedonia: 'MK',
  burma: 'MM',
  swaziland: 'SZ',
  capeverde: 'CV',
  vietnam: 'VN',
  vietnamsocialistrepublicof: 'VN',
  iranislamicrepublicof: 'IR',
  taiwanprovinceofchina: 'TW',
  bolivariarepublicof: 'VE',
  venezuelabolivarianrepublicof: 'VE',
  tanzaniaunitedrepublicof: 'TZ',
  palestine: 'PS',
};

let namesByKey: Map<string, string> | undefined;

/** English country names from the ICU data Node ships, built once on first use. */
function countryNames(): Map<string, string> {
  if (namesByKey) return namesByKey;
  const display = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  namesByKey = new Map();
  for (const code of KNOWN_ALPHA2) {
    const name = display.of(code);
    if (name) namesByKey.set(labelKey(name), code);
  }
  for (const [key, code] of Object.entries(NAME_ALIASES)) namesByKey.set(key, code);
  return namesByKey;
}

/**
 * Reads a country as a source wrote it (alpha-2 preferred; alpha-3 and English names tolerated)
 * and returns an alpha-2 code the country→currency dataset knows, or undefined.
 *
 * @example countryCodeFor('gb') // 'GB'
 * @example countryCodeFor('United Kingdom') // 'GB'
 */
export function countryCodeFor(label: string): string | undefined {
  const trimmed = label.trim();
  const upper = trimmed.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper)) return isKnownCountryCode(upper) ? upper : undefined;
  if (/^[A-Z]{3}$/.test(upper) && ALPHA3[upper]) return ALPHA3[upper];
  return countryNames().get(labelKey(trimmed));
}

/** Whether a code is an alpha-2 key of the country→currency dataset. */
export function isKnownCountryCode(code: string): boolean {
  return KNOWN_ALPHA2.has(code);
}

/** The ISO 4217 currency of a known alpha-2 country code. */
export function currencyFor(code: string): string | undefined {
  return (countryToCurrency as Readonly<Record<string, string>>)[code];
}
