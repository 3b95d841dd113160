import { env } from 'cloudflare:workers';
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import worker from '../../src/index';
import { settingsOf } from '../../src/config/settings';
import { objectStorage } from '../../src/storage/object-storage';
import { objectProvider } from '../../src/threeds/live/challenge-watch';
import { threeDsServerOf } from '../../src/threeds/live/three-ds-server';
import type { Fetch } from './helpers';
import { KvWriteLimit } from './kv-write-limit';

/** The objects' storage as the service has it, to put back after a test. */
const DEFAULT_OBJECT_STORAGE = { ...objectStorage };
/** How the objects reach the 3DS Server provider, as the service has it. */
const DEFAULT_OBJECT_PROVIDER = { ...objectProvider };

/**
 * The Worker's environment with its storage wrapped: every KV call, every Durable Object call and
 * every call to the 3DS Server provider (the THREEDS_SERVER binding, live) is recorded, and any
 * one of them can be made to fail on command, either before it reaches the store or provider
 * ("it never happened") or after ("it happened, but the caller saw an error", as when a response
 * is lost or a timeout fires after the commit), or to hang (never answer: the Worker's deadline
 * must end the request). A KV write can also be held back and land later, when the test says so
 * (after the request that made it gave up).
 */

/**
 * One call: its store and operation (a DO method, a KV method, or the provider's path: `auth`), and
 * who made it: the Worker, or a Durable Object writing its projections (`object`, see
 * {@link StorageHarness.throughObjects}).
 */
export type StorageCall = { store: 'kv' | 'do' | 'provider'; op: string; by?: 'object'; key?: string; at?: number };

export interface Fault {
  /** Fails the n-th call (0-based) that matches. */
  nth: number;
  /** Which calls count: KV writes, every DO call, provider calls, or all storage calls (not the provider). */
  of: 'kvWrite' | 'do' | 'provider' | 'any';
  /** Only calls of this operation count (a DO method, a provider path such as `auth`). */
  op?: string;
  /** Only the Worker's calls count, or only the objects' own KV writes (default: either). */
  by?: 'worker' | 'object';
  /**
   * Only KV calls of this key count: objects of earlier tests may still be writing (their alarms
   * retry), through whatever harness is installed.
   */
  key?: string;
  /**
   * Fail before the call reaches storage, after it did, never answer at all, or answer late: the
   * call is made at once and its answer is held back `delayMs` (past the caller's deadline).
   */
  when: 'before' | 'after' | 'hang' | 'late';
  delayMs?: number;
  /** How many matching calls fail in a row, from the n-th on (default 1). */
  times?: number;
}

export class StorageHarness {
  readonly calls: StorageCall[] = [];
  /** The JSON answers of the provider calls that answered (live), in order. */
  readonly providerAnswers: { op: string; body: Record<string, any> }[] = [];
  private fault: Fault | undefined;
  private matched = 0;
  private kvWriteDelayMs = 0;
  /** Whether to hold the next KV write back (of this key only, when a key is given). */
  private holdNextKvWrite: false | { key?: string } = false;
  private readonly held: {
    operation: () => Promise<unknown>;
    answer: { resolve: (value: unknown) => void; reject: (e: unknown) => void };
  }[] = [];
  readonly env: Env;

  /**
   * KV's one write per second per key, for the objects' writes (see {@link throughObjects}): at the
   * objects' interval, KV's second unless the test shortened it ({@link quickObjects}).
   */
  readonly writeLimit = new KvWriteLimit();

  /** `vars` override the environment's vars, e.g. a short `STORAGE_TIMEOUT_MS`. */
  constructor(vars: Partial<Env> = {}) {
    this.env = {
      ...env,
      ...vars,
      SESSIONS: this.kv(env.SESSIONS),
      THREEDS_TRANSACTION: this.namespace(env.THREEDS_TRANSACTION),
      TOKEN_GROUP: this.namespace(env.TOKEN_GROUP),
      EVENT_LOG: this.namespace(env.EVENT_LOG),
      ...(env.THREEDS_SERVER ? { THREEDS_SERVER: this.provider(env.THREEDS_SERVER) } : {}),
    };
  }

