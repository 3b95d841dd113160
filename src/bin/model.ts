/**
 * The card BIN vocabulary of the wire format (docs/card-bin.md, docs/bin-data.md), shared by the Worker and the
 * build scripts so that the compiled index and the API can never disagree on a name.
 */

/** Brand names: the Worldpay v1 list plus common domestic schemes, in lower camel case. */
export const BRANDS = [
  'accel',
  'affn',
  'airplus',
  'allstar',
  'amex',
  'argencard',
  'ath',
  'aurore',
  'bc',
  'cabal',
  'carnet',
  'cartesBancaires',
  'cencosud',
  'coopeplus',
  'credimas',
  'culiance',
  'dankort',
  'diners',
  'discover',
  'eftposAU',
  'elo',
  'gecapital',
  'hana',
  'hipercard',
  'hyundai',
  'ikea',
  'interac',
  'interlink',
  'italcred',
  'jaywan',
  'jcb',
  'jeanie',
  'keyfuels',
  'kookmin',
  'lotte',
  'maestro',
  'mastercard',
  'naranja',
  'nativa',
  'ncp',
  'nevada',
  'newday',
  'nexo',
  'nonghyup',
  'nyce',
  'overdrive',
  'pavd',
  'pulse',
  'samsung',
  'sears',
  'shazam',
  'shinhan',
  'sorocred',
  'star',
  'starAccess',
  'supercharge',
  'tarjeta',
  'troy',
  'uatp',
  'unionPay',
  'visa',
  'mir',
  'rupay',
  'verve',
  'girocard',
  'bancomat',
  'mada',
  'ebt',
] as const;
export type Brand = (typeof BRANDS)[number];

/**
 * International schemes, in the order they are listed first on a co-badged card
 * (docs/card-bin.md "The answer": the international scheme first).
 */
export const INTERNATIONAL_BRANDS: readonly Brand[] = [
  'visa',
  'mastercard',
  'amex',
  'discover',
  'diners',
  'jcb',
  'unionPay',
  'maestro',
];

/**
 * Whether a card is of Mastercard's family (mastercard, maestro): 3-D Secure answers it with
 * Mastercard's ECIs, and its Directory Server takes recurring 3RI and data only.
 */
export function isMastercardFamily(brands: readonly Brand[]): boolean {
  return brands.some((b) => b === 'mastercard' || b === 'maestro');
}

export const NUMBER_TYPES = ['pan', 'networkToken'] as const;
export type NumberType = (typeof NUMBER_TYPES)[number];

export const FUNDING_TYPES = ['credit', 'debit', 'prepaid', 'chargeCard', 'deferredDebit', 'unknown'] as const;
export type FundingType = (typeof FUNDING_TYPES)[number];

export const ANONYMOUS_PREPAID = [
  'anonymousNonCompliant',
  'anonymousCompliant',
  'notPrepaidOrNonAnonymous',
  'unknown',
] as const;
export type AnonymousPrepaid = (typeof ANONYMOUS_PREPAID)[number];

export const CATEGORIES = ['consumer', 'commercial'] as const;
export type Category = (typeof CATEGORIES)[number];

export const MULTIPLE_ACCOUNT_ACCESS = ['managed', 'unmanaged', 'unknown'] as const;
export type MultipleAccountAccess = (typeof MULTIPLE_ACCOUNT_ACCESS)[number];

/**
 * What the index knows about one range of card numbers. Optional fields are absent when the
 * source data cannot support them: the API omits them rather than inventing a value.
 */
export interface BinRecord {
  type: NumberType;
  /** Co-badged cards have several brands, international scheme first. May be empty. */
  brands: readonly Brand[];
  /** Number of leading digits that identify the range (6 or 8). */
  binLength: number;
  fundingType?: FundingType;
  issuerName?: string;
  /** ISO 3166-1 alpha-2, or `unknown`. */
  countryCode?: string;
  /** ISO 4217 of the issuer country, from the country→currency dataset at build time. */
  currency?: string;
  anonymousPrepaid?: AnonymousPrepaid;
  category?: Category;
  multipleAccountAccess?: MultipleAccountAccess;
}

/** Orders brands as the API lists them: international schemes first, then domestic ones. */
export function orderBrands(brands: Iterable<Brand>): Brand[] {
  const rank = (b: Brand): number => {
    const i = INTERNATIONAL_BRANDS.indexOf(b);
    return i === -1 ? INTERNATIONAL_BRANDS.length : i;
  };
  return [...new Set(brands)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
