import { orderBrands } from '../../src/bin/model';
import { recordKey } from './compile';
import type { Rejection, SourceRow } from './source-row';

export interface MergeResult {
  rows: SourceRow[];
  rejected: Rejection[];
  /** Rows folded into an earlier row of the same range as a co-badged brand. */
  coBadged: number;
  /** Rows identical to an earlier row (same range, same answer): dropped silently. */
  duplicates: number;
}

/**
 * Folds rows that cover the same range within one layer (docs/bin-data.md "Layers and precedence": "co-badged rows merge
 * their brands"); rows of different layers never merge, precedence decides between them.
 * Rows that agree on everything but the brand become one co-badged row; a row that contradicts
 * an earlier row of the same range on anything else is rejected, so that every accepted row is
 * answered exactly as it says.
 */
export function mergeSameRangeRows(rows: readonly SourceRow[]): MergeResult {
  const byRange = new Map<string, SourceRow>();
  const rejected: Rejection[] = [];
  let coBadged = 0;
  let duplicates = 0;
  for (const row of rows) {
    const rangeKey = `${row.layer ?? 0}:${row.start}-${row.end}`;
    const first = byRange.get(rangeKey);
    if (!first) {
      byRange.set(rangeKey, { ...row, record: { ...row.record } });
      continue;
    }
    if (recordKey({ ...first.record, brands: [] }) !== recordKey({ ...row.record, brands: [] })) {
      rejected.push({ line: row.line, reason: `contradicts line ${first.line} for the same range` });
      continue;
    }
    const brands = orderBrands([...first.record.brands, ...row.record.brands]);
    if (brands.length === first.record.brands.length) duplicates++;
    else coBadged++;
    first.record.brands = brands;
  }
  return { rows: [...byRange.values()], rejected, coBadged, duplicates };
}