  /**
   * Routes the Durable Objects' own KV writes (their projections: outbox.ts) through this harness
   * too, with KV's one write per second per key, recorded with `by: 'object'` and failing on
   * command like the Worker's; `timeoutMs` is their deadline. The objects run in the tests'
   * isolate, so this reaches every object until {@link restoreObjects} (call it in `afterEach`).
   */
  throughObjects(timeoutMs = 1_000, retryBaseMs = DEFAULT_OBJECT_STORAGE.retryBaseMs): this {
    objectStorage.kv = (objectEnv) => this.kv(this.writeLimit.wrap(objectEnv.SESSIONS), 'object');
    objectStorage.timeoutMs = timeoutMs;
    objectStorage.retryBaseMs = retryBaseMs;
    return this;
  }

  /**
   * Routes the transactions' objects' calls to the 3DS Server provider (live authenticate's run,
   * the challenge watch) through this harness, with its vars (ENVIRONMENT=live, the provider's
   * deadline): recorded as `provider` calls and failing on command like the Worker's. The objects
   * run in the tests' isolate with ENVIRONMENT=test, so without this they have no provider.
   */
  providerThroughObjects(): this {
    objectProvider.of = () => {
      const config = settingsOf(this.env).threeDsServer;
      return config ? threeDsServerOf(this.env, config) : undefined;
    };
    return this;
  }

  /** Makes every KV write take this long (a slow write that others overlap). */
  slowKvWrites(ms: number): this {
    this.kvWriteDelayMs = ms;
    return this;
  }

  /**
   * Holds the next KV write back: it reaches KV only when {@link landHeldWrites} is called (its
   * caller, past its deadline by then, may hear of it then: see there).
   */
  holdNextKvWriteUntilLater(key?: string): this {
    this.holdNextKvWrite = key === undefined ? {} : { key };
    return this;
  }

  /**
   * Lets the held KV writes land now, late. With `answering`, the object that made them (a write
   * runs in its context there) also gets their answers as they land, long after its deadline;
   * without, it never hears of them.
   */
  async landHeldWrites(answering?: DurableObjectStub): Promise<void> {
    for (const { operation, answer } of this.held.splice(0)) {
      if (answering === undefined) await operation();
      else await runInDurableObject(answering, () => operation().then(answer.resolve, answer.reject));
    }
  }

  /** Arms one fault; cleared after it fired (`times` times). */
  failOn(fault: Fault): this {
    this.fault = fault;
    this.matched = 0;
    return this;
  }

  /** Whether the armed fault is still waiting for its call (false once it fired, or when none was armed). */
  get armed(): boolean {
    return this.fault !== undefined;
  }

  clear(): this {
    this.fault = undefined;
    this.calls.length = 0;
    return this;
  }

  private readonly contexts: ExecutionContext[] = [];

  /** Calls the Worker with this environment. */
  fetch(request: Request): Promise<Response> {
    const ctx = createExecutionContext();
    this.contexts.push(ctx);
    return worker.fetch(request, this.env, ctx);
  }

  /** Waits for the work the Worker left running after its answers (waitUntil). */
  async settled(): Promise<void> {
    await Promise.all(this.contexts.map((ctx) => waitOnExecutionContext(ctx)));
  }

  count(filter: (c: StorageCall) => boolean): number {
    return this.calls.filter(filter).length;
  }

