/**
 * The timed lookup loops, one function per structure: a shared loop calling a function argument
 * would see every structure at one call site and stop inlining after the first, penalising the
 * structures timed later. Each loop returns a checksum of what it found.
 */
import { keyOf, type BinIndex } from '../../src/bin/bin-index';
import type { PrefixMapBaseline, SortedArrayBaseline } from './baselines';

/** `index.find(pan)`: key, data search, scheme search on a miss, record decode (strings cached). */
export function compactFindLoop(index: BinIndex): (pans: readonly string[]) => number {
  return (pans) => {
    let sum = 0;
    for (let i = 0; i < pans.length; i++) {
      const match = index.find(pans[i]!);
      if (match !== undefined) sum += match.record.binLength;
    }
    return sum;
  };
}

/** The hot path alone: 8-digit key and data range search to a record id, no record. */
export function compactRawLoop(index: BinIndex): (pans: readonly string[]) => number {
  return (pans) => {
    let sum = 0;
    for (let i = 0; i < pans.length; i++) sum += index.findDataRecordId(keyOf(pans[i]!));
    return sum;
  };
}

export function arrayLoop(baseline: SortedArrayBaseline): (pans: readonly string[]) => number {
  return (pans) => {
    let sum = 0;
    for (let i = 0; i < pans.length; i++) {
      const record = baseline.find(pans[i]!);
      if (record !== undefined) sum += record.binLength;
    }
    return sum;
  };
}

export function mapLoop(baseline: PrefixMapBaseline): (pans: readonly string[]) => number {
  return (pans) => {
    let sum = 0;
    for (let i = 0; i < pans.length; i++) {
      const record = baseline.find(pans[i]!);
      if (record !== undefined) sum += record.binLength;
    }
    return sum;
  };
}
