/**
 * The two naive structures the compact index is compared with. Both are built from the same
 * accepted rows as the index and answer the record of a data row (no scheme-range fallback).
 */
import type { BinRecord } from '../../src/bin/model';
import type { SourceRow } from '../bin-data/source-row';

/**
 * A deep copy of the rows through JSON, as a service loading a JSON table would hold them: every
 * row owns its record object and its strings, so the heap measured around building a baseline
 * includes the records, not just references to the build's objects.
 */
export function ownedRows(rows: readonly SourceRow[]): SourceRow[] {
  return JSON.parse(JSON.stringify(rows)) as SourceRow[];
}

interface KeyedRow {
  /** First 8-digit key, zero-padded, e.g. "41177300". */
  start: string;
  /** Last 8-digit key, inclusive. */
  end: string;
  record: BinRecord;
}

/**
 * Baseline (b): rows sorted by their zero-padded 8-digit start key, binary search comparing
 * `pan.slice(0, 8)` strings, then a check against the found row's end.
 *
 * It only looks at the last row starting at or before the key. Rows with the same start are
 * sorted widest first, so an 8-digit sub-range starting at its BIN's first key wins there; but
 * where a nested row has ended and its enclosing row goes on (key 41177360 with rows 411773 and
 * 41177300–41177349), it answers nothing while the compact index answers the enclosing row.
 * The bench counts those disagreements rather than hiding them.
 */
export class SortedArrayBaseline {
  private readonly rows: KeyedRow[];

  constructor(rows: readonly SourceRow[]) {
    const pad = (n: number): string => String(n).padStart(8, '0');
    this.rows = rows
      .map((r) => ({ start: pad(r.start), end: pad(r.end), record: r.record }))
      .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.end < b.end ? 1 : a.end > b.end ? -1 : 0));
  }

  get size(): number {
    return this.rows.length;
  }

  find(pan: string): BinRecord | undefined {
    const key = pan.slice(0, 8);
    const rows = this.rows;
    let lo = 0;
    let hi = rows.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (rows[mid]!.start <= key) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0) return undefined;
    const row = rows[found]!;
    return row.end >= key ? row.record : undefined;
  }
}

/**
 * Baseline (c): a Map from digit prefix to record. Rows are expanded to 6-digit keys (whole
 * BINs) where they cover whole BINs, and to 8-digit keys for their ragged ends (8-digit
 * sub-ranges); a lookup tries `pan.slice(0, 8)`, then `pan.slice(0, 6)`.
 *
 * Rows are inserted widest first (and, between equally wide rows, the later line first) so that
 * a narrower row overwrites a wider one on the same key: narrowest-wins, earliest line on ties,
 * as in the compact index, except that any 8-digit key beats any 6-digit key (the ragged end of
 * a wide range then beats a narrower BIN row). Those rare cases show up as disagreements.
 */
export class PrefixMapBaseline {
  private readonly map = new Map<string, BinRecord>();

  constructor(rows: readonly SourceRow[]) {
    const byWidth = [...rows].sort((a, b) => b.end - b.start - (a.end - a.start) || b.line - a.line);
    for (const row of byWidth) this.add(row);
  }

  get size(): number {
    return this.map.size;
  }

  private add(row: SourceRow): void {
    let key = row.start;
    const set8 = (k: number): void => void this.map.set(String(k).padStart(8, '0'), row.record);
    // Ragged head: keys up to the first whole BIN.
    while (key <= row.end && key % 100 !== 0) set8(key++);
    // Whole BINs, as 6-digit keys.
    while (key + 99 <= row.end) {
      this.map.set(String(key / 100).padStart(6, '0'), row.record);
      key += 100;
    }
    // Ragged tail.
    while (key <= row.end) set8(key++);
  }

  find(pan: string): BinRecord | undefined {
    return this.map.get(pan.slice(0, 8)) ?? this.map.get(pan.slice(0, 6));
  }
}
