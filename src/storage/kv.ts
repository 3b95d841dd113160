import { withDeadline, StorageError } from './storage-error';

/**
 * Workers KV's records: their keys, TTLs and reads. The Durable Objects (each in its domain's folder) are the only
 * writers of KV (their projections, `projection-outbox.ts`) and the only code that touches their own
 * storage; the Worker only reads KV where a stale answer is acceptable. Every record carries a logical `expiresAt` (ms since the epoch)
 * checked on every read, because KV's own expiry is approximate and cannot be shorter than 60
 * seconds; the KV TTL is set to at least that (KV rejects less, locally as well).
 *
 * KV is eventually consistent and has no compare-and-set: a write is visible at once in the
 * location that made it and within about 60 seconds elsewhere, and a read of a missing key may
 * be cached as "missing" for up to 60 seconds. So no decision is made from a KV read: the
 * Durable Object that owns the state makes it, and writes its KV projection (docs/storage.md).
 */

export const MIN_KV_TTL_SECONDS = 60;

export interface Stored {
  expiresAt: number;
}

/** One KV namespace with the deadline every call gets. */
export interface KvAccess {
  kv: KVNamespace;
  timeoutMs: number;
}

/** Reads a JSON record; undefined when absent or logically expired. */
export async function readRecord<T extends Stored>(
  { kv, timeoutMs }: KvAccess,
  key: string,
  now: number,
): Promise<T | undefined> {
  const value = await withDeadline(kv.get<T>(key, 'json'), timeoutMs, `KV get ${prefixOf(key)}`);
  return liveRecord(value, key, now);
}

function liveRecord<T extends Stored>(value: T | null, key: string, now: number): T | undefined {
  if (value === null) return undefined;
  if (typeof value !== 'object' || typeof value.expiresAt !== 'number') {
    throw new StorageError(`record under ${prefixOf(key)} has no expiresAt`);
  }
  return value.expiresAt > now ? value : undefined;
}

/**
 * The KV TTL of a record that ends at `expiresAt`: until then, and at least the 60 s KV accepts.
 * A record that cannot expire (NaN, Infinity) is a bug upstream, never something to store.
 */
export function kvTtlSeconds(key: string, expiresAt: number, now: number): number {
  if (!Number.isFinite(expiresAt)) throw new Error(`record under ${prefixOf(key)} has no finite expiresAt`);
  return Math.max(MIN_KV_TTL_SECONDS, Math.ceil((expiresAt - now) / 1000));
}

/** Key prefix only, for messages: keys may hold merchant references, never card numbers. */
export function prefixOf(key: string): string {
  return key.split(':', 2).join(':');
}
