import { BinIndex } from '../../src/bin/bin-index';
import { compileIndex, type CompileResult } from './compile';
import { mergeSameRangeRows } from './merge';
import { newLabelReport, normaliseRow } from './normalise';
import { readRawRows } from './read-csv';
import { SCHEME_RANGES } from './scheme-ranges';
import type { Importer, LabelReport, Rejection, SourceRow } from './source-row';
import { verifyIndex, type VerifyResult } from './verify';

export interface BuildResult extends CompileResult {
  format: string;
  /** CSV records read (one openbiin record may list several ranges). */
  rowsRead: number;
  /** Ranges the records described, before normalisation and merging. */
  rangesRead: number;
  rows: SourceRow[];
  rejected: Rejection[];
  coBadged: number;
  duplicates: number;
  labels: LabelReport;
  verify: VerifyResult;
  seconds: number;
}

export class BrokenSourceError extends Error {}

export interface BuildOptions {
  importer?: Importer;
  /** Fail when more than this share of the rows is rejected (a sign of a wrong format). */
  maxRejectedRatio?: number;
  builtAt?: Date;
  progress?: (message: string) => void;
}

/**
 * Builds and verifies the BIN index from one CSV source: read → normalise → merge co-badged
 * rows → compile → verify against the rows. Throws BrokenSourceError when the source cannot be
 * trusted (unreadable, no rows, too many rejected rows, or an index that does not answer a row
 * as the row says).
 */
export function buildIndex(csvText: string, options: BuildOptions = {}): BuildResult {
  const began = performance.now();
  const progress = options.progress ?? (() => {});
  let read: ReturnType<typeof readRawRows>;
  try {
    read = readRawRows(csvText, options.importer);
  } catch (e) {
    throw new BrokenSourceError((e as Error).message);
  }
  const rowsRead = read.recordCount;
  progress(`read ${rowsRead} records (${read.rows.length} ranges) as ${read.importer.name}`);

  const labels = newLabelReport();
  const rejected: Rejection[] = [...read.rejected];
  const accepted: SourceRow[] = [];
  read.rows.forEach((raw, i) => {
    const row = normaliseRow(raw, labels);
    if ('reason' in row) rejected.push(row);
    else accepted.push(row);
    if ((i + 1) % 100_000 === 0) progress(`normalised ${i + 1} / ${read.rows.length} rows`);
  });
  const merged = mergeSameRangeRows(accepted);
  rejected.push(...merged.rejected);
  rejected.sort((a, b) => a.line - b.line);

  const maxRatio = options.maxRejectedRatio ?? 0.05;
  if (merged.rows.length === 0) throw new BrokenSourceError(`no usable rows (${describe(rejected)})`);
  if (rejected.length > rowsRead * maxRatio) {
    throw new BrokenSourceError(
      `${rejected.length} of ${rowsRead} rows rejected (over ${maxRatio * 100}%): ${describe(rejected)}`,
    );
  }

  progress(`compiling ${merged.rows.length} rows`);
  const compiled = compileIndex(merged.rows, SCHEME_RANGES, options.builtAt);
  progress(`verifying ${merged.rows.length} rows against the compiled index`);
  const verify = verifyIndex(BinIndex.fromArrayBuffer(compiled.artifact), merged.rows);
  if (verify.failures.length > 0) {
    const f = verify.failures[0]!;
    throw new BrokenSourceError(
      `${verify.failures.length} row(s) not answered as written; first: line ${f.line} at key ${f.key}: ` +
        `expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)}`,
    );
  }
  return {
    ...compiled,
    format: read.importer.name,
    rowsRead,
    rangesRead: read.rows.length,
    rows: merged.rows,
    rejected,
    coBadged: merged.coBadged,
    duplicates: merged.duplicates,
    labels,
    verify,
    seconds: (performance.now() - began) / 1000,
  };
}

/** The first rejections with their line numbers, for error messages and the summary. */
export function describe(rejected: readonly Rejection[], max = 10): string {
  if (rejected.length === 0) return 'none rejected';
  const shown = rejected
    .slice(0, max)
    .map((r) => `line ${r.line}: ${r.reason}`)
    .join('; ');
  return rejected.length > max ? `${shown}; … ${rejected.length - max} more` : shown;
}
