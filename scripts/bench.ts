/**
 * Benchmarks the compact BIN index against two naive structures on several datasets and prints
 * one markdown table (ready for the README), the targets with PASS/FAIL and an agreement check.
 *
 *   npm run bench -- [--source FILE [--format NAME]]... [--lookups 1000000] [--rows 400000]
 *   npx tsx scripts/bench.ts --source ../shared/eval/openbiin/openbiin.csv --format openbiin
 *
 * Datasets: always the synthetic set (scripts/generate-synthetic.ts, seed 1) and the embedded
 * default source (data/bin-source.json), plus each --source. The i-th --format applies to the
 * i-th --source (comma-separated lists work too); without one the format is detected. Sources
 * are only read, never copied: third-party evaluation data stays where it is.
 *
 * A missed target is reported, not fatal; the exit code is 1 only when a source cannot be built.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { importerNamed } from './bin-data/importers/index';
import type { Importer } from './bin-data/source-row';
import { sink } from './bench/measure';
import { runDataset, type Dataset, type DatasetResult } from './bench/run-dataset';
import { renderAgreement, renderTable, renderTargets } from './bench/table';
import { generateSyntheticCsv } from './generate-synthetic';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SYNTHETIC_SEED = 1;

function list(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function positiveInt(value: string, name: string): number {
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

function importerFor(name: string | undefined): Importer | undefined {
  if (name === undefined) return undefined;
  const importer = importerNamed(name);
  if (!importer) throw new Error(`unknown --format ${name}`);
  return importer;
}

async function datasets(sources: string[], formats: string[], rows: number): Promise<Dataset[]> {
  const config = JSON.parse(await readFile(join(ROOT, 'data', 'bin-source.json'), 'utf8')) as {
    source: string;
    format?: string;
  };
  return [
    {
      name: `synthetic ${rows.toLocaleString('en-US')} rows, seed ${SYNTHETIC_SEED}`,
      read: () => Promise.resolve(generateSyntheticCsv(rows, SYNTHETIC_SEED)),
    },
    {
      name: `${config.source} (embedded default)`,
      read: () => readFile(join(ROOT, config.source), 'utf8'),
      importer: importerFor(config.format),
    },
    ...sources.map((source, i) => ({
      name: basename(source),
      read: () => readFile(source, 'utf8'),
      importer: importerFor(formats[i]),
    })),
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      source: { type: 'string', multiple: true },
      format: { type: 'string', multiple: true },
      lookups: { type: 'string', default: '1000000' },
      rows: { type: 'string', default: '400000' },
      runs: { type: 'string', default: '3' },
    },
  });
  const lookups = positiveInt(values.lookups, 'lookups');
  const rows = positiveInt(values.rows, 'rows');
  const runs = positiveInt(values.runs, 'runs');
  const log = (m: string): void => console.error(`[bench] ${m}`);
  const began = performance.now();

  const results: DatasetResult[] = [];
  let failed = false;
  for (const dataset of await datasets(list(values.source), list(values.format), rows)) {
    try {
      results.push(await runDataset(dataset, { lookups, runs, agreementSample: 10_000, log }));
    } catch (e) {
      // One broken source should not hide the others' numbers; the exit code still says so.
      failed = true;
      console.error(`[bench] ${dataset.name}: cannot be built: ${(e as Error).message}`);
    }
  }

  console.log(
    `\n## BIN index bench (${lookups.toLocaleString('en-US')} lookups, median of ${runs} runs, ` +
      `Node ${process.version}, ${new Date().toISOString().slice(0, 10)})\n`,
  );
  console.log(renderTable(results));
  console.log(`\nTargets\n${renderTargets(results)}`);
  console.log(`\nAgreement on a sample (record content: brands, issuer, country)\n${renderAgreement(results)}`);
  console.log(`\nchecksum ${sink.value}; ${((performance.now() - began) / 1000).toFixed(1)} s in all`);
  if (failed) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(`[bench] ${(e as Error).stack ?? String(e)}`);
  process.exit(1);
});
