import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BinIndex } from '../../src/bin/bin-index';
import type { BinRecord } from '../../src/bin/model';
import { compileIndex } from '../../scripts/bin-data/compile';
import { mergeSameRangeRows } from '../../scripts/bin-data/merge';
import type { SourceRow } from '../../scripts/bin-data/source-row';
import { verifyIndex } from '../../scripts/bin-data/verify';

function record(issuerName: string, extra: Partial<BinRecord> = {}): BinRecord {
  return { type: 'pan', brands: ['visa'], binLength: 6, issuerName, countryCode: 'GB', currency: 'GBP', ...extra };
}

function bin6(line: number, bin: string, r: BinRecord): SourceRow {
  return { line, start: Number(`${bin}00`), end: Number(`${bin}99`), record: r };
}

function build(rows: SourceRow[]): BinIndex {
  return BinIndex.fromArrayBuffer(compileIndex(rows, [{ from: '4', to: '4', brands: ['visa'] }]).artifact);
}

describe('compileIndex', () => {
  it('answers an 8-digit row over the 6-digit BIN that contains it, and the BIN around it', () => {
    const index = build([
      bin6(2, '412345', record('Six')),
      { line: 3, start: 41234550, end: 41234550, record: record('Eight', { binLength: 8 }) },
    ]);
    expect(index.find('4123455000000000')?.record.issuerName).toBe('Eight');
    expect(index.find('4123454900000000')?.record.issuerName).toBe('Six');
    expect(index.find('4123455100000000')?.record.issuerName).toBe('Six');
  });

  it('falls back to the scheme table outside the data rows, and to nothing outside both', () => {
    const index = build([bin6(2, '412345', record('Six'))]);
    expect(index.find('4999990000000000')).toMatchObject({ source: 'scheme', record: { brands: ['visa'] } });
    expect(index.find('5999990000000000')).toBeUndefined();
  });

  it('keeps equally narrow overlapping rows in source order: the earlier line wins', () => {
    const index = build([
      { line: 2, start: 41000000, end: 41000199, record: record('First') },
      { line: 3, start: 41000100, end: 41000299, record: record('Second') },
    ]);
    expect(index.find('4100015000000000')?.record.issuerName).toBe('First');
    expect(index.find('4100025000000000')?.record.issuerName).toBe('Second');
  });

  it('joins consecutive BINs of one issuer into one stored range', () => {
    const rows = ['412345', '412346', '412347'].map((b, i) => bin6(i + 2, b, record('Same')));
    expect(compileIndex(rows, []).dataRangeCount).toBe(1);
  });

  it('splits a range that crosses a 65,536-key bucket so every key still answers', () => {
    const index = build([{ line: 2, start: 65_530, end: 65_545, record: record('Across') }]);
    for (const key of [65_530, 65_535, 65_536, 65_545]) {
      expect(index.record(index.findDataRecordId(key)).issuerName).toBe('Across');
    }
    expect(index.findDataRecordId(65_546)).toBe(-1);
  });

  it('widens record ids to 3 bytes past 65,536 records and still answers every range', () => {
    const rows = Array.from({ length: 70_000 }, (_, i) => bin6(i + 2, String(400_000 + i), record(`Issuer ${i}`)));
    const result = compileIndex(rows, []);
    expect(result.recordCount).toBe(70_000);
    expect(result.dataIndexBytes / result.dataRangeCount).toBeLessThan(7.2);
    const index = BinIndex.fromArrayBuffer(result.artifact);
    for (const i of [0, 65_535, 65_536, 69_999]) {
      expect(index.find(`${400_000 + i}0000000000`)?.record.issuerName).toBe(`Issuer ${i}`);
    }
  });

  it('deduplicates records shared by many ranges', () => {
    const rows = ['412345', '512345', '612345'].map((b, i) => bin6(i + 2, b, record('Same')));
    expect(compileIndex(rows, []).recordCount).toBe(1);
  });

  it('matches a naive resolver at every key, for any set of rows (property)', () => {
    const rowArb = fc.record({
      start: fc.integer({ min: 0, max: 3_000 }),
      width: fc.oneof(fc.constant(1), fc.constant(100), fc.integer({ min: 1, max: 700 })),
      issuer: fc.constantFrom('A', 'B', 'C', 'D'),
    });
    fc.assert(
      fc.property(fc.array(rowArb, { minLength: 1, maxLength: 40 }), (specs) => {
        const rows = mergeSameRangeRows(
          specs.map((s, i) => ({
            line: i + 2,
            start: 41_000_000 + s.start,
            end: 41_000_000 + s.start + s.width - 1,
            record: record(s.issuer),
          })),
        ).rows;
        const index = build(rows);
        for (let key = 41_000_000; key < 41_003_800; key += 7) {
          const covering = rows.filter((r) => r.start <= key && key <= r.end);
          covering.sort((a, b) => a.end - a.start - (b.end - b.start) || a.line - b.line);
          const id = index.findDataRecordId(key);
          expect(id === -1 ? undefined : index.record(id).issuerName).toBe(covering[0]?.record.issuerName);
        }
        expect(verifyIndex(index, rows).failures).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});

describe('mergeSameRangeRows', () => {
  it('merges co-badged rows of the same range, international scheme first', () => {
    const result = mergeSameRangeRows([
      bin6(2, '457100', record('Bank', { brands: ['dankort'] })),
      bin6(3, '457100', record('Bank', { brands: ['visa'] })),
    ]);
    expect(result.rows).toHaveLength(1);
    expect(result.rows[0]!.record.brands).toEqual(['visa', 'dankort']);
    expect(result.coBadged).toBe(1);
  });

  it('rejects a row that contradicts an earlier row of the same range, with its line', () => {
    const result = mergeSameRangeRows([bin6(2, '457100', record('Bank A')), bin6(7, '457100', record('Bank B'))]);
    expect(result.rows).toHaveLength(1);
    expect(result.rejected).toEqual([{ line: 7, reason: 'contradicts line 2 for the same range' }]);
  });
});

describe('verifyIndex', () => {
  it('reports a row that the compiled index does not answer as written', () => {
    const rows = [bin6(2, '412345', record('Right'))];
    const artifact = compileIndex(rows, []).artifact;
    const wrong = compileIndex([bin6(2, '412345', record('Wrong'))], []).artifact;
    expect(verifyIndex(BinIndex.fromArrayBuffer(artifact), rows).failures).toEqual([]);
    const failures = verifyIndex(BinIndex.fromArrayBuffer(wrong), rows).failures;
    expect(failures.map((f) => [f.line, f.actual?.issuerName])).toEqual([
      [2, 'Wrong'],
      [2, 'Wrong'],
      [2, 'Wrong'],
    ]);
  });
});
