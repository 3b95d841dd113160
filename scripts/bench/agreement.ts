import type { BinIndex } from '../../src/bin/bin-index';
import type { BinRecord } from '../../src/bin/model';
import type { PrefixMapBaseline, SortedArrayBaseline } from './baselines';

/** How one baseline's answers differ from the compact index's on the sample. */
export interface Disagreements {
  /** Both found a row, with different brands, issuer or country. */
  differentRecord: number;
  /** The compact index found a data row, the baseline nothing. */
  baselineMissed: number;
  /** The baseline found a row, the compact index no data row. */
  compactMissed: number;
}

export interface Agreement {
  checked: number;
  array: Disagreements;
  map: Disagreements;
}

function sameContent(a: BinRecord, b: BinRecord): boolean {
  return a.brands.join('|') === b.brands.join('|') && a.issuerName === b.issuerName && a.countryCode === b.countryCode;
}

function tally(d: Disagreements, compact: BinRecord | undefined, other: BinRecord | undefined): void {
  if (compact && other) {
    if (!sameContent(compact, other)) d.differentRecord++;
  } else if (compact) {
    d.baselineMissed++;
  } else if (other) {
    d.compactMissed++;
  }
}

/**
 * Compares the answers of the three structures on a sample of PANs. Only data-row answers of
 * the compact index count: its scheme-range fallback has no counterpart in the baselines. The
 * baselines do not share every rule of the index (see baselines.ts: the array misses keys where
 * a nested row has ended inside its enclosing row; the Map lets 8-digit keys beat 6-digit keys),
 * so disagreements are counted and printed, not treated as failures.
 */
export function checkAgreement(
  index: BinIndex,
  array: SortedArrayBaseline,
  map: PrefixMapBaseline,
  pans: readonly string[],
): Agreement {
  const empty = (): Disagreements => ({ differentRecord: 0, baselineMissed: 0, compactMissed: 0 });
  const result: Agreement = { checked: pans.length, array: empty(), map: empty() };
  for (const pan of pans) {
    const match = index.find(pan);
    const compact = match?.source === 'data' ? match.record : undefined;
    tally(result.array, compact, array.find(pan));
    tally(result.map, compact, map.find(pan));
  }
  return result;
}

export function describeDisagreements(d: Disagreements): string {
  const total = d.differentRecord + d.baselineMissed + d.compactMissed;
  return (
    `${total} disagree (${d.differentRecord} different record, ${d.baselineMissed} baseline ` +
    `miss, ${d.compactMissed} compact miss)`
  );
}
