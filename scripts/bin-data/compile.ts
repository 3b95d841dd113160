/**
 * Compiles accepted BIN rows and the scheme IIN table into the binary artifact described in
 * src/bin/artifact-format.ts.
 *
 * Overlaps are resolved once, here, so that the reader stays a plain binary search: at every
 * key the covering row that {@link rowPrecedence} ranks first answers (an override, then the
 * most specific row, then the earliest layer, then the narrowest range and the earliest line).
 * Among scheme ranges the narrowest wins.
 */
import {
  BUCKET_BITS,
  BUCKET_COUNT,
  BUCKET_SIZE,
  FORMAT_VERSION,
  HEADER,
  MAGIC,
  MAX_RECORDS,
  MAX_RECORDS_16_BIT,
  RECORD_WORDS,
  align4,
  encodeRecordWords,
  rangeIndexBytes,
  rangeIndexViews,
} from '../../src/bin/artifact-format';
import type { BinRecord } from '../../src/bin/model';
import { rowPrecedence } from './precedence';
import type { SchemeRange, SourceRow } from './source-row';

/** A flattened, non-overlapping range of keys and the record id answering it. */
export interface Segment {
  start: number;
  end: number;
  recordId: number;
}

export interface CompileResult {
  artifact: ArrayBuffer;
  recordCount: number;
  dataRangeCount: number;
  schemeRangeCount: number;
  stringCount: number;
  /** Bytes of the data range index alone (buckets, starts, ends, record ids). */
  dataIndexBytes: number;
  /** Bytes of the record table plus the string table. */
  recordTableBytes: number;
  /** For each input row (same order), whether it answers at least one key of the index. */
  rowUsed: boolean[];
}

export interface CompileOptions {
  /** Stamped into the header; defaults to now. */
  builtAt?: Date;
  /** The data version string (sources and their hashes) the Worker names in its answers. */
  provenance?: string;
}

/** Canonical key of a record, used to deduplicate the record table. */
export function recordKey(r: BinRecord): string {
  return JSON.stringify([
    r.type,
    r.brands,
    r.binLength,
    r.fundingType,
    r.issuerName,
    r.countryCode,
    r.currency,
    r.anonymousPrepaid,
    r.category,
    r.multipleAccountAccess,
  ]);
}

/** The record answered where only a scheme IIN range matches (docs/card-bin.md "The answer"). */
export function schemeRecord(brands: BinRecord['brands']): BinRecord {
  return {
    type: 'pan',
    brands,
    binLength: 6,
    fundingType: 'unknown',
    anonymousPrepaid: 'unknown',
    countryCode: 'unknown',
  };
}

/** The 8-digit key range covered by a scheme range's digit prefixes. */
export function schemeKeyRange(range: SchemeRange): { start: number; end: number } {
  return {
    start: Number(range.from.padEnd(8, '0')),
    end: Number(range.to.padEnd(8, '9')),
  };
}

/**
 * Builds the artifact. `rows` must already be accepted and merged (no two rows of one layer with
 * the same start and end).
 */
export function compileIndex(
  rows: readonly SourceRow[],
  schemeRanges: readonly SchemeRange[],
  options: CompileOptions = {},
): CompileResult {
  const records = new RecordTable();
  const rowIndex = new Map<SourceRow, number>(rows.map((r, i) => [r, i]));
  const rowUsed = rows.map(() => false);
  const dataSegments = flatten(rows, rowPrecedence).map(({ start, end, winner }) => {
    rowUsed[rowIndex.get(winner)!] = true;
    return { start, end, recordId: records.idOf(winner.record) };
  });
  const schemes = schemeRanges.map((s, i) => ({ ...schemeKeyRange(s), order: i, brands: s.brands }));
  const schemeSegments = flatten(schemes, (a, b) => a.end - a.start - (b.end - b.start) || a.order - b.order).map(
    ({ start, end, winner }) => ({ start, end, recordId: records.idOf(schemeRecord(winner.brands)) }),
  );
  const provenanceId = options.provenance === undefined ? -1 : records.strings.idOf(options.provenance);
  const data = splitAtBuckets(mergeAdjacent(dataSegments));
  const scheme = splitAtBuckets(mergeAdjacent(schemeSegments));
  if (records.count > MAX_RECORDS)
    throw new Error(`${records.count} distinct records: the format holds ${MAX_RECORDS}`);
  const idBytes: 2 | 3 = records.count <= MAX_RECORDS_16_BIT ? 2 : 3;

  const strings = records.strings.encode();
  const stringsBytes = (strings.count + 1) * 4 + align4(strings.bytes.length);
  const recordsBytes = records.count * RECORD_WORDS * 4;
  const headerBytes = HEADER.words * 4;
  const stringsOffset = headerBytes;
  const recordsOffset = stringsOffset + stringsBytes;
  const dataIndexOffset = recordsOffset + recordsBytes;
  const schemeIndexOffset = dataIndexOffset + rangeIndexBytes(data.length, idBytes);
  const total = schemeIndexOffset + rangeIndexBytes(scheme.length, idBytes);

  const buffer = new ArrayBuffer(total);
  const header = new Uint32Array(buffer, 0, HEADER.words);
  header[HEADER.magic] = MAGIC;
  header[HEADER.version] = FORMAT_VERSION;
  header[HEADER.recordCount] = records.count;
  header[HEADER.stringCount] = strings.count;
  header[HEADER.dataRangeCount] = data.length;
  header[HEADER.schemeRangeCount] = scheme.length;
  header[HEADER.stringsOffset] = stringsOffset;
  header[HEADER.stringBytesLength] = strings.bytes.length;
  header[HEADER.recordsOffset] = recordsOffset;
  header[HEADER.dataIndexOffset] = dataIndexOffset;
  header[HEADER.schemeIndexOffset] = schemeIndexOffset;
  header[HEADER.recordIdBytes] = idBytes;
  header[HEADER.builtAtSeconds] = Math.floor((options.builtAt ?? new Date()).getTime() / 1000);
  header[HEADER.provenancePlusOne] = provenanceId + 1;
  header[HEADER.sourceRowCount] = rows.length;

  new Uint32Array(buffer, stringsOffset, strings.count + 1).set(strings.offsets);
  new Uint8Array(buffer, stringsOffset + (strings.count + 1) * 4, strings.bytes.length).set(strings.bytes);
  new Uint32Array(buffer, recordsOffset, records.count * RECORD_WORDS).set(records.words);
  writeRangeIndex(buffer, dataIndexOffset, data, idBytes);
  writeRangeIndex(buffer, schemeIndexOffset, scheme, idBytes);

  return {
    artifact: buffer,
    recordCount: records.count,
    dataRangeCount: data.length,
    schemeRangeCount: scheme.length,
    stringCount: strings.count,
    dataIndexBytes: rangeIndexBytes(data.length, idBytes),
    recordTableBytes: stringsBytes + recordsBytes,
    rowUsed,
  };
}

