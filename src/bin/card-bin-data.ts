import type { BinMatch } from './bin-index';
import type { AnonymousPrepaid, Brand, Category, FundingType, MultipleAccountAccess, NumberType } from './model';

/** The card BIN lookup response (docs/card-bin.md "The answer"). Absent fields are unknown. */
export interface CardBinData {
  type: NumberType;
  brand?: Brand[];
  bin: string;
  binLength: number;
  fundingType?: FundingType;
  issuerName?: string;
  countryCode?: string;
  currency?: string;
  dccAllowed: boolean;
  anonymousPrepaid?: AnonymousPrepaid;
  category?: Category;
  multipleAccountAccess?: MultipleAccountAccess;
}

const DCC_BRANDS: readonly Brand[] = ['visa', 'mastercard'];

/**
 * Shapes the answer for a card number from the index match. `bin` is the leading digits of the
 * matched row (8 digits for an 8-digit row, otherwise 6).
 */
export function toCardBinData(cardNumber: string, match: BinMatch): CardBinData {
  const r = match.record;
  const binLength = match.source === 'scheme' ? 6 : r.binLength;
  const anonymous = r.anonymousPrepaid === 'anonymousCompliant' || r.anonymousPrepaid === 'anonymousNonCompliant';
  const data: CardBinData = {
    type: r.type,
    brand: r.brands.length > 0 ? [...r.brands] : undefined,
    bin: cardNumber.slice(0, binLength),
    binLength,
    fundingType: r.fundingType,
    issuerName: r.issuerName,
    countryCode: r.countryCode,
    currency: r.currency,
    dccAllowed: r.brands.some((b) => DCC_BRANDS.includes(b)) && r.currency !== undefined && !anonymous,
    anonymousPrepaid: r.anonymousPrepaid,
    category: r.category,
    multipleAccountAccess: r.multipleAccountAccess,
  };
  // JSON.stringify drops undefined fields: a field the data cannot support is omitted.
  return data;
}
