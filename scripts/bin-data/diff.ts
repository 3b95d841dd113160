/**
 * What a data update changes, for the reviewer of a refresh: two compiled indexes compared BIN
 * by BIN (6-digit BINs; an 8-digit row counts for the BIN it sits in).
 */
import type { BinIndex, KeySegment } from '../../src/bin/bin-index';
import type { BinRecord } from '../../src/bin/model';

/** The answer fields compared, in the order the report lists them. */
export const DIFF_FIELDS = [
  'brands',
  'type',
  'binLength',
  'fundingType',
  'issuerName',
  'countryCode',
  'currency',
  'category',
  'anonymousPrepaid',
  'multipleAccountAccess',
] as const satisfies readonly (keyof BinRecord)[];
type DiffField = (typeof DIFF_FIELDS)[number];

/** A BIN some of whose keys gained or lost a data row while others kept one. */
const COVERAGE_BIT = 1 << DIFF_FIELDS.length;

export interface Tally {
  name: string;
  added: number;
  removed: number;
  changed: number;
}

export interface DiffReport {
  /** 6-digit BINs with at least one data row, before and after. */
  binsBefore: number;
  binsAfter: number;
  added: number;
  removed: number;
  /** BINs with data before and after where some answer differs. */
  changed: number;
  /** Per field: BINs where that field's answer differs at some key. */
  changedFields: Record<DiffField | 'coverage', number>;
  /** BINs whose scheme-table answer (brands when no data row knows the BIN) differs. */
  schemeChanged: number;
  /** The issuers and countries with the most added, removed or changed BINs. */
  topIssuers: Tally[];
  topCountries: Tally[];
}

const BINS = 1_000_000;

/**
 * Compares two builds. With no `before` (a first build), every BIN of `after` is added.
 *
 * @example diffIndexes(current, candidate).changedFields.countryCode // BINs moved to another country
 */
export function diffIndexes(before: BinIndex | undefined, after: BinIndex, top = 10): DiffReport {
  const beforeSegments = before ? [...before.segments('data')] : [];
  const afterSegments = [...after.segments('data')];
  // Per 6-digit BIN: covered before / after (bit 0 / 1), a field mask of differences, and one
  // record of each side to name the issuer and country.
  const covered = new Uint8Array(BINS);
  const masks = new Uint16Array(BINS);
  const beforeRecord = new Int32Array(BINS).fill(-1);
  const afterRecord = new Int32Array(BINS).fill(-1);
  const maskCache = new Map<string, number>();
  const fieldMask = (a: number, b: number): number => {
    const key = `${a}:${b}`;
    let mask = maskCache.get(key);
    if (mask === undefined) {
      mask = differingFields(before!.record(a), after.record(b));
      maskCache.set(key, mask);
    }
    return mask;
  };
  walkPairs(beforeSegments, afterSegments, (start, end, a, b) => {
    for (let bin = Math.floor(start / 100); bin <= Math.floor(end / 100); bin++) {
      if (a >= 0) {
        covered[bin]! |= 1;
        beforeRecord[bin] = a;
      }
      if (b >= 0) {
        covered[bin]! |= 2;
        afterRecord[bin] = b;
      }
      if (a >= 0 && b >= 0) masks[bin]! |= fieldMask(a, b);
      else masks[bin]! |= COVERAGE_BIT;
    }
  });

  const changedFields = Object.fromEntries(
    [...DIFF_FIELDS, 'coverage'].map((f) => [f, 0]),
  ) as DiffReport['changedFields'];
  const issuers = new Map<string, Tally>();
  const countries = new Map<string, Tally>();
  const tally = (map: Map<string, Tally>, name: string, kind: 'added' | 'removed' | 'changed'): void => {
    let t = map.get(name);
    if (!t) map.set(name, (t = { name, added: 0, removed: 0, changed: 0 }));
    t[kind]++;
  };
  const report: DiffReport = {
    binsBefore: 0,
    binsAfter: 0,
    added: 0,
    removed: 0,
    changed: 0,
    changedFields,
    schemeChanged: 0,
    topIssuers: [],
    topCountries: [],
  };
  for (let bin = 0; bin < BINS; bin++) {
    const c = covered[bin]!;
    if (c === 0) continue;
    if (c & 1) report.binsBefore++;
    if (c & 2) report.binsAfter++;
    const was = beforeRecord[bin]! >= 0 ? before!.record(beforeRecord[bin]!) : undefined;
    const now = afterRecord[bin]! >= 0 ? after.record(afterRecord[bin]!) : undefined;
    let kind: 'added' | 'removed' | 'changed';
    if (c === 2) kind = 'added';
    else if (c === 1) kind = 'removed';
    else if (masks[bin] !== 0) kind = 'changed';
    else continue;
    report[kind]++;
    if (kind === 'changed') {
      DIFF_FIELDS.forEach((f, i) => {
        if (masks[bin]! & (1 << i)) changedFields[f]++;
      });
      if (masks[bin]! & COVERAGE_BIT) changedFields.coverage++;
    }
    tally(issuers, now?.issuerName ?? was?.issuerName ?? '(no issuer named)', kind);
    const from = was?.countryCode ?? 'unknown';
    const to = now?.countryCode ?? 'unknown';
    tally(countries, kind === 'changed' && from !== to ? `${from} → ${to}` : kind === 'removed' ? from : to, kind);
  }
  report.schemeChanged = schemeDifferences(before, after);
  const largest = (m: Map<string, Tally>): Tally[] =>
    [...m.values()]
      .sort((a, b) => b.added + b.removed + b.changed - (a.added + a.removed + a.changed) || (a.name < b.name ? -1 : 1))
      .slice(0, top);
  report.topIssuers = largest(issuers);
  report.topCountries = largest(countries);
  return report;
}

