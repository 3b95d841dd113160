/**
 * Builds data/bin-index.bin, the compiled BIN index the Worker imports.
 *
 *   npm run build:data            every layer of data/bin-source.json, in precedence order
 *   npm run build:data -- --source F [--format NAME] [--out FILE]
 *       one source alone (benchmarks, evaluation data), data/ untouched unless --out says so
 *   npm run data:refresh -- --source venelinkochev|iannuttall|binlist [--file F] [--url U]
 *   npm run data:refresh -- --source <path-or-url> [--format NAME] [--layer NAME]
 *       downloads or reads a source, builds every layer with it in place (replacing the layer of
 *       the same name, or adding it last), and only when that verifies writes it into data/ with
 *       its NOTICE, records its SHA-256 in data/bin-source.json, writes data/refresh-report.md
 *       (what changes against the current index) and the new index.
 *
 * Formats: binlist, venelinkochev, iannuttall, openbiin, canonical, overrides (detected from the
 * header when --format is not given). Exits 1 on a broken source, printing the offending lines.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BrokenSourceError, buildIndex } from './bin-data/build';
import { importerNamed, IMPORTERS } from './bin-data/importers/index';
import { dataVersion, readSourcesConfig, sha256Hex } from './bin-data/layers';
import { buildConfigured, DataCommandError, refresh, summary, utf8, writeArtifact, type Io } from './bin-data/refresh';
import { download, NAMED_SOURCES } from './bin-data/sources';
import { readFile } from 'node:fs/promises';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `usage: npm run build:data [-- --source <path-or-url>] [--format <name>] [--out <file>] [--quiet]
       npm run data:refresh -- --source <name|path|url> [--format <name>] [--layer <name>]
                               [--file <downloaded file>] [--url <mirror>] [--force]
named sources: ${NAMED_SOURCES.map((s) => `${s.name} (${s.licence})`).join(', ')}
formats: ${IMPORTERS.map((i) => i.name).join(', ')} (detected from the header when not given)
--data-dir picks another data directory (default: data/); --force lets data:refresh replace the
index with a build of under half as many rows.`;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        source: { type: 'string' },
        format: { type: 'string' },
        layer: { type: 'string' },
        file: { type: 'string' },
        url: { type: 'string' },
        'data-dir': { type: 'string' },
        out: { type: 'string' },
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
  const dataDir = resolve(values['data-dir'] ?? join(ROOT, 'data'));
  const out = resolve(values.out ?? join(dataDir, 'bin-index.bin'));
  const io: Io = {
    log: (m) => {
      if (!values.quiet) console.error(`[build:data] ${m}`);
    },
    write: (s) => {
      if (!values.quiet) process.stderr.write(s);
    },
    tty: process.stderr.isTTY === true,
  };
  const print = (lines: string[]): void => console.error(lines.map((l) => `[build:data] ${l}`).join('\n'));

  if (values.save) {
    if (values.source === undefined) throw new DataCommandError(`data:refresh needs --source\n${USAGE}`);
    const outcome = await refresh({
      dataDir,
      source: values.source,
      format: values.format,
      layer: values.layer,
      file: values.file,
      url: values.url,
      force: values.force,
      out,
      io,
    });
    print(
      summary(
        `data/bin-source.json, layer ${outcome.layer.name} refreshed`,
        out,
        outcome.built.result,
        outcome.built.dataVersion,
      ),
    );
    console.log(outcome.report);
    io.log(`report written to ${join(dataDir, 'refresh-report.md')}; review it and the diff of data/ before shipping`);
    return;
  }

  if (values.source !== undefined) {
    // One source alone, as before layers: benchmarks and evaluation data.
    const importer = values.format === undefined ? undefined : importerNamed(values.format);
    if (values.format !== undefined && !importer) {
      throw new DataCommandError(
        `unknown --format ${values.format}; one of: ${IMPORTERS.map((i) => i.name).join(', ')}`,
      );
    }
    io.log(`reading ${values.source}`);
    const bytes = /^https?:\/\//.test(values.source)
      ? await download(values.source)
      : new Uint8Array(
          await readFile(values.source).catch((e: Error) => fail(`cannot read ${values.source}: ${e.message}`)),
        );
    const builtAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const version = dataVersion([{ name: 'source', sha256: sha256Hex(bytes) }], builtAt);
    let result;
    try {
      result = buildIndex(utf8(bytes, values.source), { importer, progress: io.log, builtAt, provenance: version });
    } catch (e) {
      if (e instanceof BrokenSourceError) fail(`broken source ${values.source}: ${e.message}`);
      throw e;
    }
    await writeArtifact(out, result.artifact);
    print(summary(`${values.source} (${result.format})`, out, result, version));
    return;
  }

  const config = await readSourcesConfig(dataDir);
  io.log(`building ${config.layers.map((l) => l.name).join(' > ')}`);
  const built = await buildConfigured(dataDir, config, { progress: io.log });
  await writeArtifact(out, built.result.artifact);
  print(summary('data/bin-source.json', out, built.result, built.dataVersion));
}

function fail(message: string): never {
  console.error(`[build:data] error: ${message}`);
  process.exit(1);
}

await main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));
