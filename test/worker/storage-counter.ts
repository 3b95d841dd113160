import { runInDurableObject } from 'cloudflare:test';
import { vi } from 'vitest';

/**
 * Counts what a Durable Object asks of its storage: each SQLite statement (`sql.exec`) and each
 * call of the storage API (`getAlarm`, `setAlarm`, `deleteAll`, `transactionSync`, …), per call
 * of the object's methods. The objects run in the tests' isolate, so the runtime's storage
 * classes are wrapped where they are defined (their prototypes), and each statement or call is
 * put down to the storage it was made on: an object's `ctx.storage` and `ctx.storage.sql`.
 *
 * What a method does until its promise settles is its call (`in call`); what the object does after
 * that, until the next call of one of its methods, is that call's `after` (the work it left for
 * after the answer: the KV write, the event's append, the alarm set again); what it does before
 * its first method, its `constructor`. The object's methods are wrapped with {@link labelCalls}.
 */

/** Statements and storage calls of one part of one call. */
export interface Tally {
  sql: number;
  /** Storage API calls by name (getAlarm, setAlarm, …). */
  storage: Record<string, number>;
  /** Each statement's first words and each call's name, in order (for a look at a tally that moved). */
  trace: string[];
}

const STORAGE_CALLS = [
  'get',
  'put',
  'delete',
  'list',
  'getAlarm',
  'setAlarm',
  'deleteAlarm',
  'deleteAll',
  'transaction',
  'transactionSync',
  'sync',
] as const;

/** One object's counts, by label (`<method> in call`, `<method> after`, `constructor`). */
class ObjectTally {
  label = 'constructor';
  readonly byLabel = new Map<string, Tally>();

  /** `what`: 'sql' for a statement, else the storage call's name. */
  add(what: string, query?: unknown): void {
    let tally = this.byLabel.get(this.label);
    if (!tally) this.byLabel.set(this.label, (tally = { sql: 0, storage: {}, trace: [] }));
    if (what === 'sql') tally.sql += 1;
    else tally.storage[what] = (tally.storage[what] ?? 0) + 1;
    tally.trace.push(what === 'sql' ? String(query).replace(/\s+/g, ' ').slice(0, 70) : `${what}()`);
  }
}

export class StorageCounter {
  /** Keyed by an object's storage and its `sql` (both point to the same tally). */
  private readonly tallies = new WeakMap<object, ObjectTally>();
  /** While set, nothing is counted: the tests' own look at an object's storage (synchronous). */
  private paused = false;
  private readonly restores: (() => void)[] = [];

  private tallyOf(key: object): ObjectTally {
    let tally = this.tallies.get(key);
    if (!tally) this.tallies.set(key, (tally = new ObjectTally()));
    return tally;
  }

  /**
   * Wraps the runtime's storage classes, found through any object (`probe`: one the counted
   * objects are not, since asking it creates it).
   */
  async install(probe: DurableObjectStub): Promise<void> {
    const [storage, sql] = await runInDurableObject(probe, (_o, state) => [
      Object.getPrototypeOf(state.storage) as Record<string, unknown>,
      Object.getPrototypeOf(state.storage.sql) as Record<string, unknown>,
    ]);
    this.wrap(sql, 'exec', 'sql');
    for (const name of STORAGE_CALLS) if (typeof storage[name] === 'function') this.wrap(storage, name, name);
  }

  private wrap(proto: Record<string, unknown>, name: string, what: string): void {
    const original = proto[name] as (...args: unknown[]) => unknown;
    // Put back as it was: the prototype's own property (its attributes too), or none (inherited).
    const own = Object.getOwnPropertyDescriptor(proto, name);
    this.restores.push(() => {
      if (own) Object.defineProperty(proto, name, own);
      else delete proto[name];
    });
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the wrapper's own `this` is the storage
    const counter = this;
    proto[name] = function (this: object, ...args: unknown[]): unknown {
      if (!counter.paused) counter.tallyOf(this).add(what, args[0]);
      return original.apply(this, args);
    };
  }

  /**
   * Labels each call of `methods` on `proto` (a Durable Object class's prototype) with its name:
   * what the object does during it is its `in call`, what it does after, its `after`.
   */
  labelCalls(proto: object, methods: readonly string[]): void {
    for (const method of methods) {
      const methods = proto as Record<string, (...args: unknown[]) => unknown>;
      const original = methods[method]!;
      const spy = vi.spyOn(methods, method);
      this.restores.push(() => spy.mockRestore());
      // eslint-disable-next-line @typescript-eslint/no-this-alias -- the object's `this` is needed inside
      const counter = this;
      spy.mockImplementation(function (this: { ctx: DurableObjectState }, ...args: unknown[]): unknown {
        const tally = counter.objectTally(this.ctx);
        tally.label = `${method} in call`;
        const settle = (): void => {
          if (tally.label === `${method} in call`) tally.label = `${method} after`;
        };
        try {
          const result = original.apply(this, args);
          if (result instanceof Promise) return result.finally(settle);
          settle();
          return result;
        } catch (e) {
          settle();
          throw e;
        }
      });
    }
  }

  private objectTally(ctx: DurableObjectState): ObjectTally {
    const tally = this.tallyOf(ctx.storage.sql);
    this.tallies.set(ctx.storage, tally);
    return tally;
  }

  /** An object's counts so far, by label; the tally starts again. */
  async take(stub: DurableObjectStub): Promise<Map<string, Tally>> {
    return runInDurableObject(stub, (_o, state) => {
      const tally = this.tallies.get(state.storage.sql) ?? this.tallies.get(state.storage);
      const counts = new Map(tally?.byLabel ?? []);
      tally?.byLabel.clear();
      return counts;
    });
  }

  /** Runs a synchronous look at an object's storage without counting it. */
  uncounted<T>(look: () => T): T {
    this.paused = true;
    try {
      return look();
    } finally {
      this.paused = false;
    }
  }

  /**
   * Puts back every wrapper installed, the last first: each one even when another fails (a test
   * file's `afterAll`, which runs however its tests ended); the first failure is thrown after.
   */
  restore(): void {
    const failures: unknown[] = [];
    for (const restore of this.restores.splice(0).reverse()) {
      try {
        restore();
      } catch (e) {
        failures.push(e);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

/** A tally written compactly: `5 sql, getAlarm 1, setAlarm 1`. */
export function describeTally(t: Tally | undefined): string {
  if (!t) return '0 sql';
  const calls = Object.entries(t.storage)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${n}`);
  return [`${t.sql} sql`, ...calls].join(', ');
}
