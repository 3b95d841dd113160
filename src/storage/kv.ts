/**
 * The only code that touches Workers KV (the Durable Objects in `guards/` are the only code that
 * touches their own storage). Every record carries a logical `expiresAt` (ms since
 * the epoch) checked on every read, because KV's own expiry is approximate and cannot be shorter
 * than 60 seconds; the KV TTL is set to at least that (KV rejects less, locally as well).
 *
 * KV is eventually consistent and has no compare-and-set: a write is visible at once in the
 * location that made it and within about 60 seconds elsewhere, and a read of a missing key may
 * be cached as "missing" for up to 60 seconds. So no decision is made from a KV read here: a
 * Durable Object makes it, and the KV record is written under its lease (storage-schema.md).
 */

/** KV threw, timed out, or held something that is not ours: answered 503 with Retry-After. */
export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageError';
  }
}

export const MIN_KV_TTL_SECONDS = 60;
/** A KV call that takes longer than this is treated as a storage failure. */
export const KV_TIMEOUT_MS = 5_000;

export interface Stored {
  expiresAt: number;
}

/** Reads a JSON record; undefined when absent or logically expired. */
export async function readRecord<T extends Stored>(
  kv: KVNamespace,
  key: string,
  now = Date.now(),
): Promise<T | undefined> {
  const value = await withTimeout(kv.get<T>(key, 'json'), `get ${prefixOf(key)}`);
  if (value === null) return undefined;
  if (typeof value !== 'object' || typeof value.expiresAt !== 'number') {
    throw new StorageError(`record under ${prefixOf(key)} has no expiresAt`);
  }
  return value.expiresAt > now ? value : undefined;
}

/** Writes a JSON record that KV keeps until its logical expiry (at least 60 s). */
export async function writeRecord<T extends Stored>(
  kv: KVNamespace,
  key: string,
  value: T,
  now = Date.now(),
): Promise<void> {
  // A record that cannot expire (NaN, Infinity) is a bug upstream, never something to store.
  if (!Number.isFinite(value.expiresAt)) throw new Error(`record under ${prefixOf(key)} has no finite expiresAt`);
  const expirationTtl = Math.max(MIN_KV_TTL_SECONDS, Math.ceil((value.expiresAt - now) / 1000));
  await withTimeout(kv.put(key, JSON.stringify(value), { expirationTtl }), `put ${prefixOf(key)}`);
}

async function withTimeout<T>(operation: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageError(`KV ${what} timed out after ${KV_TIMEOUT_MS} ms`)), KV_TIMEOUT_MS);
  });
  try {
    return await Promise.race([operation, timeout]);
  } catch (e) {
    if (e instanceof StorageError) throw e;
    throw new StorageError(`KV ${what} failed`, { cause: e });
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** Key prefix only, for messages: keys may hold merchant references, never card numbers. */
function prefixOf(key: string): string {
  return key.split(':', 2).join(':');
}
