/**
 * The BIN data pipeline at real scale: a synthetic 375,000-row file in venelinkochev's format
 * (the size of that list; never third-party data) built as data:refresh builds it, on top of the
 * shipped layers, in a child process of its own so that its peak memory is its own. Also the
 * coverage report: how much of a population of real BINs an index answers with a data row, with
 * the scheme table only, or not at all.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { BinIndex } from '../../src/bin/bin-index';
import { buildLayers, type LayerInput } from '../bin-data/build';
import { importerNamed } from '../bin-data/importers/index';
import { layerPath, readSourcesConfig } from '../bin-data/layers';
import { readRawRows } from '../bin-data/read-csv';
import { generateSyntheticCsv } from './synthetic-bins';

export const VENELINKOCHEV_HEADER =
  'BIN,Brand,Type,Category,Issuer,IssuerPhone,IssuerUrl,isoCode2,isoCode3,CountryName';

/** The source labels venelinkochev writes for our brand names (as its file spells them). */
const BRAND_LABELS: Record<string, string> = {
  visa: 'VISA',
  mastercard: 'MASTERCARD',
  amex: 'AMERICAN EXPRESS',
  discover: 'DISCOVER',
  jcb: 'JCB',
  diners: 'DINERS CLUB INTERNATIONAL',
  maestro: 'MAESTRO',
  unionPay: 'CHINA UNION PAY',
  rupay: 'RUPAY',
  mir: 'NSPK MIR',
  troy: 'TROY',
  uatp: 'UATP',
  dankort: 'DANKORT',
};
const CATEGORIES = ['CLASSIC', 'GOLD', 'PLATINUM', 'BUSINESS', 'CORPORATE', 'STANDARD', 'PREPAID', 'INFINITE', ''];

/**
 * A synthetic BIN list in venelinkochev's format: the canonical synthetic set (seeded, the same
 * bytes for the same arguments) rewritten one BIN per row with that list's labels.
 */
export function generateVenelinkochevCsv(rows: number, seed: number): string {
  const records = parse<Record<string, string>>(generateSyntheticCsv(rows, seed), { columns: true });
  const lines = [VENELINKOCHEV_HEADER];
  const seen = new Set<string>();
  records.forEach((r, i) => {
    const bin = r.bin_start!;
    if (seen.has(bin)) return;
    seen.add(bin);
    const brand = r.brands!.split('|').map((b) => BRAND_LABELS[b] ?? b.toUpperCase())[0] ?? '';
    const funding =
      { credit: 'CREDIT', debit: 'DEBIT', chargeCard: 'CHARGE CARD', prepaid: 'DEBIT' }[r.funding_type!] ?? '';
    const category = r.category === 'commercial' ? 'BUSINESS' : CATEGORIES[i % CATEGORIES.length]!;
    const issuer = r.issuer_name!.includes(',') ? `"${r.issuer_name}"` : r.issuer_name;
    lines.push(`${bin},${brand},${funding},${category},${issuer},,,${r.country_code},,`);
  });
  return `${lines.join('\n')}\n`;
}

export interface ScaleRun {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
  artifactBytes: number;
  gzipBytes: number;
  ranges: number;
}

/** The layers of data/bin-source.json, read, ready for buildLayers. */
async function shippedLayers(dataDir: string): Promise<LayerInput[]> {
  const inputs: LayerInput[] = [];
  for (const layer of (await readSourcesConfig(dataDir)).layers) {
    inputs.push({
      name: layer.name,
      text: await readFile(layerPath(dataDir, layer), 'utf8'),
      importer: layer.format ? importerNamed(layer.format) : undefined,
    });
  }
  return inputs;
}

/** What the child process prints: one layered build, timed, and the process's peak memory. */
export async function childBuild(dataDir: string, file: string): Promise<ScaleRun> {
  const began = performance.now();
  const inputs = await shippedLayers(dataDir);
  inputs.push({ name: 'venelinkochev', text: await readFile(file, 'utf8'), importer: importerNamed('venelinkochev') });
  const result = buildLayers(inputs);
  const seconds = (performance.now() - began) / 1000;
  return {
    rows: result.rowsRead,
    seconds,
    rowsPerSecond: result.rowsRead / seconds,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    artifactBytes: result.artifact.byteLength,
    gzipBytes: gzipSync(new Uint8Array(result.artifact), { level: 9 }).length,
    ranges: result.dataRangeCount,
  };
}