/**
 * Sweeps overlapping intervals into non-overlapping segments, each answered by the covering
 * interval that `precedes` ranks first (negative: the first argument wins). A min-heap on that
 * order holds the intervals open at the sweep position; expired ones are dropped lazily when
 * they reach the top.
 */
export function flatten<T extends { start: number; end: number }>(
  intervals: readonly T[],
  precedes: (a: T, b: T) => number,
): { start: number; end: number; winner: T }[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const points = [...new Set(sorted.flatMap((i) => [i.start, i.end + 1]))].sort((a, b) => a - b);
  const heap = new MinHeap<T>(precedes);
  const segments: { start: number; end: number; winner: T }[] = [];
  let next = 0;
  for (let p = 0; p < points.length - 1; p++) {
    const at = points[p]!;
    while (next < sorted.length && sorted[next]!.start === at) heap.push(sorted[next++]!);
    while (heap.size > 0 && heap.peek()!.end < at) heap.pop();
    const top = heap.peek();
    if (top) segments.push({ start: at, end: points[p + 1]! - 1, winner: top });
  }
  return segments;
}

/** Joins touching segments that answer the same record (consecutive BINs of one issuer). */
function mergeAdjacent(segments: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (last && last.recordId === s.recordId && last.end + 1 === s.start) last.end = s.end;
    else out.push({ ...s });
  }
  return out;
}

/** Cuts segments at bucket boundaries so each stored range fits its bucket's 16-bit offsets. */
function splitAtBuckets(segments: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    let start = s.start;
    while (start >>> BUCKET_BITS !== s.end >>> BUCKET_BITS) {
      const bucketEnd = ((start >>> BUCKET_BITS) + 1) * BUCKET_SIZE - 1;
      out.push({ start, end: bucketEnd, recordId: s.recordId });
      start = bucketEnd + 1;
    }
    out.push({ start, end: s.end, recordId: s.recordId });
  }
  return out;
}

function writeRangeIndex(buffer: ArrayBuffer, offset: number, ranges: readonly Segment[], idBytes: 2 | 3): void {
  const n = ranges.length;
  const { buckets, starts, ends, recordIds: ids, recordIdsHigh: idsHigh } = rangeIndexViews(buffer, offset, n, idBytes);
  let bucket = 0;
  for (let i = 0; i < n; i++) {
    const r = ranges[i]!;
    const b = r.start >>> BUCKET_BITS;
    while (bucket <= b) buckets[bucket++] = i;
    starts[i] = r.start & 0xffff;
    ends[i] = r.end & 0xffff;
    ids[i] = r.recordId & 0xffff;
    if (idsHigh) idsHigh[i] = r.recordId >>> 16;
  }
  while (bucket <= BUCKET_COUNT) buckets[bucket++] = n;
}

/** Deduplicated records and the strings they reference. */
class RecordTable {
  readonly strings = new StringTable();
  readonly words: number[] = [];
  private readonly ids = new Map<string, number>();

  get count(): number {
    return this.ids.size;
  }

  idOf(record: BinRecord): number {
    const key = recordKey(record);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
      this.words.push(...encodeRecordWords(record, (s) => this.strings.idOf(s)));
    }
    return id;
  }
}

class StringTable {
  private readonly ids = new Map<string, number>();

  idOf(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(s, id);
    }
    return id;
  }

  encode(): { count: number; offsets: Uint32Array; bytes: Uint8Array } {
    const utf8 = new TextEncoder();
    const encoded = [...this.ids.keys()].map((s) => utf8.encode(s));
    const offsets = new Uint32Array(encoded.length + 1);
    let total = 0;
    encoded.forEach((e, i) => {
      offsets[i] = total;
      total += e.length;
    });
    offsets[encoded.length] = total;
    const bytes = new Uint8Array(total);
    encoded.forEach((e, i) => bytes.set(e, offsets[i]));
    return { count: encoded.length, offsets, bytes };
  }
}

class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.less(a[i]!, a[parent]!) >= 0) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!) < 0) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}
