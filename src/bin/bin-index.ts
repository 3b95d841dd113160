import {
  BUCKET_BITS,
  BUCKET_COUNT,
  FORMAT_VERSION,
  HEADER,
  KEY_DIGITS,
  MAGIC,
  NO_RECORD,
  RECORD_WORDS,
  decodeRecordWords,
  rangeIndexViews,
  type RangeIndexViews,
} from './artifact-format';
import type { BinRecord } from './model';

/** One range index section (data rows or scheme IIN ranges) as views over the artifact. */
type RangeIndex = RangeIndexViews;

/** A run of 8-digit keys answered by one record. */
export interface KeySegment {
  start: number;
  end: number;
  recordId: number;
}

/** What {@link BinIndex.find} answers: the matching record and which section it came from. */
export interface BinMatch {
  record: BinRecord;
  /** `data` when a BIN data row matched, `scheme` when only a scheme IIN range did. */
  source: 'data' | 'scheme';
}

/**
 * The compiled BIN index held in memory. Construction only makes typed-array views over the
 * artifact (no copy, no parse), so the index is ready in microseconds. Records are decoded on
 * each lookup from four words (cheap); only their strings are cached once decoded, so memory
 * grows with the distinct issuer names actually seen, not with every record touched.
 *
 * @example
 * ```ts
 * import artifact from '../../data/bin-index.bin';
 * const index = BinIndex.fromArrayBuffer(artifact);
 * index.find('4444333322221111')?.record.brands; // ['visa']
 * ```
 */
export class BinIndex {
  readonly recordCount: number;
  readonly builtAt: Date;
  readonly sourceRowCount: number;
  /**
   * The data version the build stamped in (its layers, their SHA-256 prefixes, the build time),
   * named in every lookup answer; undefined for an artifact built without one.
   */
  readonly dataVersion: string | undefined;
  private readonly stringOffsets: Uint32Array;
  private readonly stringBytes: Uint8Array;
  private readonly records: Uint32Array;
  private readonly data: RangeIndex;
  private readonly scheme: RangeIndex;
  private readonly strings: (string | undefined)[];
  /** Brand lists are few (one per co-badging combination) and read on every lookup. */
  private readonly brandLists = new Map<number, BinRecord['brands']>();
  private readonly utf8 = new TextDecoder();

  private constructor(buffer: ArrayBuffer) {
    if (buffer.byteLength < HEADER.words * 4) throw new Error('BIN index: artifact too short');
    const header = new Uint32Array(buffer, 0, HEADER.words);
    if (header[HEADER.magic] !== MAGIC) throw new Error('BIN index: bad magic number');
    if (header[HEADER.version] !== FORMAT_VERSION) {
      throw new Error(`BIN index: format version ${header[HEADER.version]} is not ${FORMAT_VERSION}`);
    }
    const h = (k: keyof typeof HEADER): number => header[HEADER[k]]!;
    this.recordCount = h('recordCount');
    this.builtAt = new Date(h('builtAtSeconds') * 1000);
    this.sourceRowCount = h('sourceRowCount');
    const idBytes = h('recordIdBytes');
    if (idBytes !== 2 && idBytes !== 3) throw new Error('BIN index: bad record id width');
    const stringCount = h('stringCount');
    this.stringOffsets = new Uint32Array(buffer, h('stringsOffset'), stringCount + 1);
    this.stringBytes = new Uint8Array(buffer, h('stringsOffset') + (stringCount + 1) * 4, h('stringBytesLength'));
    this.records = new Uint32Array(buffer, h('recordsOffset'), this.recordCount * RECORD_WORDS);
    this.data = rangeIndexAt(buffer, h('dataIndexOffset'), h('dataRangeCount'), idBytes);
    this.scheme = rangeIndexAt(buffer, h('schemeIndexOffset'), h('schemeRangeCount'), idBytes);
    this.strings = new Array<string | undefined>(stringCount);
    const provenance = h('provenancePlusOne');
    this.dataVersion = provenance === 0 ? undefined : this.stringAt(provenance - 1);
  }

  /** Wraps a compiled artifact; throws if it is not one. */
  static fromArrayBuffer(buffer: ArrayBuffer): BinIndex {
    return new BinIndex(buffer);
  }

  get dataRangeCount(): number {
    return this.data.count;
  }

  get schemeRangeCount(): number {
    return this.scheme.count;
  }

