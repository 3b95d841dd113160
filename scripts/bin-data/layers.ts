/**
 * data/bin-source.json: the BIN sources the embedded index is built from, in precedence order.
 *
 *   { "layers": [
 *       { "name": "overrides", "source": "overrides.csv", "format": "overrides" },
 *       { "name": "binlist", "source": "binlist/ranges.csv", "format": "binlist", "sha256": "…" },
 *       { "name": "venelinkochev", "source": "sources/venelinkochev/bin-list-data.csv",
 *         "format": "venelinkochev", "url": "https://…", "retrieved": "2026-…", "sha256": "…" } ] }
 *
 * Paths are relative to the data directory. A layer with a recorded `sha256` must still hash to
 * it: the build refuses a source that changed since it was reviewed and recorded (run
 * data:refresh again, or edit the file and drop the hash, as overrides.csv does by design).
 * The older one-source form `{ "source": "data/…", "format": "…" }` (path relative to the
 * project root) is still read.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative } from 'node:path';

export interface LayerConfig {
  name: string;
  /** The CSV file, relative to the data directory (or absolute). */
  source: string;
  format?: string;
  /** SHA-256 (hex) of the file as recorded by data:refresh; the build checks it when present. */
  sha256?: string;
  /** Where data:refresh downloaded the file from. */
  url?: string;
  /** When data:refresh downloaded or took the file (ISO 8601). */
  retrieved?: string;
  /** The data's licence (SPDX id), for a reader of this file. */
  licence?: string;
}

export interface SourcesConfig {
  $comment?: string;
  layers: LayerConfig[];
}

export const CONFIG_NAME = 'bin-source.json';

const LAYER_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** Reads and checks data/bin-source.json (either form). */
export async function readSourcesConfig(dataDir: string): Promise<SourcesConfig> {
  const path = join(dataDir, CONFIG_NAME);
  const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<SourcesConfig> & {
    source?: string;
    format?: string;
  };
  if (parsed.layers === undefined && typeof parsed.source === 'string') {
    // The one-source form, its path relative to the project root.
    const source = relative(dataDir, join(dirname(dataDir), parsed.source));
    return { layers: [{ name: parsed.format ?? 'source', source, format: parsed.format }] };
  }
  if (!Array.isArray(parsed.layers) || parsed.layers.length === 0) {
    throw new Error(`${path}: "layers" must list at least one source`);
  }
  const names = new Set<string>();
  for (const layer of parsed.layers) {
    if (typeof layer.name !== 'string' || !LAYER_NAME.test(layer.name)) {
      throw new Error(`${path}: layer name ${JSON.stringify(layer.name)} must be lower-case letters, digits and -`);
    }
    if (names.has(layer.name)) throw new Error(`${path}: layer ${layer.name} is listed twice`);
    names.add(layer.name);
    if (typeof layer.source !== 'string' || layer.source === '') {
      throw new Error(`${path}: layer ${layer.name} has no source`);
    }
  }
  return parsed as SourcesConfig;
}

export async function writeSourcesConfig(dataDir: string, config: SourcesConfig): Promise<void> {
  await writeFile(join(dataDir, CONFIG_NAME), `${JSON.stringify(config, null, 2)}\n`);
}

/** The absolute path of a layer's file. */
export function layerPath(dataDir: string, layer: LayerConfig): string {
  return isAbsolute(layer.source) ? layer.source : join(dataDir, layer.source);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Hex digits of each source's SHA-256 named in the data version. */
export const HASH_PREFIX = 12;

/**
 * The data version the Worker names in every lookup answer (`Bin-Data-Version`): each layer and
 * the first 12 hex digits of its file's SHA-256, in precedence order, then the build time.
 *
 * @example dataVersion([{ name: 'binlist', sha256: 'a1b2…' }], new Date(0))
 *   // 'binlist@a1b2c3d4e5f6;built=1970-01-01T00:00:00Z'
 */
export function dataVersion(layers: readonly { name: string; sha256: string }[], builtAt: Date): string {
  const sources = layers.map((l) => `${l.name}@${l.sha256.slice(0, HASH_PREFIX)}`).join(',');
  return `${sources};built=${builtAt.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}
