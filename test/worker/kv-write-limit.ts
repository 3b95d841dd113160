import { KEY_WRITE_INTERVAL_MS, objectStorage } from '../../src/storage/object-storage';

/**
 * Cloudflare KV's one write per second per key, made visible under Miniflare (which does not
 * enforce it): a put or delete of a key written less than a second earlier fails, as KV answers
 * it on Cloudflare (429). One limiter is one KV namespace: wrap every path that writes it (the
 * Worker's and the objects') with the same limiter.
 *
 * The second is the objects' (`objectStorage.keyWriteIntervalMs`), read at each write: a test
 * that shortens it (see `quickObjects` in faulty-env.ts) shortens KV's limit with it, so that the
 * objects keep to the limit this enforces, never to a longer or shorter one.
 */
export const KV_WRITE_INTERVAL_MS = KEY_WRITE_INTERVAL_MS;

export class KvWriteLimit {
  /** The least time between two writes of one key: the objects' (KV's second, unless a test shortened it). */
  get intervalMs(): number {
    return objectStorage.keyWriteIntervalMs;
  }

  /** Every write that reached KV: key, operation and when. */
  readonly writes: { key: string; op: 'put' | 'delete'; at: number }[] = [];
  /** Writes refused for coming too soon. */
  refused = 0;
  private readonly lastWrite = new Map<string, number>();

  wrap(inner: KVNamespace): KVNamespace {
    return new Proxy(inner, {
      get: (target, property) => {
        const value = Reflect.get(target, property) as unknown;
        if (typeof value !== 'function') return value;
        if (property !== 'put' && property !== 'delete') return value.bind(target);
        return async (key: string, ...rest: unknown[]) => {
          const now = Date.now();
          const last = this.lastWrite.get(key);
          if (last !== undefined && now - last < this.intervalMs) {
            this.refused++;
            throw new Error(`KV ${String(property).toUpperCase()} failed: 429 Too Many Requests`);
          }
          this.lastWrite.set(key, now);
          this.writes.push({ key, op: property, at: now });
          return (await Reflect.apply(value, target, [key, ...rest])) as unknown;
        };
      },
    });
  }

  /** The writes of one key, in order. */
  writesOf(key: string): { op: 'put' | 'delete'; at: number }[] {
    return this.writes.filter((w) => w.key === key);
  }
}
