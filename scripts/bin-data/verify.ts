import type { BinIndex } from '../../src/bin/bin-index';
import type { BinRecord } from '../../src/bin/model';
import { recordKey } from './compile';
import { rowPrecedence } from './precedence';
import type { SourceRow } from './source-row';

export interface VerifyFailure {
  line: number;
  key: number;
  expected: BinRecord;
  actual: BinRecord | undefined;
}

export interface VerifyResult {
  checkedRows: number;
  checkedKeys: number;
  /** Rows that a row of their own layer (a narrower one) beats at every checked key. */
  shadowedRows: number;
  /** Per layer (index = layer number): rows checked, and rows another layer beats at every checked key. */
  layers: { checkedRows: number; overriddenRows: number }[];
  failures: VerifyFailure[];
}

/**
 * Checks the compiled index against the rows it was built from, every layer's, with a
 * deliberately naive, independent resolver (rows sorted by start, scanned backwards) rather than
 * the compiler's sweep: at the first, middle and last key of every row, the index must answer the
 * record of the covering row that precedence ranks first, field for field. A row that loses at
 * every checked key is counted as shadowed (by its own layer) or overridden (by another layer):
 * it is still in the data, but its own answer is never given there.
 */
export function verifyIndex(index: BinIndex, rows: readonly SourceRow[], maxFailures = 20): VerifyResult {
  const resolver = new ReferenceResolver(rows);
  const failures: VerifyFailure[] = [];
  let checkedKeys = 0;
  let shadowedRows = 0;
  const layers: VerifyResult['layers'] = [];
  for (const row of rows) {
    const layer = (layers[row.layer ?? 0] ??= { checkedRows: 0, overriddenRows: 0 });
    layer.checkedRows++;
    let wins = 0;
    let beatenByOtherLayer = false;
    for (const key of new Set([row.start, Math.floor((row.start + row.end) / 2), row.end])) {
      checkedKeys++;
      const expected = resolver.resolve(key)!;
      if (expected === row) wins++;
      else if ((expected.layer ?? 0) !== (row.layer ?? 0)) beatenByOtherLayer = true;
      const id = index.findDataRecordId(key);
      const actual = id < 0 ? undefined : index.record(id);
      if (!actual || recordKey(actual) !== recordKey(expected.record)) {
        if (failures.length < maxFailures) failures.push({ line: row.line, key, expected: expected.record, actual });
      }
    }
    if (wins === 0 && beatenByOtherLayer) layer.overriddenRows++;
    else if (wins === 0) shadowedRows++;
  }
  for (let i = 0; i < layers.length; i++) layers[i] ??= { checkedRows: 0, overriddenRows: 0 };
  return { checkedRows: rows.length, checkedKeys, shadowedRows, layers, failures };
}

class ReferenceResolver {
  private readonly rows: SourceRow[];
  /** maxEnd[i]: the largest end among rows[0..i], to stop the backward scan early. */
  private readonly maxEnd: number[];

  constructor(rows: readonly SourceRow[]) {
    this.rows = [...rows].sort((a, b) => a.start - b.start);
    let max = -1;
    this.maxEnd = this.rows.map((r) => (max = Math.max(max, r.end)));
  }

  /** The covering row that precedence ranks first. */
  resolve(key: number): SourceRow | undefined {
    let lo = 0;
    let hi = this.rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid]!.start <= key) lo = mid + 1;
      else hi = mid - 1;
    }
    let best: SourceRow | undefined;
    for (let i = hi; i >= 0 && this.maxEnd[i]! >= key; i--) {
      const r = this.rows[i]!;
      if (r.end < key) continue;
      if (!best || rowPrecedence(r, best) < 0) best = r;
    }
    return best;
  }
}
