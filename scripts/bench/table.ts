/** The bench report: one markdown table, the targets with PASS/FAIL, the agreement check. */
import { BUCKET_COUNT } from '../../src/bin/artifact-format';
import { describeDisagreements } from './agreement';
import type { MemoryDelta } from './measure';
import type { DatasetResult, StructureResult } from './run-dataset';

const GZIP_TARGET_BYTES = 1_500_000;
const READY_TARGET_MS = 5;
const BYTES_PER_RANGE_TARGET = 8;
const LOOKUP_RATIO_TARGET = 0.5;
const MEMORY_RATIO_TARGET = 0.2;
/** Fixed size of one range index's bucket table, whatever the number of ranges. */
const BUCKET_TABLE_BYTES = (BUCKET_COUNT + 1) * 4;

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);
const total = (m: MemoryDelta): number => m.heap + m.external;

function memoryRatio(r: DatasetResult, compact: MemoryDelta): number {
  return total(compact) / total(r.map.memory!);
}

function structureRow(r: DatasetResult, s: StructureResult, first: boolean): string[] {
  const isCompact = s === r.compact;
  const after = s.memoryAfterLookups;
  const heap = s.memory === undefined ? '' : after ? `${mb(s.memory.heap)} → ${mb(after.heap)}` : mb(s.memory.heap);
  const external = s.memory === undefined ? '' : mb((after ?? s.memory).external);
  const ratio = (base: StructureResult): string =>
    s === base ? '' : (s.lookupsPerSecond / base.lookupsPerSecond).toFixed(2);
  const compactOnly = (cell: string): string => (isCompact ? cell : '');
  return [
    first ? `${r.name} (${r.format})` : '',
    s.structure,
    isCompact ? r.buildSeconds.toFixed(2) : s.buildSeconds === undefined ? '' : s.buildSeconds.toFixed(2),
    compactOnly(int(r.artifactBytes)),
    compactOnly(int(r.gzipBytes)),
    compactOnly((r.dataIndexBytes / r.dataRangeCount).toFixed(2)),
    compactOnly(int(r.recordTableBytes)),
    isCompact
      ? int(r.dataRangeCount)
      : s.entries === undefined
        ? ''
        : `${int(s.entries)} ${s === r.map ? 'keys' : 'rows'}`,
    compactOnly(int(r.recordCount)),
    compactOnly(`${r.readyMs.toFixed(3)} (first ${r.readyFirstMs.toFixed(2)})`),
    int(s.lookupsPerSecond),
    heap,
    external,
    ratio(r.map),
    ratio(r.array),
    isCompact && after ? `${memoryRatio(r, s.memory!).toFixed(3)} → ${memoryRatio(r, after).toFixed(3)}` : '',
  ];
}

/** The results as one markdown table, a row per dataset × structure. */
export function renderTable(results: readonly DatasetResult[]): string {
  const header = [
    'dataset',
    'structure',
    'build s',
    'artifact B',
    'gzip -9 B',
    'B/range',
    'record table B',
    'ranges',
    'records',
    'ready ms',
    'lookups/s',
    'heap Δ MB',
    'ArrayBuffer Δ MB',
    'lookups ÷ Map',
    'lookups ÷ array',
    'memory ÷ Map',
  ];
  const rows = results.flatMap((r) =>
    [r.compact, r.compactRaw, r.array, r.map].map((s, i) => structureRow(r, s, i === 0)),
  );
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const verdict = (pass: boolean): string => (pass ? 'PASS' : 'FAIL');

/** The targets, each with the measured value and PASS/FAIL (a report: nothing fails the run). */
export function renderTargets(results: readonly DatasetResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    const budget = BYTES_PER_RANGE_TARGET * r.dataRangeCount + r.recordTableBytes;
    const perRange = r.dataIndexBytes / r.dataRangeCount;
    const variable = (r.dataIndexBytes - BUCKET_TABLE_BYTES) / r.dataRangeCount;
    const lookupRatio = r.compact.lookupsPerSecond / r.map.lookupsPerSecond;
    const memReady = memoryRatio(r, r.compact.memory!);
    const memAfter = memoryRatio(r, r.compact.memoryAfterLookups!);
    lines.push(
      `${r.name}:`,
      // Judged on the B/range column (data index ÷ ranges, bucket table included); the whole
      // artifact against 8 B/range + record table is printed too, as it also holds fixed parts.
      `  ${verdict(perRange <= BYTES_PER_RANGE_TARGET)} data index ≤ ${BYTES_PER_RANGE_TARGET} B/range (record table apart): ` +
        `${perRange.toFixed(2)} B/range = ${variable.toFixed(2)} per range + ${int(BUCKET_TABLE_BYTES)} B fixed bucket table; ` +
        `whole artifact ${int(r.artifactBytes)} B vs 8 × ${int(r.dataRangeCount)} ranges + ${int(r.recordTableBytes)} B record table ` +
        `= ${int(budget)} B (${r.artifactBytes <= budget ? 'within' : `over by ${int(r.artifactBytes - budget)} B`}: ` +
        `header and scheme index take ${int(r.artifactBytes - r.dataIndexBytes - r.recordTableBytes)} B)`,
      `  ${verdict(r.readyMs <= READY_TARGET_MS)} index ready ≤ ${READY_TARGET_MS} ms: median ${r.readyMs.toFixed(3)} ms, first run ${r.readyFirstMs.toFixed(2)} ms`,
      `  ${verdict(lookupRatio >= LOOKUP_RATIO_TARGET)} compact lookups ≥ ${LOOKUP_RATIO_TARGET} × Map baseline: ${lookupRatio.toFixed(2)} ×`,
      `  ${verdict(memAfter <= MEMORY_RATIO_TARGET)} compact memory ≤ ${MEMORY_RATIO_TARGET} × Map baseline: ${memAfter.toFixed(3)} × after the lookups ` +
        `(strings and brand lists cached), ${memReady.toFixed(3)} × when ready`,
    );
    if (r.format === 'openbiin') {
      lines.push(
        `  ${verdict(r.gzipBytes <= GZIP_TARGET_BYTES)} openbiin artifact gzip ≤ 1.5 MB: ${int(r.gzipBytes)} B`,
      );
    }
  }
  return lines.join('\n');
}

/** The agreement check of each dataset, one line per baseline. */
export function renderAgreement(results: readonly DatasetResult[]): string {
  return results
    .flatMap((r) => [
      `${r.name}: ${int(r.agreement.checked)} PANs`,
      `  array vs compact: ${describeDisagreements(r.agreement.array)}`,
      `  Map vs compact:   ${describeDisagreements(r.agreement.map)}`,
    ])
    .join('\n');
}
