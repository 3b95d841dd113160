/**
 * `npm run bench`: nine reports (the 3DS flows give three), each a markdown table ready for docs/benchmarks.md, in this order.
 *
 * 1. BIN index: the compact index against two naive structures on several datasets, the targets
 *    with PASS/FAIL and an agreement check.
 * 2. Scale: a synthetic 375,000-row venelinkochev-format file built on top of the shipped layers,
 *    in a fresh process per run (rows/s, peak memory, gzip size, the 30 s target); with
 *    --population, the coverage of that population's BINs by the embedded index and by the
 *    layering with the population as its last layer.
 * 3. Requests: workerd CPU per login scenario, a legitimate client's latency under a flood of
 *    wrong passwords, this tree against `--requests-baseline`; and panLookup against a bare Worker
 *    and the floor (the same answer and log line), the same steps inside one isolate (over HTTP
 *    and hot), and a profile of each (`--only path`: those alone).
 * 4. 3DS flows: full frictionless and challenged flows against this tree's Worker (bundled as
 *    deployed) and the floor (scripts/bench/threeds-floor-worker.js: one call per step to a new
 *    transaction's Durable Object writing one SQLite row), both served by Miniflare in the same
 *    run, flows/s ÷ the floor's against the target; the storage calls of each step; where the
 *    rest goes (each step and object call timed inside the Worker, and the first call to a new
 *    object beside the floor's). With `--baseline REF`, an earlier commit's Worker too.
 *    Then (`threeds-costs`) what each platform call of the flows costs: the same Worker served
 *    again with its KV write, its event append, its alarm settings or its log line made a no-op.
 *    Then (`threeds-profile`) where a flow's CPU goes: V8's sampling profiler of the Worker's
 *    isolate (the Worker and its objects) by part of the service and by source file.
 *    Then (`threeds-channels`) the flows of each channel side by side: browser, app (the test
 *    SDK) and decoupled.
 * 5. Events: the same 3DS flows against this commit with no endpoint for the test merchant and
 *    with 1, 10, and 10 of which one never answers (local HTTP receivers): the answers' times side
 *    by side, and at the receivers the deliveries per second and the time from each change to its
 *    delivery (`--events-flows` flows a run, default 50); then held backlogs (`--events-held`,
 *    default 1000,10000 pings to a disabled endpoint) and the time until all of them arrive once it
 *    is enabled again.
 * 6. Tokens: 20 different updates of one token at once, KV's write limit emulated, against
 *    `--tokens-baseline`.
 * 7. Live: live 3DS flows of the live Worker against the fake 3DS Server provider beside this
 *    tree's `test` flows, and the provider calls of each flow.
 *
 *   npm run bench -- [--only bin|scale|requests|path|threeds|threeds-costs|threeds-channels|events|events-scale|tokens|live] [--source FILE [--format NAME]]... [--lookups 1000000]
 *                    [--rows 400000] [--runs 3] [--baseline REF] [--requests-baseline REF]
 *                    [--flows 200] [--concurrency 10] [--scale-rows 375000]
 *                    [--population FILE [--population-format NAME]] [--events-flows 50] [--events-held 1000,10000] [--events-scale 2000]
 *   npx tsx scripts/bench.ts --source ../shared/eval/openbiin/openbiin.csv --format openbiin
 *
 * Datasets: always the synthetic set (scripts/bench/synthetic-bins.ts, seed 1) and the embedded
 * default source (data/bin-source.json), plus each --source. The i-th --format applies to the
 * i-th --source (comma-separated lists work too); without one the format is detected. Sources
 * are only read, never copied: third-party evaluation data stays where it is.
 *
 * A missed target is reported, not fatal; the exit code is 1 only when a source cannot be built.
 * The reports go to stdout; progress goes to stderr as the bench runs (`[bench  12.3 s] report
 * 1/5: …`, each dataset and phase, run i of n), printed between timed passes, never inside one.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { importerNamed } from './bin-data/importers/index';
import { layerPath, readSourcesConfig } from './bin-data/layers';
import type { Importer } from './bin-data/source-row';
import { sink } from './bench/measure';
import { runCoverage, runScaleBench } from './bench/scale';
import { runDataset, type Dataset, type DatasetResult } from './bench/run-dataset';
import { renderAgreement, renderTable, renderTargets } from './bench/table';
import { runHttpBench } from './bench/http-bench';
import { runLiveBench } from './bench/live-bench';
import { runThreeDsBench } from './bench/threeds-bench';
import { runThreeDsCosts } from './bench/threeds-costs';
import { runThreeDsProfile } from './bench/threeds-profile';
import { runThreeDsChannels } from './bench/threeds-channels';
import { runEventsBench } from './bench/events-bench';
import { runEventsScale } from './bench/events-scale';
import { runTokenBench } from './bench/token-bench';
import { generateSyntheticCsv } from './bench/synthetic-bins';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SYNTHETIC_SEED = 1;
/**
 * The request-path baseline: the last commit before the restructure into layers (issue 14), whose
 * bench must show no regression. Pass --requests-baseline to compare with another commit.
 */
