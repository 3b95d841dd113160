import type { BinRecord } from '../../src/bin/model';

/**
 * One row of a BIN source as an importer reads it: digits checked, labels still as the source
 * wrote them. The normaliser turns it into a {@link SourceRow} or rejects it.
 */
export interface RawRow {
  /** 1-based line number in the source file (header = line 1). */
  line: number;
  /** First BIN of the range: 6 to 8 digits. */
  startDigits: string;
  /** Last BIN of the range (inclusive), same length as startDigits; equal to it for one BIN. */
  endDigits: string;
  /** Scheme / brand labels as written ("VISA", "Visa/Dankort", "jcb/rupay", "AMERICAN EXPRESS"). */
  brandLabels: string[];
  /** Funding label ("CREDIT", "debit", "Charge Card", "prepaid"...). */
  fundingLabel?: string;
  /** Whether the source marks the range as prepaid ("Y", "true"...). */
  prepaidLabel?: string;
  /** Product / level / category label ("CLASSIC", "BUSINESS", "PURCHASING"...). */
  productLabel?: string;
  issuerName?: string;
  /** Country as written: alpha-2 preferred; alpha-3 or names are tolerated by the normaliser. */
  countryLabel?: string;
  /** Canonical format only: fields already in API vocabulary. */
  canonical?: {
    type?: string;
    anonymousPrepaid?: string;
    category?: string;
    multipleAccountAccess?: string;
    fundingType?: string;
    countryCode?: string;
  };
}

/** A normalised, accepted row: a range of 8-digit keys and the record that answers it. */
export interface SourceRow {
  line: number;
  /** First 8-digit key covered (a 6-digit BIN 123456 starts at 12345600). */
  start: number;
  /** Last 8-digit key covered, inclusive (a 6-digit BIN 123456 ends at 12345699). */
  end: number;
  record: BinRecord;
  /** Position of the row's source in data/bin-source.json's layers (0 = first); 0 for one source. */
  layer?: number;
  /** Whether the row comes from an overrides layer, which beats every source at its keys. */
  override?: boolean;
}

/** A row the build refused, with the reason, reported with its line number. */
export interface Rejection {
  line: number;
  reason: string;
}

/** Labels the normaliser could not map: counted and reported in the build summary. */
export interface LabelReport {
  /** Brand labels that mapped to no brand (the scheme table decided), with their counts. */
  unmappedBrandLabels: Map<string, number>;
  /** Other unmapped labels (funding, country, product), keyed "field:label". */
  unmappedLabels: Map<string, number>;
}

/**
 * A source format: knows its header and turns one CSV record (cells keyed by header name) into
 * a RawRow (several when one record lists several ranges, as openbiin's "40-45|51-53" does), or
 * a rejection reason string for a row whose BIN cells are broken.
 */
export interface Importer {
  /** Name used with `--format` (binlist, venelinkochev, iannuttall, openbiin, canonical, overrides). */
  name: string;
  /** Header names that must all be present (compared case-insensitively) for this format. */
  requiredColumns: readonly string[];
  mapRow(cells: Readonly<Record<string, string>>, line: number): RawRow | RawRow[] | string;
}

export type { SchemeRange } from '../../src/bin/scheme-ranges';