/** Builds the synthetic file `runs` times, each in a fresh process; the table and the 30 s target. */
export async function runScaleBench(options: {
  root: string;
  rows: number;
  runs: number;
  log: (m: string) => void;
}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bin-scale-'));
  try {
    const file = join(dir, 'bin-list-data.csv');
    options.log(`scale: generating ${options.rows.toLocaleString('en-US')} synthetic venelinkochev rows`);
    const csv = generateVenelinkochevCsv(options.rows, 7);
    await writeFile(file, csv);
    const lines = csv.split('\n').length - 2;
    const runs: ScaleRun[] = [];
    for (let i = 0; i < options.runs; i++) {
      options.log(
        `scale: layered build with ${lines.toLocaleString('en-US')} venelinkochev rows, run ${i + 1}/${options.runs}`,
      );
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', join(options.root, 'scripts', 'bench', 'scale-child.ts'), join(options.root, 'data'), file],
        { encoding: 'utf8', cwd: options.root, maxBuffer: 1 << 20 },
      );
      if (child.status !== 0) throw new Error(`scale build failed: ${child.stderr}`);
      runs.push(JSON.parse(child.stdout.trim().split('\n').at(-1)!) as ScaleRun);
    }
    const stat = (pick: (r: ScaleRun) => number, digits: number): string => {
      const v = runs.map(pick).sort((a, b) => a - b);
      const f = (x: number): string =>
        x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
      return `${f(v[0]!)} / **${f(v[Math.floor(v.length / 2)]!)}** / ${f(v.at(-1)!)}`;
    };
    const first = runs[0]!;
    const worst = Math.max(...runs.map((r) => r.seconds));
    return [
      `Layered build (the shipped overrides and binlist, then ${lines.toLocaleString('en-US')} synthetic venelinkochev rows), each run in a fresh process; min / **median** / max of ${runs.length}`,
      '',
      '| rows read | build s | rows/s | peak RSS MB | data ranges | artifact B | gzip -9 B | whole build ≤ 30 s |',
      '|---|---|---|---|---|---|---|---|',
      `| ${first.rows.toLocaleString('en-US')} | ${stat((r) => r.seconds, 2)} | ${stat((r) => r.rowsPerSecond, 0)} | ${stat((r) => r.peakRssMb, 0)} | ${first.ranges.toLocaleString('en-US')} | ${first.artifactBytes.toLocaleString('en-US')} | ${first.gzipBytes.toLocaleString('en-US')} | ${worst <= 30 ? `✅ ${worst.toFixed(1)} s at worst` : `❌ ${worst.toFixed(1)} s`} |`,
    ].join('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Coverage = { data: number; scheme: number; none: number };

function coverageOf(index: BinIndex, bins: readonly string[]): Coverage {
  const c: Coverage = { data: 0, scheme: 0, none: 0 };
  for (const bin of bins) {
    const match = index.find(`${bin}0000000000`);
    c[match?.source ?? 'none']++;
  }
  return c;
}

/**
 * Coverage of a population of BINs (every distinct 6-digit BIN of `population`): by the embedded
 * index, and by the shipped layers plus the population itself as one more layer, standing in
 * for a list of its size (the documented `--source venelinkochev` layering).
 */
export async function runCoverage(options: {
  root: string;
  population: string;
  format?: string;
  log: (m: string) => void;
}): Promise<string> {
  const text = await readFile(options.population, 'utf8');
  const importer = options.format ? importerNamed(options.format) : undefined;
  const bins = [...new Set(readRawRows(text, importer).rows.map((r) => r.startDigits.slice(0, 6)))];
  options.log(`coverage: ${bins.length.toLocaleString('en-US')} distinct BINs in ${options.population}`);
  const embedded = BinIndex.fromArrayBuffer(
    (await readFile(join(options.root, 'data', 'bin-index.bin'))).buffer.slice(0),
  );
  const dataDir = join(options.root, 'data');
  const config = await readSourcesConfig(dataDir);
  const inputs = await shippedLayers(dataDir);
  options.log('coverage: building the shipped layers plus the population as a last layer');
  const layered = BinIndex.fromArrayBuffer(buildLayers([...inputs, { name: 'population', text, importer }]).artifact);
  const pct = (n: number): string => `${((100 * n) / bins.length).toFixed(1)}%`;
  const row = (name: string, c: Coverage): string => `| ${name} | ${pct(c.data)} | ${pct(c.scheme)} | ${pct(c.none)} |`;
  return [
    `Coverage of ${bins.length.toLocaleString('en-US')} distinct BINs (${options.population}): the share answered with a data row (issuer, country), by the scheme table only (brand), or 404`,
    '',
    '| index | data row | scheme only | 404 |',
    '|---|---|---|---|',
    row(`embedded default (${config.layers.map((l) => l.name).join(' > ')})`, coverageOf(embedded, bins)),
    row(`${config.layers.map((l) => l.name).join(' > ')} > the population as a layer`, coverageOf(layered, bins)),
  ].join('\n');
}
