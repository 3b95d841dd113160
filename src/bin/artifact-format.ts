/**
 * Binary layout of the compiled BIN index (`data/bin-index.bin`), shared by the reader in the
 * Worker and the builder in `scripts/`. Everything is little-endian and 4-byte aligned so that
 * the reader only makes typed-array views over the ArrayBuffer: no parsing at start-up.
 *
 * ```
 * header       u32[16]                       see HEADER
 * strings      u32[stringCount + 1] offsets, then UTF-8 bytes (issuer names, brand lists)
 * records      u32[recordCount * 4]          see encodeRecordWords
 * data index   range index (below)           ranges from the BIN data rows
 * scheme index range index (below)           IIN ranges of the card schemes, used on a miss
 * ```
 *
 * A range index answers "which record covers this 8-digit key?" (key = the first 8 digits of
 * the card number as an integer, 0–99,999,999). Keys are split into buckets of 65,536 keys by
 * their high bits; each stored range lies inside one bucket, so a range needs only its low
 * 16 bits for start and end, and a record id of 16 bits (24 when there are more than 65,536
 * records): 6 or 7 bytes per range.
 *
 * ```
 * buckets   u32[BUCKET_COUNT + 1]   index of the first range of each bucket
 * starts    u16[n] (padded to 4)    low 16 bits of the first key of each range
 * ends      u16[n] (padded to 4)    low 16 bits of the last key (inclusive)
 * ids       u16[n] (padded to 4)    record id of each range (its low 16 bits)
 * idsHigh   u8[n] (padded to 4)     bits 16–23 of the record id; only when recordIdBytes = 3
 * ```
 */
import {
  ANONYMOUS_PREPAID,
  CATEGORIES,
  FUNDING_TYPES,
  MULTIPLE_ACCOUNT_ACCESS,
  NUMBER_TYPES,
  type BinRecord,
} from './model';

export const MAGIC = 0x31584942; // "BIX1" read as little-endian u32
export const FORMAT_VERSION = 1;
export const KEY_DIGITS = 8;
export const KEY_SPACE = 100_000_000;
export const BUCKET_BITS = 16;
export const BUCKET_SIZE = 1 << BUCKET_BITS;
export const BUCKET_COUNT = Math.ceil(KEY_SPACE / BUCKET_SIZE);
export const RECORD_WORDS = 4;
/** Record ids take 2 bytes up to this many records, 3 bytes beyond (up to 2^24). */
export const MAX_RECORDS_16_BIT = 0x10000;
export const MAX_RECORDS = 0x1000000;
export const NO_RECORD = -1;

/** Word positions in the header. */
export const HEADER = {
  magic: 0,
  version: 1,
  recordCount: 2,
  stringCount: 3,
  dataRangeCount: 4,
  schemeRangeCount: 5,
  stringsOffset: 6,
  stringBytesLength: 7,
  recordsOffset: 8,
  dataIndexOffset: 9,
  schemeIndexOffset: 10,
  recordIdBytes: 11,
  builtAtSeconds: 12,
  sourceRowCount: 13,
  /** String id + 1 of the data version (layers, their SHA-256 prefixes, build time); 0 = none. */
  provenancePlusOne: 14,
  words: 16,
} as const;

/** Typed-array views of one range index section: shared by the reader and the compiler. */
export interface RangeIndexViews {
  readonly count: number;
  readonly buckets: Uint32Array;
  readonly starts: Uint16Array;
  readonly ends: Uint16Array;
  readonly recordIds: Uint16Array;
  /** Bits 16–23 of the record ids, present only with 3-byte ids. */
  readonly recordIdsHigh: Uint8Array | undefined;
}

/** Lays the views of a range index of `count` ranges over the buffer at `offset`. */
export function rangeIndexViews(buffer: ArrayBuffer, offset: number, count: number, idBytes: number): RangeIndexViews {
  const buckets = new Uint32Array(buffer, offset, BUCKET_COUNT + 1);
  let at = offset + (BUCKET_COUNT + 1) * 4;
  const starts = new Uint16Array(buffer, at, count);
  at += align4(count * 2);
  const ends = new Uint16Array(buffer, at, count);
  at += align4(count * 2);
  const recordIds = new Uint16Array(buffer, at, count);
  at += align4(count * 2);
  const recordIdsHigh = idBytes === 3 ? new Uint8Array(buffer, at, count) : undefined;
  return { count, buckets, starts, ends, recordIds, recordIdsHigh };
}

