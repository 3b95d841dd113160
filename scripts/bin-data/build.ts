import { BinIndex } from '../../src/bin/bin-index';
import { compileIndex, type CompileResult } from './compile';
import { mergeSameRangeRows } from './merge';
import { newLabelReport, normaliseRow } from './normalise';
import { readRawRows } from './read-csv';
import { SCHEME_RANGES } from '../../src/bin/scheme-ranges';
import type { Importer, LabelReport, Rejection, SourceRow } from './source-row';
import { verifyIndex, type VerifyResult } from './verify';

/** One source of a layered build, in precedence order (data/bin-source.json). */
export interface LayerInput {
  name: string;
  text: string;
  /** The format; detected from the header when not given. */
  importer?: Importer;
}

/** What the build did with one layer. */
export interface LayerSummary {
  name: string;
  format: string;
  /** CSV records read (one openbiin record may list several ranges). */
  rowsRead: number;
  /** Ranges the records described, before normalisation and merging. */
  rangesRead: number;
  rejected: Rejection[];
  /** Rows accepted after co-badged rows of one range merged. */
  accepted: number;
  /** Accepted rows that answer at least one key of the index. */
  used: number;
  /** Accepted rows that another layer beats at every checked key. */
  overridden: number;
  coBadged: number;
  duplicates: number;
}

export interface BuildResult extends CompileResult {
  /** The first layer's format (the only one for a one-source build). */
  format: string;
  /** CSV records read, all layers. */
  rowsRead: number;
  /** Ranges the records described, all layers. */
  rangesRead: number;
  rows: SourceRow[];
  rejected: Rejection[];
  coBadged: number;
  duplicates: number;
  labels: LabelReport;
  verify: VerifyResult;
  layers: LayerSummary[];
  seconds: number;
}

export class BrokenSourceError extends Error {}

export interface BuildOptions {
  importer?: Importer;
  /** Fail when more than this share of a layer's rows is rejected (a sign of a wrong format). */
  maxRejectedRatio?: number;
  builtAt?: Date;
  /** The data version stamped into the artifact (see scripts/bin-data/layers.ts). */
  provenance?: string;
  progress?: (message: string) => void;
}

/** Builds and verifies the BIN index from one CSV source: {@link buildLayers} with one layer. */
export function buildIndex(csvText: string, options: BuildOptions = {}): BuildResult {
  return buildLayers([{ name: 'source', text: csvText, importer: options.importer }], options);
}

/**
 * Builds and verifies the BIN index from layered CSV sources: read → normalise → merge
 * co-badged rows within each layer → compile across layers by precedence → verify every layer's
 * rows against the compiled index. Throws BrokenSourceError when a source cannot be trusted
 * (unreadable, no rows, too many rejected rows, an override without a reason, or an index that
 * does not answer a row as precedence says it must).
 */
export function buildLayers(inputs: readonly LayerInput[], options: BuildOptions = {}): BuildResult {
  const began = performance.now();
  const progress = options.progress ?? (() => {});
  const labels = newLabelReport();
  const rows: SourceRow[] = [];
  const layers: LayerSummary[] = [];
  const allRejected: Rejection[] = [];
  const named = (input: LayerInput, message: string): string =>
    inputs.length > 1 ? `layer ${input.name}: ${message}` : message;

  inputs.forEach((input, layer) => {
    let read: ReturnType<typeof readRawRows>;
    try {
      read = readRawRows(input.text, input.importer);
    } catch (e) {
      throw new BrokenSourceError(named(input, (e as Error).message));
    }
    const isOverrides = read.importer.name === 'overrides';
    progress(named(input, `read ${read.recordCount} records (${read.rows.length} ranges) as ${read.importer.name}`));
    const rejected: Rejection[] = [...read.rejected];
    const accepted: SourceRow[] = [];
    read.rows.forEach((raw, i) => {
      const row = normaliseRow(raw, labels);
      if ('reason' in row) rejected.push(row);
      else accepted.push({ ...row, layer, override: isOverrides });
      if ((i + 1) % 100_000 === 0) progress(named(input, `normalised ${i + 1} / ${read.rows.length} rows`));
    });
    const merged = mergeSameRangeRows(accepted);
    rejected.push(...merged.rejected);
    rejected.sort((a, b) => a.line - b.line);

    // A correction nobody can justify, or that does not parse, must not ship half-applied.
    const maxRatio = isOverrides ? 0 : (options.maxRejectedRatio ?? 0.05);
    if (merged.rows.length === 0 && !isOverrides) {
      throw new BrokenSourceError(named(input, `no usable rows (${describe(rejected)})`));
    }
    if (rejected.length > read.recordCount * maxRatio) {
      throw new BrokenSourceError(
        named(
          input,
          `${rejected.length} of ${read.recordCount} rows rejected (over ${maxRatio * 100}%): ${describe(rejected)}`,
        ),
      );
    }
    // A loop, not push(...rows): a spread of 375k rows overflows the call stack.
    for (const row of merged.rows) rows.push(row);
    for (const r of rejected) allRejected.push(r);
    layers.push({
      name: input.name,
      format: read.importer.name,
      rowsRead: read.recordCount,
      rangesRead: read.rows.length,
      rejected,
      accepted: merged.rows.length,
      used: 0,
      overridden: 0,
      coBadged: merged.coBadged,
      duplicates: merged.duplicates,
    });
  });
  if (rows.length === 0) throw new BrokenSourceError('no usable rows in any layer');

  progress(`compiling ${rows.length} rows`);
  const compiled = compileIndex(rows, SCHEME_RANGES, { builtAt: options.builtAt, provenance: options.provenance });
  progress(`verifying ${rows.length} rows against the compiled index`);
  const verify = verifyIndex(BinIndex.fromArrayBuffer(compiled.artifact), rows);
  if (verify.failures.length > 0) {
    const f = verify.failures[0]!;
    throw new BrokenSourceError(
      `${verify.failures.length} row(s) not answered as written; first: line ${f.line} at key ${f.key}: ` +
        `expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)}`,
    );
  }
  rows.forEach((row, i) => {
    if (compiled.rowUsed[i]) layers[row.layer ?? 0]!.used++;
  });
  verify.layers.forEach((l, i) => (layers[i]!.overridden = l.overriddenRows));

  const sum = (pick: (l: LayerSummary) => number): number => layers.reduce((n, l) => n + pick(l), 0);
  return {
    ...compiled,
    format: layers[0]!.format,
    rowsRead: sum((l) => l.rowsRead),
    rangesRead: sum((l) => l.rangesRead),
    rows,
    rejected: allRejected,
    coBadged: sum((l) => l.coBadged),
    duplicates: sum((l) => l.duplicates),
    labels,
    verify,
    layers,
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
