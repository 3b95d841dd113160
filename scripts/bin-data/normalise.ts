import {
  ANONYMOUS_PREPAID,
  BRANDS,
  CATEGORIES,
  FUNDING_TYPES,
  MULTIPLE_ACCOUNT_ACCESS,
  NUMBER_TYPES,
  orderBrands,
  type BinRecord,
  type Brand,
  type FundingType,
} from '../../src/bin/model';
import { resolveBrandLabel } from './brand-labels';
import { countryCodeFor, currencyFor, isKnownCountryCode } from './country-labels';
import { anonymousPrepaidFor, categoryFor, fundingTypeFor, prepaidFlag, productSaysPrepaid } from './label-rules';
import { schemeBrandsFor } from '../../src/bin/scheme-ranges';
import type { LabelReport, RawRow, Rejection, SourceRow } from './source-row';

/** Fields of a record the normaliser works out; `type`, `brands` and `binLength` come apart. */
type RecordDetails = Omit<BinRecord, 'type' | 'brands' | 'binLength'>;

/** A reason to refuse the row, thrown inside the normaliser and turned into a Rejection. */
class RowRejected extends Error {}

/** An empty report, to pass to {@link normaliseRow} for a whole source. */
export function newLabelReport(): LabelReport {
  return { unmappedBrandLabels: new Map(), unmappedLabels: new Map() };
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Canonical cells must be in the vocabulary: a typo in our own format is a broken source. */
function checkedEnum<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  column: string,
): T | undefined {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new RowRejected(`${column} "${value}" is not one of ${allowed.join(', ')}`);
}

function checkedRange(raw: RawRow): { start: number; end: number } {
  const { startDigits, endDigits } = raw;
  if (!/^\d{6,8}$/.test(startDigits) || !/^\d{6,8}$/.test(endDigits)) {
    throw new RowRejected(`BIN range ${startDigits}–${endDigits} is not 6 to 8 digits`);
  }
  if (startDigits.length !== endDigits.length) {
    throw new RowRejected(`BIN range ${startDigits}–${endDigits} mixes lengths`);
  }
  const start = Number(startDigits.padEnd(8, '0'));
  const end = Number(endDigits.padEnd(8, '9'));
  if (end < start) throw new RowRejected(`BIN range ${startDigits}–${endDigits} ends before it starts`);
  return { start, end };
}

/**
 * Brands from labels: mapped labels win; labels that map to nothing are counted and, when no
 * label maps, the scheme range table decides (docs/bin-data.md "Normalisation").
 */
function brandsFromLabels(raw: RawRow, report: LabelReport): Brand[] {
  const brands: Brand[] = [];
  const unmapped: string[] = [];
  for (const label of raw.brandLabels) {
    const match = resolveBrandLabel(label);
    if (match.brands.length === 0) {
      unmapped.push(label.trim());
      continue;
    }
    brands.push(...match.brands);
    // "jcb/local": jcb decided; the other part is reported but not for the scheme table.
    for (const part of match.unmappedParts) count(report.unmappedLabels, `brand:${part}`);
  }
  if (brands.length > 0) {
    for (const label of unmapped) count(report.unmappedLabels, `brand:${label}`);
    return orderBrands(brands);
  }
  for (const label of unmapped) count(report.unmappedBrandLabels, label);
  return schemeBrandsFor(raw.startDigits);
}

/** Canonical brands are API names already; anything else is a broken row. */
function canonicalBrands(raw: RawRow): Brand[] {
  for (const label of raw.brandLabels) {
    if (!(BRANDS as readonly string[]).includes(label)) {
      throw new RowRejected(`brand "${label}" is not a brand name of the API`);
    }
  }
  const brands = raw.brandLabels as Brand[];
  return brands.length > 0 ? orderBrands(brands) : schemeBrandsFor(raw.startDigits);
}

function fundingFromLabels(raw: RawRow, report: LabelReport): FundingType | undefined {
  const flag = raw.prepaidLabel === undefined ? undefined : prepaidFlag(raw.prepaidLabel);
  if (raw.prepaidLabel !== undefined && flag === undefined) {
    count(report.unmappedLabels, `prepaid:${raw.prepaidLabel}`);
  }
  if (flag === true || (raw.productLabel !== undefined && productSaysPrepaid(raw.productLabel))) {
    return 'prepaid';
  }
  if (raw.fundingLabel === undefined) return undefined;
  const funding = fundingTypeFor(raw.fundingLabel);
  if (funding === undefined) count(report.unmappedLabels, `funding:${raw.fundingLabel}`);
  return funding;
}

