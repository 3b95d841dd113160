/**
 * The data commands behind scripts/build-data.ts: building the embedded index from the layers of
 * data/bin-source.json, and refreshing one layer from a named source, a path or a URL.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BinIndex } from '../../src/bin/bin-index';
import { BrokenSourceError, buildLayers, describe, type BuildResult, type LayerInput } from './build';
import { diffIndexes, renderDiff, type DiffReport } from './diff';
import { importerNamed, IMPORTERS } from './importers/index';
import {
  dataVersion,
  layerPath,
  readSourcesConfig,
  sha256Hex,
  writeSourcesConfig,
  type LayerConfig,
  type SourcesConfig,
} from './layers';
import { readRawRows } from './read-csv';
import { download, DownloadError, namedSource, noticeFor, progressBar, type NamedSource } from './sources';

/** A failure the command reports as one line and exit code 1. */
export class DataCommandError extends Error {}

export interface Io {
  /** Progress and summary lines (stderr). */
  log: (message: string) => void;
  /** Raw progress output (the download bar). */
  write: (text: string) => void;
  tty: boolean;
}

/** data:refresh refuses a build that gives fewer than this share of the current index's rows. */
export const MIN_REFRESH_SHARE = 0.5;

export interface BuiltData {
  result: BuildResult;
  layers: (LayerConfig & { sha256: string })[];
  dataVersion: string;
}

/** The text of a source file, which must be UTF-8 (a Latin-1 file would garble issuer names). */
export function utf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DataCommandError(`${what} is not UTF-8: convert it first (e.g. iconv -f latin1 -t utf-8)`);
  }
}