  /**
   * Finds the record for a card number (digits only, at least 8 digits; shorter numbers are
   * right-padded with zeros). The most specific data row wins; with no data row, a scheme IIN
   * range; with neither, `undefined`.
   */
  find(cardNumber: string): BinMatch | undefined {
    const key = keyOf(cardNumber);
    let id = findRecordId(this.data, key);
    if (id !== NO_RECORD) return { record: this.record(id), source: 'data' };
    id = findRecordId(this.scheme, key);
    if (id !== NO_RECORD) return { record: this.record(id), source: 'scheme' };
    return undefined;
  }

  /** Record id of the data row covering an 8-digit key, or -1. The hot path, exposed for benches. */
  findDataRecordId(key: number): number {
    return findRecordId(this.data, key);
  }

  /** Record id of the scheme range covering an 8-digit key, or -1. */
  findSchemeRecordId(key: number): number {
    return findRecordId(this.scheme, key);
  }

  /**
   * The stored segments of one section that overlap the 8-digit keys `from`–`to` (inclusive), in
   * key order, clipped to that span: what answers each part of a BIN prefix, or of the whole
   * index when diffing two builds. Keys no segment covers are simply not listed.
   */
  *segments(section: 'data' | 'scheme', from = 0, to = 99_999_999): Generator<KeySegment> {
    const index = section === 'data' ? this.data : this.scheme;
    const high = index.recordIdsHigh;
    for (let bucket = from >>> BUCKET_BITS; bucket <= to >>> BUCKET_BITS && bucket < BUCKET_COUNT; bucket++) {
      const base = bucket * 2 ** BUCKET_BITS;
      const last = index.buckets[bucket + 1]!;
      let i = index.buckets[bucket]!;
      if (base < from) {
        // First range of the bucket that ends at or after `from`.
        let hi = last - 1;
        const low = from - base;
        while (i <= hi) {
          const mid = (i + hi) >>> 1;
          if (index.ends[mid]! < low) i = mid + 1;
          else hi = mid - 1;
        }
      }
      for (; i < last; i++) {
        const start = base + index.starts[i]!;
        if (start > to) return;
        const recordId = high === undefined ? index.recordIds[i]! : index.recordIds[i]! | (high[i]! << 16);
        yield { start: Math.max(start, from), end: Math.min(base + index.ends[i]!, to), recordId };
      }
    }
  }

  /** The record with this id, decoded afresh (the caller may keep or change it). */
  record(id: number): BinRecord {
    const w = id * RECORD_WORDS;
    const words = this.records;
    return decodeRecordWords(words[w]!, words[w + 1]!, words[w + 2]!, words[w + 3]!, this.stringAt, this.brandsAt);
  }

  private readonly brandsAt = (id: number): BinRecord['brands'] => {
    let brands = this.brandLists.get(id);
    if (brands === undefined) {
      brands = Object.freeze(this.stringAt(id).split(',')) as BinRecord['brands'];
      this.brandLists.set(id, brands);
    }
    return brands;
  };

  private readonly stringAt = (id: number): string => {
    let s = this.strings[id];
    if (s === undefined) {
      s = this.utf8.decode(this.stringBytes.subarray(this.stringOffsets[id], this.stringOffsets[id + 1]));
      this.strings[id] = s;
    }
    return s;
  };
}

/** The first 8 digits of a card number as an integer (the index key). */
export function keyOf(cardNumber: string): number {
  let key = 0;
  for (let i = 0; i < KEY_DIGITS; i++) {
    const c = cardNumber.charCodeAt(i);
    key = key * 10 + (c >= 48 && c <= 57 ? c - 48 : 0);
  }
  return key;
}

function rangeIndexAt(buffer: ArrayBuffer, offset: number, count: number, idBytes: number): RangeIndex {
  const views = rangeIndexViews(buffer, offset, count, idBytes);
  if (views.buckets[BUCKET_COUNT] !== count) throw new Error('BIN index: bucket table does not match range count');
  return views;
}

function findRecordId(index: RangeIndex, key: number): number {
  const bucket = key >>> BUCKET_BITS;
  if (bucket >= BUCKET_COUNT) return NO_RECORD;
  const low = key & 0xffff;
  const starts = index.starts;
  let lo = index.buckets[bucket]!;
  let hi = index.buckets[bucket + 1]! - 1;
  // Last range in the bucket whose start is <= low.
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= low) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found < 0 || index.ends[found]! < low) return NO_RECORD;
  const high = index.recordIdsHigh;
  return high === undefined ? index.recordIds[found]! : index.recordIds[found]! | (high[found]! << 16);
}
