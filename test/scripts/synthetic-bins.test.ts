import { describe, expect, it } from 'vitest';
import { buildIndex } from '../../scripts/bin-data/build';
import { CANONICAL_IMPORTER } from '../../scripts/bin-data/importers/canonical';
import { CANONICAL_HEADER, generateSyntheticCsv } from '../../scripts/bench/synthetic-bins';
import { SCHEME_RANGES, schemeBrandsFor } from '../../src/bin/scheme-ranges';

const DEFAULT_ROWS = 400_000;

/** Data lines of a generated CSV (without the header and the final newline). */
function dataLines(csv: string): string[] {
  return csv.trimEnd().split('\n').slice(1);
}

describe('generateSyntheticCsv', () => {
  // One default-size set shared by the tests below: generating it takes about a second.
  const big = generateSyntheticCsv(DEFAULT_ROWS, 1);
  const bigLines = dataLines(big);

  it('gives byte-identical output for the same seed and different output for another', () => {
    expect(generateSyntheticCsv(DEFAULT_ROWS, 1)).toBe(big);
    expect(generateSyntheticCsv(5_000, 7)).toBe(generateSyntheticCsv(5_000, 7));
    expect(generateSyntheticCsv(5_000, 8)).not.toBe(generateSyntheticCsv(5_000, 7));
  });

  it('writes the canonical header and exactly the requested number of rows', () => {
    expect(big.split('\n')[0]).toBe(CANONICAL_HEADER);
    expect(bigLines).toHaveLength(DEFAULT_ROWS);
    for (const rows of [1, 2, 20, 5_000]) expect(dataLines(generateSyntheticCsv(rows, 3))).toHaveLength(rows);
  });

  it('never repeats a (bin_start, bin_end) range', () => {
    const ranges = new Set<string>();
    for (const line of bigLines) {
      const [start = '', end = ''] = line.split(',');
      // An empty end means one BIN, so "411773," and "411773,411773" would be the same range.
      ranges.add(`${start}-${end === '' ? start : end}`);
    }
    expect(ranges.size).toBe(bigLines.length);
  });

  it('has the intended shape: mostly 6-digit BINs, ~5% 8-digit sub-ranges, a few multi-BIN ranges', () => {
    const cells = bigLines.map((l) => l.split(','));
    const eightDigit = cells.filter((c) => c[0]!.length === 8).length;
    const multiBin = cells.filter((c) => c[0]!.length === 6 && c[1] !== '').length;
    expect(eightDigit / DEFAULT_ROWS).toBeCloseTo(0.05, 2);
    expect(multiBin).toBeGreaterThan(0);
    expect(multiBin / DEFAULT_ROWS).toBeLessThan(0.01);
    expect(cells.some((c) => c[2] === 'visa|dankort')).toBe(true);
    expect(new Set(cells.map((c) => c[4])).size).toBeGreaterThan(10_000);
  });

  it("gives every row the scheme table's brands for its digits (plus a domestic co-badge on some)", () => {
    // A BIN holding a narrower 8-digit scheme range (Cabal's 65008700 inside Discover's 650087)
    // belongs to the wider scheme as a whole.
    const split = new Set(SCHEME_RANGES.filter((r) => r.from.length > 6).map((r) => r.from.slice(0, 6)));
    const wrong = bigLines.filter((line) => {
      const [start = '', , brands = ''] = line.split(',');
      if (split.has(start.slice(0, 6))) return false;
      const scheme = schemeBrandsFor(start.slice(0, 6));
      const listed = brands.split('|');
      return (
        listed.slice(0, scheme.length).join('|') !== scheme.join('|') ||
        listed.slice(scheme.length).some((b) => !['cartesBancaires', 'girocard'].includes(b))
      );
    });
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it('is accepted row for row by buildIndex with the canonical importer', () => {
    // A small generated set and an evenly spread 5,000-row sample of the default-size set.
    const sample = bigLines.filter((_, i) => i % (DEFAULT_ROWS / 5_000) === 0);
    for (const csv of [generateSyntheticCsv(5_000, 42), `${CANONICAL_HEADER}\n${sample.join('\n')}\n`]) {
      const result = buildIndex(csv, { importer: CANONICAL_IMPORTER, maxRejectedRatio: 0 });
      expect(result.rejected).toEqual([]);
      expect(result.rows).toHaveLength(5_000);
      expect(result.duplicates + result.coBadged).toBe(0);
      expect(result.verify.failures).toEqual([]);
    }
  });
});
