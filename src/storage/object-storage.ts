import { MAX_STORAGE_TIMEOUT_MS } from '../config/settings';

/**
 * How the Durable Objects reach KV for their projections (outbox.ts): the SESSIONS binding, each
 * write with the longest storage deadline. A seam for the tests only: the fault harness
 * (test/worker/faulty-env.ts) swaps `kv` to fail, hang or hold back the objects' own writes and to
 * enforce KV's one write per second per key (the objects run in the tests' isolate). Nothing in
 * the service changes it.
 */
/** Backoff of an object's failed KV write or event append: 1 s (by default), doubling, at most a minute. */
export const RETRY_BASE_MS = 1_000;
export const RETRY_MAX_MS = 60_000;
/** KV accepts one write a second to a key (projection-outbox.ts keeps to it). */
export const KEY_WRITE_INTERVAL_MS = 1_000;

export const objectStorage = {
  kv: (env: Env): KVNamespace => env.SESSIONS,
  timeoutMs: MAX_STORAGE_TIMEOUT_MS,
  retryBaseMs: RETRY_BASE_MS,
  /**
   * The least time between two writes of one key: KV's second. The tests shorten it (with the
   * harness's emulation of KV's limit, test/worker/kv-write-limit.ts, at the same interval) so that
   * they do not wait a second for each write.
   */
  keyWriteIntervalMs: KEY_WRITE_INTERVAL_MS,
};