/** Bytes taken by a range index of `n` ranges, with record ids of `idBytes` bytes. */
export function rangeIndexBytes(n: number, idBytes: 2 | 3): number {
  return (BUCKET_COUNT + 1) * 4 + 3 * align4(n * 2) + (idBytes === 3 ? align4(n) : 0);
}

export function align4(n: number): number {
  return (n + 3) & ~3;
}

const UNKNOWN_COUNTRY = 0xffff;
const NO_BRANDS: BinRecord['brands'] = Object.freeze([]);

/**
 * Packs a record's scalar fields into four u32 words; strings are referenced by their id in the
 * string table plus one (0 = absent).
 *
 * - w0: issuer name string id + 1
 * - w1: brand list string id + 1 (brands joined by ",")
 * - w2: country code (two ASCII bytes, 0xFFFF = `unknown`) | currency (3 × 5-bit letters) << 16
 * - w3: fundingType+1 | anonymousPrepaid+1 << 4 | category+1 << 8 | multipleAccountAccess+1 << 12
 *       | type << 16 | binLength << 20
 */
export function encodeRecordWords(
  record: BinRecord,
  stringId: (s: string) => number,
): [number, number, number, number] {
  const w0 = record.issuerName === undefined ? 0 : stringId(record.issuerName) + 1;
  const w1 = record.brands.length === 0 ? 0 : stringId(record.brands.join(',')) + 1;
  let w2 = 0;
  if (record.countryCode !== undefined) {
    w2 =
      record.countryCode === 'unknown'
        ? UNKNOWN_COUNTRY
        : (record.countryCode.charCodeAt(0) << 8) | record.countryCode.charCodeAt(1);
  }
  if (record.currency !== undefined) {
    let c = 0;
    for (let i = 0; i < 3; i++) c = (c << 5) | (record.currency.charCodeAt(i) - 64);
    w2 |= c << 16;
  }
  const w3 =
    enumBits(FUNDING_TYPES, record.fundingType) |
    (enumBits(ANONYMOUS_PREPAID, record.anonymousPrepaid) << 4) |
    (enumBits(CATEGORIES, record.category) << 8) |
    (enumBits(MULTIPLE_ACCOUNT_ACCESS, record.multipleAccountAccess) << 12) |
    (NUMBER_TYPES.indexOf(record.type) << 16) |
    (record.binLength << 20);
  return [w0, w1, w2 >>> 0, w3 >>> 0];
}

/** Inverse of {@link encodeRecordWords}. */
export function decodeRecordWords(
  w0: number,
  w1: number,
  w2: number,
  w3: number,
  stringAt: (id: number) => string,
  brandsAt: (id: number) => BinRecord['brands'] = (id) => stringAt(id).split(',') as BinRecord['brands'],
): BinRecord {
  const record: BinRecord = {
    type: NUMBER_TYPES[(w3 >>> 16) & 0xf] ?? 'pan',
    brands: w1 === 0 ? NO_BRANDS : brandsAt(w1 - 1),
    binLength: (w3 >>> 20) & 0x1f,
  };
  const fundingType = enumValue(FUNDING_TYPES, w3 & 0xf);
  if (fundingType) record.fundingType = fundingType;
  if (w0 !== 0) record.issuerName = stringAt(w0 - 1);
  const country = w2 & 0xffff;
  if (country !== 0) {
    record.countryCode = country === UNKNOWN_COUNTRY ? 'unknown' : String.fromCharCode(country >>> 8, country & 0xff);
  }
  const currency = w2 >>> 16;
  if (currency !== 0) {
    record.currency = String.fromCharCode(
      ((currency >>> 10) & 0x1f) + 64,
      ((currency >>> 5) & 0x1f) + 64,
      (currency & 0x1f) + 64,
    );
  }
  const anonymousPrepaid = enumValue(ANONYMOUS_PREPAID, (w3 >>> 4) & 0xf);
  if (anonymousPrepaid) record.anonymousPrepaid = anonymousPrepaid;
  const category = enumValue(CATEGORIES, (w3 >>> 8) & 0xf);
  if (category) record.category = category;
  const mma = enumValue(MULTIPLE_ACCOUNT_ACCESS, (w3 >>> 12) & 0xf);
  if (mma) record.multipleAccountAccess = mma;
  return record;
}

function enumBits<T extends string>(values: readonly T[], value: T | undefined): number {
  return value === undefined ? 0 : values.indexOf(value) + 1;
}

function enumValue<T extends string>(values: readonly T[], bits: number): T | undefined {
  return bits === 0 ? undefined : values[bits - 1];
}