/** Calls `visit` for each run of keys over which neither side changes record (-1 = none). */
function walkPairs(
  a: readonly KeySegment[],
  b: readonly KeySegment[],
  visit: (start: number, end: number, before: number, after: number) => void,
): void {
  let i = 0;
  let j = 0;
  let at = 0;
  while (i < a.length || j < b.length) {
    const sa = a[i];
    const sb = b[j];
    const nextStart = Math.min(sa?.start ?? Infinity, sb?.start ?? Infinity);
    if (at < nextStart) at = nextStart;
    const inA = sa !== undefined && sa.start <= at;
    const inB = sb !== undefined && sb.start <= at;
    // The run ends where either side's segment ends or the other side's next segment starts.
    let end = Infinity;
    if (inA) end = Math.min(end, sa.end);
    else if (sa) end = Math.min(end, sa.start - 1);
    if (inB) end = Math.min(end, sb.end);
    else if (sb) end = Math.min(end, sb.start - 1);
    visit(at, end, inA ? sa.recordId : -1, inB ? sb.recordId : -1);
    at = end + 1;
    if (inA && sa.end < at) i++;
    if (inB && sb.end < at) j++;
  }
}

function differingFields(a: BinRecord, b: BinRecord): number {
  let mask = 0;
  DIFF_FIELDS.forEach((f, i) => {
    const x = a[f];
    const y = b[f];
    const same = Array.isArray(x) && Array.isArray(y) ? x.join() === y.join() : x === y;
    if (!same) mask |= 1 << i;
  });
  return mask;
}

/** 6-digit BINs whose scheme-table brands differ between the builds (either side may lack one). */
function schemeDifferences(before: BinIndex | undefined, after: BinIndex): number {
  const brandsAt = (index: BinIndex | undefined): string[] => {
    const out = new Array<string>(BINS).fill('');
    if (!index) return out;
    for (const s of index.segments('scheme')) {
      const brands = index.record(s.recordId).brands.join();
      for (let bin = Math.floor(s.start / 100); bin <= Math.floor(s.end / 100); bin++) out[bin] = brands;
    }
    return out;
  };
  const a = brandsAt(before);
  const b = brandsAt(after);
  let n = 0;
  for (let bin = 0; bin < BINS; bin++) if (a[bin] !== b[bin]) n++;
  return n;
}

/** The report as markdown, for the terminal and data/refresh-report.md. */
export function renderDiff(report: DiffReport, title: string): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const fields = [...DIFF_FIELDS, 'coverage' as const]
    .filter((f) => report.changedFields[f] > 0)
    .map((f) => `| ${f} | ${n(report.changedFields[f])} |`);
  const table = (rows: Tally[], what: string): string[] =>
    rows.length === 0
      ? [`(no ${what} changed)`]
      : [
          `| ${what} | added | removed | changed |`,
          '|---|---|---|---|',
          ...rows.map((t) => `| ${t.name.replace(/\|/g, '\\|')} | ${n(t.added)} | ${n(t.removed)} | ${n(t.changed)} |`),
        ];
  return [
    `# ${title}`,
    '',
    `6-digit BINs with a data row: ${n(report.binsBefore)} before, ${n(report.binsAfter)} after.`,
    '',
    `| BINs | count |`,
    '|---|---|',
    `| added | ${n(report.added)} |`,
    `| removed | ${n(report.removed)} |`,
    `| changed | ${n(report.changed)} |`,
    `| scheme-table answer changed | ${n(report.schemeChanged)} |`,
    '',
    fields.length
      ? 'Changed BINs by field (a BIN may change in several; coverage: part of the BIN gained or lost a row):'
      : 'No field changed.',
    '',
    ...(fields.length ? ['| field | BINs |', '|---|---|', ...fields, ''] : []),
    'Largest changes by issuer:',
    '',
    ...table(report.topIssuers, 'issuer'),
    '',
    'Largest changes by country (a move shows as from → to):',
    '',
    ...table(report.topCountries, 'country'),
    '',
  ].join('\n');
}
