/** Measures one dataset: build, artifact size, start-up, lookups and memory of each structure. */
import { gzipSync } from 'node:zlib';
import { BinIndex } from '../../src/bin/bin-index';
import { buildIndex } from '../bin-data/build';
import type { Importer } from '../bin-data/source-row';
import { checkAgreement, type Agreement } from './agreement';
import { PrefixMapBaseline, SortedArrayBaseline, ownedRows } from './baselines';
import { arrayLoop, compactFindLoop, compactRawLoop, mapLoop } from './loops';
import {
  gc,
  lookupsPerSecond,
  measureBuild,
  median,
  memoryDelta,
  settledMemory,
  sink,
  type MemoryDelta,
} from './measure';
import { benchPans } from './pans';

export interface Dataset {
  name: string;
  /** Reads the CSV; only called once, and the text is dropped after the build. */
  read: () => Promise<string>;
  importer?: Importer;
}

export interface BenchOptions {
  lookups: number;
  runs: number;
  agreementSample: number;
  log: (message: string) => void;
}

export interface StructureResult {
  structure: string;
  buildSeconds?: number;
  /** Entries the structure holds: rows for the array, keys for the Map. */
  entries?: number;
  lookupsPerSecond: number;
  /** Retained once built; undefined for a second line timing the same structure. */
  memory?: MemoryDelta;
  /** Compact index only: retained after the timed lookups (its string cache filled). */
  memoryAfterLookups?: MemoryDelta;
}

export interface DatasetResult {
  name: string;
  format: string;
  buildSeconds: number;
  artifactBytes: number;
  gzipBytes: number;
  dataIndexBytes: number;
  dataRangeCount: number;
  recordTableBytes: number;
  recordCount: number;
  /** Median ms from ArrayBuffer to the first answer, and the first (coldest) run. */
  readyMs: number;
  readyFirstMs: number;
  compact: StructureResult;
  compactRaw: StructureResult;
  array: StructureResult;
  map: StructureResult;
  agreement: Agreement;
}

const READY_RUNS = 21;

/**
 * ArrayBuffer → BinIndex → one lookup, on a fresh copy each run so that nothing is cached. A
 * collection before each run keeps the bench's own garbage (a million PAN strings) from being
 * collected inside the timed window.
 */
function readyTimes(artifact: ArrayBuffer, pan: string): number[] {
  const times: number[] = [];
  for (let r = 0; r < READY_RUNS; r++) {
    const copy = artifact.slice(0);
    gc();
    const began = performance.now();
    const index = BinIndex.fromArrayBuffer(copy);
    sink.value += index.find(pan)?.record.binLength ?? 0;
    times.push(performance.now() - began);
  }
  return times;
}

/**
 * Runs every measurement on one dataset. Throws (BrokenSourceError) when the source cannot be
 * built. Structures are built one after the other and kept alive, so that each memory delta is
 * that structure's alone.
 */
export async function runDataset(dataset: Dataset, options: BenchOptions): Promise<DatasetResult> {
  const { runs } = options;
  const log = (m: string): void => options.log(`${dataset.name}: ${m}`);
  /** Progress of one structure's timed lookups, named. */
  const passes = (what: string) => (m: string) => log(`${what}: ${m}`);
  log('reading the source and building the index (import, layers, compile, verify)');
  // The text is not kept in a variable: it must be garbage before the memory samples.
  const built = buildIndex(await dataset.read(), { importer: dataset.importer });
  const gzipBytes = gzipSync(new Uint8Array(built.artifact), { level: 9 }).length;
  log(`drawing ${options.lookups.toLocaleString('en-US')} card numbers`);
  const pans = benchPans(built.rows, options.lookups, 7);
  log(`start-up, ${READY_RUNS} runs`);
  const ready = readyTimes(built.artifact, pans[0]!);

  log('compact index: loading');
  const compactBuild = measureBuild(() => BinIndex.fromArrayBuffer(built.artifact.slice(0)));
  const index = compactBuild.value;
  const compactRate = lookupsPerSecond(compactFindLoop(index), pans, runs, passes('compact index `find`'));
  const rawRate = lookupsPerSecond(compactRawLoop(index), pans, runs, passes('compact index, record id only'));
  // Records are decoded on first use and cached: after a million lookups most are.
  const compactAfter = memoryDelta(compactBuild.before, settledMemory());

  log('sorted array baseline: building');
  const arrayBuild = measureBuild(() => new SortedArrayBaseline(ownedRows(built.rows)));
  const arrayRate = lookupsPerSecond(arrayLoop(arrayBuild.value), pans, runs, passes('sorted array baseline'));

  log('Map baseline: building');
  const mapBuild = measureBuild(() => new PrefixMapBaseline(ownedRows(built.rows)));
  const mapRate = lookupsPerSecond(mapLoop(mapBuild.value), pans, runs, passes('Map baseline'));

  log(`agreement on ${Math.min(options.agreementSample, pans.length).toLocaleString('en-US')} card numbers`);
  const agreement = checkAgreement(index, arrayBuild.value, mapBuild.value, pans.slice(0, options.agreementSample));
  return {
    name: dataset.name,
    format: built.format,
    buildSeconds: built.seconds,
    artifactBytes: built.artifact.byteLength,
    gzipBytes,
    dataIndexBytes: built.dataIndexBytes,
    dataRangeCount: built.dataRangeCount,
    recordTableBytes: built.recordTableBytes,
    recordCount: built.recordCount,
    readyMs: median(ready),
    readyFirstMs: ready[0]!,
    compact: {
      structure: 'compact index `find`',
      lookupsPerSecond: compactRate,
      memory: compactBuild.memory,
      memoryAfterLookups: compactAfter,
    },
    compactRaw: { structure: 'compact index, record id only', lookupsPerSecond: rawRate },
    array: {
      structure: 'baseline: sorted array + binary search',
      buildSeconds: arrayBuild.seconds,
      entries: arrayBuild.value.size,
      lookupsPerSecond: arrayRate,
      memory: arrayBuild.memory,
    },
    map: {
      structure: 'baseline: Map of 8/6-digit prefixes',
      buildSeconds: mapBuild.seconds,
      entries: mapBuild.value.size,
      lookupsPerSecond: mapRate,
      memory: mapBuild.memory,
    },
    agreement,
  };
}