async function readBytes(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    throw new DataCommandError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

/**
 * Builds every layer of the configuration. `replaced` supplies the bytes of a layer about to be
 * written (data:refresh builds before it writes anything). A layer with a recorded SHA-256 that
 * its file no longer matches is refused.
 */
export async function buildConfigured(
  dataDir: string,
  config: SourcesConfig,
  options: { builtAt?: Date; progress?: (m: string) => void; replaced?: { name: string; bytes: Uint8Array } } = {},
): Promise<BuiltData> {
  const builtAt = options.builtAt ?? new Date(Math.floor(Date.now() / 1000) * 1000);
  const inputs: LayerInput[] = [];
  const layers: BuiltData['layers'] = [];
  for (const layer of config.layers) {
    const path = layerPath(dataDir, layer);
    const bytes = options.replaced?.name === layer.name ? options.replaced.bytes : await readBytes(path);
    const sha256 = sha256Hex(bytes);
    if (layer.sha256 !== undefined && layer.sha256 !== sha256) {
      throw new DataCommandError(
        `layer ${layer.name}: ${relative(process.cwd(), path)} has SHA-256 ${sha256.slice(0, 12)}…, ` +
          `not the ${layer.sha256.slice(0, 12)}… recorded in bin-source.json: the file changed since it was ` +
          `reviewed. Run data:refresh for it again, or remove its sha256 if the edit is intended.`,
      );
    }
    const importer = layer.format === undefined ? undefined : importerNamed(layer.format);
    if (layer.format !== undefined && !importer) {
      throw new DataCommandError(`layer ${layer.name}: unknown format ${layer.format}`);
    }
    inputs.push({ name: layer.name, text: utf8(bytes, path), importer });
    layers.push({ ...layer, sha256 });
  }
  const version = dataVersion(layers, builtAt);
  try {
    const result = buildLayers(inputs, { builtAt, provenance: version, progress: options.progress });
    return { result, layers, dataVersion: version };
  } catch (e) {
    if (e instanceof BrokenSourceError) throw new DataCommandError(`broken source: ${e.message}`);
    throw e;
  }
}

export interface RefreshOptions {
  dataDir: string;
  /** A named source (venelinkochev, iannuttall, binlist), a file path or an http(s) URL. */
  source: string;
  format?: string;
  /** The layer to replace or add; defaults to the source's name, else its format. */
  layer?: string;
  /** A named source's file, downloaded elsewhere (for a machine without internet). */
  file?: string;
  /** Another URL for a named source (a mirror; the tests' local server). */
  url?: string;
  /** Replace even when the build shrinks by more than half. */
  force?: boolean;
  /** The index to write (and to diff against). */
  out: string;
  builtAt?: Date;
  io: Io;
}

export interface RefreshOutcome {
  built: BuiltData;
  diff: DiffReport;
  report: string;
  layer: LayerConfig;
}

const isUrl = (s: string): boolean => /^https?:\/\//i.test(s);

/**
 * data:refresh: takes a source, builds every layer with it in place, and only when the build
 * verifies writes the source (with its NOTICE), data/bin-source.json, the diff report and the
 * index. Nothing in data/ changes when any step fails.
 */
export async function refresh(options: RefreshOptions): Promise<RefreshOutcome> {
  const { dataDir, io } = options;
  const named = isUrl(options.source) ? undefined : namedSource(options.source);
  const retrieved = (options.builtAt ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');

  let bytes: Uint8Array;
  let url: string | undefined;
  if (options.file !== undefined) {
    bytes = await readBytes(options.file);
  } else if (named || isUrl(options.source)) {
    url = options.url ?? named?.url ?? options.source;
    io.log(`downloading ${url}`);
    try {
      bytes = await download(url, {
        onProgress: progressBar(`[data:refresh] ${named?.name ?? 'source'}`, io.write, io.tty),
      });
    } catch (e) {
      if (!(e instanceof DownloadError)) throw e;
      const instead = named
        ? `download ${named.url} on a machine with internet, then run: npm run data:refresh -- --source ${named.name} --file <the file>`
        : 'download the file elsewhere and pass its path as --source';
      throw new DataCommandError(e.offline ? `${e.message}. To refresh offline, ${instead}` : e.message);
    }
  } else {
    bytes = await readBytes(options.source);
  }
  const text = utf8(bytes, options.file ?? url ?? options.source);

  let format = options.format ?? named?.format;
  if (format !== undefined && !importerNamed(format)) {
    throw new DataCommandError(`unknown --format ${format}; one of: ${IMPORTERS.map((i) => i.name).join(', ')}`);
  }
  if (format === undefined) {
    try {
      format = readRawRows(text.slice(0, text.indexOf('\n') + 1 || undefined)).importer.name;
    } catch (e) {
      throw new DataCommandError(`broken source ${options.source}: ${(e as Error).message}`);
    }
  }
  const layerName = options.layer ?? named?.name ?? format;

  const config = await readSourcesConfig(dataDir);
  const existing = config.layers.find((l) => l.name === layerName);
  const sourcePath = named ? undefined : isUrl(options.source) ? undefined : resolve(options.source);
  const target = existing
    ? layerPath(dataDir, existing)
    : sourcePath !== undefined && !relative(dataDir, sourcePath).startsWith('..')
      ? sourcePath
      : join(
          dataDir,
          'sources',
          layerName,
          named?.fileName ?? basename(new URL(url ?? `file://${sourcePath}`).pathname) ?? 'source.csv',
        );
  const layer: LayerConfig = {
    name: layerName,
    source: relative(dataDir, target),
    format,
    sha256: sha256Hex(bytes),
    ...(url !== undefined ? { url } : {}),
    retrieved,
    ...(named ? { licence: named.licence } : existing?.licence ? { licence: existing.licence } : {}),
  };
  const layers = existing ? config.layers.map((l) => (l === existing ? layer : l)) : [...config.layers, layer];
  const next: SourcesConfig = { ...config, layers };
  io.log(`layers: ${layers.map((l) => (l === layer ? `${l.name} (new)` : l.name)).join(' > ')}`);

  const built = await buildConfigured(dataDir, next, {
    builtAt: options.builtAt,
    progress: io.log,
    replaced: { name: layerName, bytes },
  });

  const current = await readIndex(options.out);
  if (current && !options.force && built.result.rows.length < current.sourceRowCount * MIN_REFRESH_SHARE) {
    throw new DataCommandError(
      `the new build has ${built.result.rows.length} rows, the current index ${current.sourceRowCount}: ` +
        'refusing to shrink the embedded data by more than half (add --force if you mean it)',
    );
  }
  const diff = diffIndexes(current, BinIndex.fromArrayBuffer(built.result.artifact));
  const report = renderDiff(
    diff,
    `BIN data refresh ${retrieved}: layer ${layerName} from ${url ?? options.file ?? options.source}`,
  );

  // Everything verified: write.
  await mkdir(dirname(target), { recursive: true });
  if (sourcePath !== target) await writeFile(target, bytes);
  if (named) {
    await writeFile(
      join(dirname(target), 'NOTICE'),
      noticeFor(named, basename(target), url ?? `${named.url} (taken from ${options.file})`, retrieved, layer.sha256!),
    );
  } else if (sourcePath !== undefined && sourcePath !== target) {
    // Keep the data's licence terms with it (binlist's Apache-2.0 NOTICE, for one).
    for (const name of ['LICENSE', 'NOTICE']) {
      await copyFile(join(dirname(sourcePath), name), join(dirname(target), name)).catch(() => undefined);
    }
  }
  await writeSourcesConfig(dataDir, next);
  await writeFile(join(dataDir, 'refresh-report.md'), report);
  await writeArtifact(options.out, built.result.artifact);
  return { built, diff, report, layer };
}

export async function readIndex(path: string): Promise<BinIndex | undefined> {
  try {
    return BinIndex.fromArrayBuffer((await readFile(path)).buffer.slice(0));
  } catch {
    return undefined;
  }
}

export async function writeArtifact(out: string, artifact: ArrayBuffer): Promise<void> {
  try {
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, new Uint8Array(artifact));
  } catch (e) {
    throw new DataCommandError(`cannot write ${out}: ${(e as Error).message}`);
  }
}

/** The build summary: the whole build, then one line per layer. */
export function summary(sourceLabel: string, out: string, r: BuildResult, version?: string): string[] {
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
    `source            ${sourceLabel}`,
    ...(r.layers.length > 1 || version
      ? r.layers.map(
          (l, i) =>
            `layer ${i + 1} ${l.name.padEnd(11)} ${l.format}: ${l.rowsRead} rows read, ${l.accepted} accepted, ` +
            `${l.used} used, ${l.overridden} overridden by other layers, ${l.rejected.length} rejected`,
        )
      : []),
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
      `${r.verify.shadowedRows} rows fully overridden by narrower rows of their own layer`,
    ...(version ? [`data version      ${version}`] : []),
    `seconds           ${r.seconds.toFixed(2)}`,
    `written           ${relative(process.cwd(), out)}`,
  ];
  return lines;
}

function sum(m: Map<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

export type { NamedSource };