const REQUESTS_BASELINE = '3f5d5ca';
/**
 * The token baseline: the last commit before tokens had one writer per key (issue 23), whose
 * Worker wrote token records under leases. Pass --tokens-baseline to compare with another commit.
 */
const TOKENS_BASELINE = '2cf82ae';

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
  // The embedded default's main source: its first layer that is not the overrides.
  const dataDir = join(ROOT, 'data');
  const layers = (await readSourcesConfig(dataDir)).layers;
  const main = layers.find((l) => l.format !== 'overrides') ?? layers[0]!;
  return [
    {
      name: `synthetic ${rows.toLocaleString('en-US')} rows, seed ${SYNTHETIC_SEED}`,
      read: () => Promise.resolve(generateSyntheticCsv(rows, SYNTHETIC_SEED)),
    },
    {
      name: `data/${main.source} (embedded default)`,
      read: () => readFile(layerPath(dataDir, main), 'utf8'),
      importer: importerFor(main.format),
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
      only: { type: 'string' },
      // The 3DS report compares with its floor; --baseline serves an earlier commit beside them
      // (before the floor, it was the commit before the Durable Object guards, 8a1a4ac).
      baseline: { type: 'string' },
      'requests-baseline': { type: 'string', default: REQUESTS_BASELINE },
      'tokens-baseline': { type: 'string', default: TOKENS_BASELINE },
      flows: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '10' },
      'scale-rows': { type: 'string', default: '375000' },
      population: { type: 'string' },
      'population-format': { type: 'string' },
      // Events: flows per run (fewer than the 3DS report's: 10 endpoints make 10 deliveries a flow).
      'events-flows': { type: 'string', default: '50' },
      'events-held': { type: 'string', default: '1000,10000' },
      'events-scale': { type: 'string', default: '2000' },
    },
  });
  const parts = [
    'bin',
    'scale',
    'threeds',
    'threeds-costs',
    'threeds-profile',
    'threeds-channels',
    'events',
    'events-scale',
    'tokens',
    'live',
    'requests',
    'path',
  ];
  if (values.only !== undefined && !parts.includes(values.only))
    throw new Error(`--only takes ${parts.join(', ')}, not ${values.only}`);
  const selected = (part: string): boolean => values.only === undefined || values.only === part;
  const lookups = positiveInt(values.lookups, 'lookups');
  const rows = positiveInt(values.rows, 'rows');
  const runCount = positiveInt(values.runs, 'runs');
  const began = performance.now();
  // Progress on stderr (the reports go to stdout): the time since the start, then what runs now.
  const log = (m: string): void =>
    console.error(`[bench ${((performance.now() - began) / 1000).toFixed(1).padStart(6)} s] ${m}`);
  const sections = parts.filter((p) => selected(p) && !(p === 'path' && values.only !== 'path'));
  let section = 0;
  /** Says which report starts, and its place among those of this run. */
  const starting = (what: string): void => log(`report ${++section}/${sections.length}: ${what}`);

  let failed = false;
  if (selected('bin')) {
    starting('BIN index');
    failed = await binBench(values, lookups, rows, runCount, log);
  }
  if (selected('scale')) {
    starting('BIN data at scale');
    const report = await runScaleBench({
      root: ROOT,
      rows: positiveInt(values['scale-rows'], 'scale-rows'),
      runs: runCount,
      log,
    });
    console.log(`\n## BIN data at scale (Node ${process.version}, ${new Date().toISOString().slice(0, 10)})\n`);
    console.log(report);
    if (values.population !== undefined) {
      console.log(
        `\n${await runCoverage({ root: ROOT, population: values.population, format: values['population-format'], log })}`,
      );
    }
  }
  if (selected('requests') || values.only === 'path') {
    starting(values.only === 'path' ? 'request path' : 'request path and logins');
    const report = await runHttpBench({
      root: ROOT,
      baselineRef: values['requests-baseline'],
      runs: runCount,
      log,
      pathOnly: values.only === 'path',
    });
    console.log(
      `\n## Request path and logins (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  if (selected('threeds')) {
    starting('3DS flows');
    const report = await runThreeDsBench({
      root: ROOT,
      ...(values.baseline !== undefined ? { baselineRef: values.baseline } : {}),
      runs: runCount,
      flows: positiveInt(values.flows, 'flows'),
      concurrency: positiveInt(values.concurrency, 'concurrency'),
      log,
    });
    console.log(
      `\n## 3DS flows (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  // The 3DS reports that take the flows' options: what each platform call costs, and each channel's flows.
  const flowOptions = {
    root: ROOT,
    runs: runCount,
    flows: positiveInt(values.flows, 'flows'),
    concurrency: positiveInt(values.concurrency, 'concurrency'),
    log,
  };
  for (const [part, title, heading, runReport] of [
    [
      'threeds-costs',
      '3DS flows: what each platform call costs',
      '3DS flows: what each platform call costs',
      runThreeDsCosts,
    ],
    [
      'threeds-profile',
      '3DS flows: where the CPU goes',
      '3DS flows: where the CPU goes, by part and file',
      runThreeDsProfile,
    ],
    ['threeds-channels', '3DS flows by channel', '3DS flows by channel: browser, app, decoupled', runThreeDsChannels],
  ] as const) {
    if (!selected(part)) continue;
    starting(title);
    const report = await runReport(flowOptions);
    console.log(
      `\n## ${heading} (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  if (selected('events')) {
    starting('events');
    const report = await runEventsBench({
      root: ROOT,
      runs: runCount,
      flows: positiveInt(values['events-flows'], 'events-flows'),
      concurrency: positiveInt(values.concurrency, 'concurrency'),
      held: list([values['events-held']]).map((n) => positiveInt(n, 'events-held')),
      log,
    });
    console.log(
      `\n## Events (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  if (selected('events-scale')) {
    starting('events at scale');
    const report = await runEventsScale({
      root: ROOT,
      runs: runCount,
      events: positiveInt(values['events-scale'], 'events-scale'),
      log,
    });
    console.log(
      `\n## Events: one merchant at scale (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  if (selected('tokens')) {
    starting('token update bursts');
    const report = await runTokenBench({
      root: ROOT,
      baselineRef: values['tokens-baseline'],
      runs: runCount,
      log,
    });
    console.log(
      `\n## Token update bursts (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  if (selected('live')) {
    starting('live 3DS flows');
    const report = await runLiveBench({
      root: ROOT,
      runs: runCount,
      flows: positiveInt(values.flows, 'flows'),
      concurrency: positiveInt(values.concurrency, 'concurrency'),
      log,
    });
    console.log(
      `\n## Live 3DS flows against the fake provider (Node ${process.version}, workerd via Miniflare, ${new Date().toISOString().slice(0, 10)})\n`,
    );
    console.log(report);
  }
  console.log(`\n${((performance.now() - began) / 1000).toFixed(1)} s in all`);
  if (failed) process.exitCode = 1;
}

/** The BIN index report; true when a source could not be built. */
async function binBench(
  values: { source?: string[]; format?: string[] },
  lookups: number,
  rows: number,
  runs: number,
  log: (m: string) => void,
): Promise<boolean> {
  const results: DatasetResult[] = [];
  let failed = false;
  const all = await datasets(list(values.source), list(values.format), rows);
  for (const [i, dataset] of all.entries()) {
    try {
      const began = performance.now();
      log(`dataset ${i + 1}/${all.length}: ${dataset.name}`);
      results.push(await runDataset(dataset, { lookups, runs, agreementSample: 10_000, log }));
      log(`dataset ${i + 1}/${all.length} done in ${((performance.now() - began) / 1000).toFixed(1)} s`);
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
  console.log(`\nchecksum ${sink.value}`);
  return failed;
}

main().catch((e: unknown) => {
  console.error(`[bench] ${(e as Error).stack ?? String(e)}`);
  process.exit(1);
});
