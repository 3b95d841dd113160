import type { SourceRow } from './source-row';

/**
 * Which of two rows covering the same key answers it (data/bin-source.json's layers,
 * docs/bin-data.md "Layers and precedence"), as a comparator: negative when `a` wins.
 *
 * 1. A row of an overrides layer beats every source row: a reviewed correction is final.
 * 2. The more specific row wins: 8 digits beat 7 beat 6, whatever layer it comes from.
 * 3. At equal specificity the earlier layer wins.
 * 4. Within a layer, the narrower range wins (a BIN beats a range of BINs around it), then the
 *    earlier line.
 *
 * The compiler's sweep and the verifier's naive resolver both rank rows with this one rule.
 */
export function rowPrecedence(a: SourceRow, b: SourceRow): number {
  return (
    Number(b.override ?? false) - Number(a.override ?? false) ||
    b.record.binLength - a.record.binLength ||
    (a.layer ?? 0) - (b.layer ?? 0) ||
    a.end - a.start - (b.end - b.start) ||
    a.line - b.line
  );
}