function countryFromLabel(raw: RawRow, report: LabelReport): string | undefined {
  if (raw.countryLabel === undefined || raw.countryLabel.trim() === '') return undefined;
  const code = countryCodeFor(raw.countryLabel);
  if (code === undefined) count(report.unmappedLabels, `country:${raw.countryLabel.trim()}`);
  return code;
}

function canonicalCountry(value: string): string {
  if (!isKnownCountryCode(value)) {
    throw new RowRejected(`country_code "${value}" is not an ISO 3166 alpha-2 code we know`);
  }
  return value;
}

function labelDetails(raw: RawRow, report: LabelReport): RecordDetails {
  const fundingType = fundingFromLabels(raw, report);
  return {
    fundingType,
    countryCode: countryFromLabel(raw, report),
    anonymousPrepaid: fundingType === undefined ? undefined : anonymousPrepaidFor(fundingType),
    category: raw.productLabel === undefined ? undefined : categoryFor(raw.productLabel),
  };
}

function canonicalDetails(canonical: NonNullable<RawRow['canonical']>): RecordDetails {
  return {
    fundingType: checkedEnum(canonical.fundingType, FUNDING_TYPES, 'funding_type'),
    countryCode: canonical.countryCode === undefined ? undefined : canonicalCountry(canonical.countryCode),
    anonymousPrepaid: checkedEnum(canonical.anonymousPrepaid, ANONYMOUS_PREPAID, 'anonymous_prepaid'),
    category: checkedEnum(canonical.category, CATEGORIES, 'category'),
    multipleAccountAccess: checkedEnum(
      canonical.multipleAccountAccess,
      MULTIPLE_ACCOUNT_ACCESS,
      'multiple_account_access',
    ),
  };
}

function cleanIssuerName(name: string | undefined): string | undefined {
  const cleaned = name?.replace(/\s+/g, ' ').trim();
  return cleaned === '' ? undefined : cleaned;
}

/** Copies the defined fields only, so that records compare equal however they were built. */
function withoutUndefined(record: BinRecord): BinRecord {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as BinRecord;
}

/**
 * Turns an importer's row into the range of 8-digit keys and the record that answers it
 * (docs/bin-data.md "Normalisation"), or refuses it. Labels no table knows are counted in `report` and the field is
 * left out rather than guessed.
 *
 * @example normaliseRow({ line: 2, startDigits: '457173', endDigits: '457173',
 *   brandLabels: ['VISA'], fundingLabel: 'DEBIT', countryLabel: 'GB' }, newLabelReport())
 *   // { line: 2, start: 45717300, end: 45717399, record: { type: 'pan', brands: ['visa'],
 *   //   binLength: 6, fundingType: 'debit', countryCode: 'GB', currency: 'GBP',
 *   //   anonymousPrepaid: 'notPrepaidOrNonAnonymous' } }
 */
export function normaliseRow(raw: RawRow, report: LabelReport): SourceRow | Rejection {
  try {
    const { start, end } = checkedRange(raw);
    const canonical = raw.canonical;
    const details = canonical ? canonicalDetails(canonical) : labelDetails(raw, report);
    const brands = canonical ? canonicalBrands(raw) : brandsFromLabels(raw, report);
    const countryCode = details.countryCode;
    const record = withoutUndefined({
      type: checkedEnum(canonical?.type, NUMBER_TYPES, 'number_type') ?? 'pan',
      brands,
      // The row is identified by as many digits as it gives: 6 for whole BINs, 7 or 8 for a
      // narrower row (docs/card-bin.md: `bin` is the leading digits of the most specific row).
      binLength: raw.startDigits.length,
      fundingType: details.fundingType,
      issuerName: cleanIssuerName(raw.issuerName),
      countryCode,
      currency: countryCode === undefined ? undefined : currencyFor(countryCode),
      anonymousPrepaid: details.anonymousPrepaid,
      category: details.category,
      multipleAccountAccess: details.multipleAccountAccess,
    });
    return { line: raw.line, start, end, record };
  } catch (error) {
    if (error instanceof RowRejected) return { line: raw.line, reason: error.message };
    throw error;
  }
}
