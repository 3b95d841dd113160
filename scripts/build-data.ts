/**
 * Builds data/bin-index.bin, the compiled BIN index the Worker imports.
 *
 *   npm run build:data                      from the source named in data/bin-source.json
 *   npm run build:data -- --source F [--format NAME] [--out FILE]
 *   npm run data:refresh -- --source <path-or-url> [--format NAME]
 *       builds from a new source and, when it verifies, makes it the embedded default:
 *       the CSV is copied into data/sources/ and data/bin-source.json points at it.
 *
 * Formats: binlist, venelinkochev, iannuttall, openbiin, canonical (detected from the header
 * when --format is not given). Exits 1 on a broken source, printing the offending lines.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { BrokenSourceError, buildIndex, describe, type BuildResult } from './bin-data/build';
import { IMPORTERS } from './bin-data/importers/index';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = join(ROOT, 'data', 'bin-source.json');

interface SourceConfig {
  source: string;
  format?: string;
}

const USAGE = `usage: npm run build:data [-- --source <path-or-url>] [--format <name>] [--out <file>] [--quiet]
       npm run data:refresh -- --source <path-or-url> [--format <name>] [--force]
formats: ${IMPORTERS.map((i) => i.name).join(', ')} (detected from the header when not given)
--quiet prints the summary only; --force lets data:refresh replace the default with a source
that gives under half as many ranges.`;

/** data:refresh refuses a source that gives fewer than this share of the current default's ranges. */
const MIN_REFRESH_SHARE = 0.5;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        source: { type: 'string' },
        format: { type: 'string' },
        out: { type: 'string', default: join(ROOT, 'data', 'bin-index.bin') },
        save: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (e) {
    fail(`${(e as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.save && values.source === undefined) fail(`data:refresh needs --source\n${USAGE}`);
  const config = JSON.parse(await readFile(CONFIG, 'utf8')) as SourceConfig;
  const source = values.source ?? join(ROOT, config.source);
  const formatName = values.format ?? (values.source ? undefined : config.format);
  const importer = formatName === undefined ? undefined : IMPORTERS.find((i) => i.name === formatName);
  if (formatName !== undefined && !importer) {
    fail(`unknown --format ${formatName}; one of: ${IMPORTERS.map((i) => i.name).join(', ')}`);
  }
  const log = (m: string): void => {
    if (!values.quiet) console.error(`[build:data] ${m}`);
  };

  log(`reading ${source}`);
  const text = await readSource(source);
  let result: BuildResult;
  try {
    result = buildIndex(text, { importer, progress: log });
  } catch (e) {
    if (e instanceof BrokenSourceError) fail(`broken source ${source}: ${e.message}`);
    throw e;
  }
  if (values.save && !values.force) await refuseShrinking(result.rows.length);
  try {
    await mkdir(dirname(values.out), { recursive: true });
    await writeFile(values.out, new Uint8Array(result.artifact));
  } catch (e) {
    fail(`cannot write ${values.out}: ${(e as Error).message}`);
  }
  printSummary(source, values.out, result);
  if (values.save) await saveAsDefault(source, text, result.format);
}

/**
 * A refresh that would replace the embedded default with a much smaller source is more likely
 * a mistake (a sample, a truncated download) than an intent: it needs --force.
 */
async function refuseShrinking(newRanges: number): Promise<void> {
  const config = JSON.parse(await readFile(CONFIG, 'utf8')) as SourceConfig;
  let current: number;
  try {
    const importer = IMPORTERS.find((i) => i.name === config.format);
    current = buildIndex(await readSource(join(ROOT, config.source)), { importer }).rows.length;
  } catch {
    return; // the current default does not build: anything verified is better
  }
  if (newRanges < current * MIN_REFRESH_SHARE) {
    fail(
      `the new source gives ${newRanges} ranges, the current default ${current}: ` +
        'refusing to shrink the embedded data by more than half (add --force if you mean it)',
    );
  }
}

/** The source's text; it must be UTF-8 (a Latin-1 file would garble issuer names silently). */
async function readSource(source: string): Promise<string> {
  let bytes: Uint8Array;
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source).catch((e: Error) =>
      fail(
        `cannot fetch ${source}: ${e.message}${e.cause ? ` (${String((e.cause as Error).message ?? e.cause)})` : ''}`,
      ),
    );
    if (!response.ok) fail(`GET ${source} answered ${response.status}`);
    bytes = new Uint8Array(await response.arrayBuffer());
  } else {
    bytes = await readFile(source).catch((e: Error) => fail(`cannot read ${source}: ${e.message}`));
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail(`${source} is not UTF-8: convert it first (e.g. iconv -f latin1 -t utf-8)`);
  }
}

/** data:refresh: keep the verified source in data/ and make it the default build input. */
async function saveAsDefault(source: string, text: string, format: string): Promise<void> {
  const dataDir = join(ROOT, 'data');
  let kept = isAbsolute(source) ? source : resolve(source);
  if (/^https?:\/\//.test(source) || relative(dataDir, kept).startsWith('..')) {
    const name = basename(new URL(source, 'file:///').pathname) || 'source.csv';
    kept = join(dataDir, 'sources', name);
    await mkdir(dirname(kept), { recursive: true });
    if (/^https?:\/\//.test(source)) {
      await writeFile(kept, text);
    } else {
      await copyFile(source, kept);
      // Keep the data's licence terms with it (binlist's Apache-2.0 NOTICE, for one).
      for (const name of ['LICENSE', 'NOTICE']) {
        await copyFile(join(dirname(source), name), join(dirname(kept), name)).catch(() => undefined);
      }
    }
  }
  const config: SourceConfig = { source: relative(ROOT, kept), format };
  await writeFile(CONFIG, `${JSON.stringify(config, null, 2)}\n`);
  console.error(`[build:data] data/bin-source.json now points at ${config.source} (${format})`);
}

function printSummary(source: string, out: string, r: BuildResult): void {
  const gzip = gzipSync(new Uint8Array(r.artifact), { level: 9 }).length;
  const top = (m: Map<string, number>): string =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([l, n]) => `${l} (${n})`)
      .join(', ');
  const topLabels = top(r.labels.unmappedBrandLabels);
  const otherLabels = top(r.labels.unmappedLabels);
  const lines = [
    `source            ${source} (${r.format})`,
    `rows read         ${r.rowsRead} (${r.rangesRead} ranges)`,
    `ranges accepted   ${r.rows.length} (+${r.coBadged} co-badged, ${r.duplicates} duplicates merged)`,
    `rows rejected     ${r.rejected.length}${r.rejected.length ? `: ${describe(r.rejected, 5)}` : ''}`,
    `unmapped brands   ${sum(r.labels.unmappedBrandLabels)} rows${topLabels ? `: ${topLabels}` : ''}`,
    `other unmapped    ${sum(r.labels.unmappedLabels)} labels${otherLabels ? ` (field left out): ${otherLabels}` : ''}`,
    `ranges            ${r.dataRangeCount} data, ${r.schemeRangeCount} scheme`,
    `records           ${r.recordCount} (${r.stringCount} strings)`,
    `bytes             ${r.artifact.byteLength} (gzip ${gzip}); data index ${r.dataIndexBytes} = ` +
      `${(r.dataIndexBytes / r.dataRangeCount).toFixed(2)} B/range; record table ${r.recordTableBytes}`,
    `verified          ${r.verify.checkedRows} rows at ${r.verify.checkedKeys} keys, 0 failures, ` +
      `${r.verify.shadowedRows} rows fully overridden by narrower rows`,
    `seconds           ${r.seconds.toFixed(2)}`,
    `written           ${relative(process.cwd(), out)}`,
  ];
  console.error(lines.map((l) => `[build:data] ${l}`).join('\n'));
}

function sum(m: Map<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

function fail(message: string): never {
  console.error(`[build:data] error: ${message}`);
  process.exit(1);
}

await main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