  private async run<T>(call: StorageCall, operation: () => Promise<T>): Promise<T> {
    this.calls.push({ ...call, at: Date.now() });
    const fault = this.fault;
    const counts =
      fault !== undefined &&
      (fault.op === undefined || fault.op === call.op) &&
      (fault.by === undefined || (fault.by === 'object') === (call.by === 'object')) &&
      (fault.key === undefined || fault.key === call.key) &&
      ((fault.of === 'any' && call.store !== 'provider') ||
        (fault.of === 'kvWrite' && call.store === 'kv' && (call.op === 'put' || call.op === 'delete')) ||
        (fault.of === 'do' && call.store === 'do') ||
        (fault.of === 'provider' && call.store === 'provider'));
    const index = counts ? this.matched++ : -1;
    const fire = counts && index >= fault.nth && index < fault.nth + (fault.times ?? 1);
    if (fire && index === fault.nth + (fault.times ?? 1) - 1) this.fault = undefined;
    if (fire && fault.when === 'before') throw new Error(`injected failure before ${call.store} ${call.op}`);
    if (fire && fault.when === 'hang') return new Promise<T>(() => {});
    const isKvWrite = call.store === 'kv' && (call.op === 'put' || call.op === 'delete');
    const hold = this.holdNextKvWrite;
    if (isKvWrite && hold && (hold.key === undefined || hold.key === call.key)) {
      this.holdNextKvWrite = false;
      return new Promise<T>((resolve, reject) => {
        this.held.push({
          operation,
          answer: { resolve: resolve as (value: unknown) => void, reject },
        });
      });
    }
    if (isKvWrite && this.kvWriteDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.kvWriteDelayMs));
    const result = await operation();
    if (fire && fault.when === 'late') await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 5_000));
    else if (fire) throw new Error(`injected failure after ${call.store} ${call.op}`);
    return result;
  }

  private kv(inner: KVNamespace, by?: 'object'): KVNamespace {
    return new Proxy(inner, {
      get: (target, property) => {
        const value = Reflect.get(target, property) as unknown;
        if (
          typeof value !== 'function' ||
          !['get', 'put', 'delete', 'list', 'getWithMetadata'].includes(String(property))
        )
          return value;
        return (...args: unknown[]) =>
          this.run(
            { store: 'kv', op: String(property), ...(by ? { by } : {}), key: String(args[0]) },
            () => Reflect.apply(value, target, args) as Promise<unknown>,
          );
      },
    });
  }

  /** The provider's binding: calls named by their path (`preauth`, `auth`, `postauth`, `acs/method`...). */
  private provider(inner: Fetcher): Fetcher {
    return new Proxy(inner, {
      get: (target, property) => {
        const value = Reflect.get(target, property) as unknown;
        if (property !== 'fetch' || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return (input: RequestInfo, init?: RequestInit) => {
          const request = new Request(input, init);
          const op = new URL(request.url).pathname.slice(1);
          return this.run({ store: 'provider', op }, async () => {
            const response = (await Reflect.apply(value, target, [request])) as Response;
            const body: unknown = await response
              .clone()
              .json()
              .catch(() => undefined);
            if (typeof body === 'object' && body !== null) {
              this.providerAnswers.push({ op, body: body as Record<string, any> });
            }
            return response;
          });
        };
      },
    });
  }

  private namespace<T extends Rpc.DurableObjectBranded | undefined>(
    inner: DurableObjectNamespace<T>,
  ): DurableObjectNamespace<T> {
    const stubOf = (stub: object): object =>
      new Proxy(stub, {
        get: (stubTarget, method) => {
          if (method === 'then') return undefined;
          const fn = Reflect.get(stubTarget, method) as unknown;
          if (typeof method !== 'string' || typeof fn !== 'function') return fn;
          return (...args: unknown[]) =>
            this.run({ store: 'do', op: method }, () => Reflect.apply(fn, stubTarget, args) as Promise<unknown>);
        },
      });
    return new Proxy(inner, {
      get(target, property) {
        const value = Reflect.get(target, property) as unknown;
        if (property !== 'get' || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return (id: DurableObjectId) => stubOf(Reflect.apply(value, target, [id]) as object);
      },
    });
  }
}

/**
 * KV's one write per second per key, scaled down for a test that is not about its length: the
 * objects write a key at most once per this interval, and the harness's emulation of KV's limit
 * ({@link StorageHarness.writeLimit}) refuses writes closer than it.
 */
export const QUICK_KEY_WRITE_INTERVAL_MS = 100;

/**
 * Shortens the objects' per-key write interval (KV's second) to `keyWriteIntervalMs`, so that a
 * projection lands a tenth of a second after the last, not a second; the harness's emulation of
 * KV's limit keeps to the same interval. Put back by {@link restoreObjects} (call it in `afterEach`).
 */
export function quickObjects(keyWriteIntervalMs = QUICK_KEY_WRITE_INTERVAL_MS): void {
  objectStorage.keyWriteIntervalMs = keyWriteIntervalMs;
}

/** Puts the objects' KV back as the service has it (after {@link StorageHarness.throughObjects}). */
export function restoreObjects(): void {
  Object.assign(objectStorage, DEFAULT_OBJECT_STORAGE);
  Object.assign(objectProvider, DEFAULT_OBJECT_PROVIDER);
}

/** Requests answered through a harness: its environment, its faults (what `call`'s `via` takes). */
export const via =
  (h: StorageHarness): Fetch =>
  (r) =>
    h.fetch(r);
