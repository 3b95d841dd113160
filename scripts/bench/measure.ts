/** Timing and memory helpers of the bench. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection. Without `--expose-gc` the flag is switched on at run time and `gc`
 * taken from a fresh context (V8 installs it on contexts created after the flag is set), so
 * `npm run bench` needs no node flags.
 */
export const gc: () => void = (() => {
  // V8 drops the bytecode of functions not run for a few collections; with a collection before
  // every sample that would free the build code's bytecode inside the measured windows and make
  // small structures look smaller (even negative) than they are.
  setFlagsFromString('--no-flush-bytecode');
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

export interface MemorySample {
  heapUsed: number;
  arrayBuffers: number;
}

/** Heap in use after two full collections (the second catches what the first's finalisers freed). */
export function settledMemory(): MemorySample {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers };
}

export interface MemoryDelta {
  /** V8 heap bytes (objects, strings, arrays). */
  heap: number;
  /** ArrayBuffer bytes, which live outside the V8 heap. */
  external: number;
}

export function memoryDelta(before: MemorySample, after: MemorySample): MemoryDelta {
  return { heap: after.heapUsed - before.heapUsed, external: after.arrayBuffers - before.arrayBuffers };
}

/**
 * Builds a structure and measures what it keeps: heap and ArrayBuffer bytes retained once
 * built, after collecting the garbage of building it. Also returns the build time.
 */
export function measureBuild<T>(build: () => T): {
  value: T;
  memory: MemoryDelta;
  seconds: number;
  before: MemorySample;
} {
  const before = settledMemory();
  const began = performance.now();
  const value = build();
  const seconds = (performance.now() - began) / 1000;
  return { value, memory: memoryDelta(before, settledMemory()), seconds, before };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Lookups per second of a loop over all the PANs: one warm-up pass, then `runs` timed passes,
 * median. The loop returns a checksum, accumulated into `sink` so that the JIT cannot drop the
 * work as dead code. `progress` hears of each pass once it is over, outside the timed window
 * (stderr is synchronous on a terminal, a file and a pipe on Linux).
 */
export function lookupsPerSecond(
  loop: (pans: readonly string[]) => number,
  pans: readonly string[],
  runs: number,
  progress: (message: string) => void = () => {},
): number {
  progress(`warm-up pass, ${pans.length.toLocaleString('en-US')} lookups`);
  sink.value += loop(pans);
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    progress(`run ${r + 1}/${runs}`);
    const began = performance.now();
    sink.value += loop(pans);
    rates.push(pans.length / ((performance.now() - began) / 1000));
  }
  progress(`median ${Math.round(median(rates)).toLocaleString('en-US')} lookups/s`);
  return median(rates);
}

/** Checksums of every timed loop; printed at the end so that they are observably used. */
export const sink = { value: 0 };
