import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { workerdChildren } from '../local-worker';
import type { FlowKind } from './threeds-flows';

/**
 * The 3DS floor (scripts/bench/threeds-floor-worker.js) served by Miniflare the way this tree's
 * Worker is served: the same workerd, the same compatibility date, and the same static-asset
 * configuration from wrangler.toml (so every request goes through the asset router and RPC proxy
 * Miniflare puts in front, as the service's do), with SQLite-backed Durable Objects. Also the
 * harness entry that times this tree's object calls from its Worker, for the first-call profile.
 */

/**
 * The steps of each flow, one request each, as scripts/bench/threeds-flows.ts drives them (the
 * bench checks the counts against the real flows' before it times anything).
 */
export const FLOOR_STEPS: Record<FlowKind, readonly string[]> = {
  frictionless: ['deviceDataInitialize', 'DDC page', 'authenticate'],
  challenged: [
    'deviceDataInitialize',
    'DDC page',
    'authenticate',
    'challenge page',
    'challenge form post',
    'verification',
  ],
};

export interface ServedFloor {
  url: URL;
  /** The workerd process serving it, for its CPU time. */
  pid?: number;
  stop: () => Promise<void>;
}

/**
 * Serves the floor. `schema`: the CREATE statements of this tree's ThreeDsTransaction, which the
 * FloorWithSchema objects run before their own table (the profile's middle row).
 */
export async function startFloor(root: string, schema: readonly string[] = []): Promise<ServedFloor> {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(root, 'wrangler.toml'));
  const assets = (workerOptions as { assets?: unknown }).assets;
  const before = workerdChildren();
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(root, 'scripts', 'bench', 'threeds-floor-worker.js'),
    compatibilityDate: workerOptions.compatibilityDate,
    durableObjects: {
      FLOOR: { className: 'FloorTransaction', useSQLite: true },
      FLOOR_WITH_SCHEMA: { className: 'FloorWithSchema', useSQLite: true },
    },
    bindings: { SCHEMA: JSON.stringify(schema) },
    ...(assets !== undefined ? { assets } : {}),
    host: '127.0.0.1',
    port: 0,
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => void [stdout, stderr].forEach((s) => s.resume()),
  } as ConstructorParameters<typeof Miniflare>[0]);
  const url = await mf.ready;
  const pid = [...workerdChildren()].find((p) => !before.has(p));
  return { url, ...(pid !== undefined ? { pid } : {}), stop: () => mf.dispose() };
}

/**
 * One floor flow: a new random reference (so a new object), then each step of `kind` in turn.
 * `label`: time each request inside the Worker (`x-bench-step`); `schema`: FloorWithSchema.
 */
export async function floorFlow(
  base: URL,
  kind: FlowKind,
  o: { label?: boolean; schema?: boolean } = {},
): Promise<number> {
  const reference = `floor-${crypto.randomUUID()}`;
  const url = new URL('/floor/step', base);
  for (const step of FLOOR_STEPS[kind]) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(o.label ? { 'x-bench-step': step } : {}) },
      body: JSON.stringify({ reference, step, ...(o.schema ? { schema: true } : {}) }),
    });
    const answer = await response.text();
    if (response.status !== 200) throw new Error(`floor ${step} answered ${response.status}: ${answer}`);
  }
  return FLOOR_STEPS[kind].length;
}

/** What a Worker timed (both harnesses answer it at `GET /__bench/times`). */
export interface WorkerTimes {
  steps: Record<string, { requests: number; workerMs: number; objectCalls: number; objectMs: number }>;
  /** Each transaction object's first call, ms (this tree: with its method). */
  first: (number | { method: string; ms: number })[];
  /** Every later call to a transaction object, ms. */
  later: number[];
  /** Each transaction object's constructor, ms, inside the object. */
  constructed: number[];
}

/** What this tree's harness timed (and resets). */
export async function readTimes(base: URL): Promise<WorkerTimes> {
  return (await (await fetch(new URL('/__bench/times', base))).json()) as WorkerTimes;
}

/** What the floor Worker timed for each of its classes (and resets). */
export async function readFloorTimes(base: URL): Promise<{ floor: WorkerTimes; withSchema: WorkerTimes }> {
  return (await (await fetch(new URL('/__bench/times', base))).json()) as {
    floor: WorkerTimes;
    withSchema: WorkerTimes;
  };
}

/**
 * The harness entry of this tree's Worker in the 3DS bench: requests without `x-bench-step` go to
 * the Worker untouched (the timed runs). Requests with it are counted as the bench's counting
 * entry counts them (KV reads and writes, object calls, per step) and timed inside the Worker: the
 * whole request and each object call, the first call to each ThreeDsTransaction apart (by object
 * id). The ThreeDsTransaction class is the tree's with its constructor timed, plus `benchSchema()`,
 * which answers the CREATE statements its tables were made with. `GET /__bench/counts`,
 * `GET /__bench/times`: the counts and times so far, reset; `GET /__bench/schema`: a fresh
 * object's statements.
 */
export const THREEDS_ENTRY = `
import worker, * as all from './index.js';
export * from './index.js';
const counts = {};
let times = { steps: {}, first: [], later: [], constructed: [] };
const seen = new Set();
const isKv = (b) => b && typeof b.get === 'function' && typeof b.put === 'function' && typeof b.list === 'function';
const isNamespace = (b) => b && typeof b.idFromName === 'function';
function kv(binding, c) {
  return new Proxy(binding, { get(t, p) {
    const v = Reflect.get(t, p);
    if (typeof v !== 'function') return v;
    return (...a) => { if (p === 'get' || p === 'list' || p === 'getWithMetadata') c.kvReads++; else if (p === 'put' || p === 'delete') c.kvWrites++; return Reflect.apply(v, t, a); };
  } });
}
function namespace(binding, name, c, s) {
  return new Proxy(binding, { get(t, p) {
    const v = Reflect.get(t, p);
    if (p !== 'get') return typeof v === 'function' ? v.bind(t) : v;
    return (id) => {
      const stub = Reflect.apply(v, t, [id]);
      const key = name + ':' + id.toString();
      return new Proxy(stub, { get(st, m) {
        if (m === 'then') return undefined;
        const f = Reflect.get(st, m);
        if (typeof f !== 'function') return f;
        return async (...a) => {
          c.doCalls++;
          const first = !seen.has(key);
          seen.add(key);
          const began = Date.now();
          try {
            return await Reflect.apply(f, st, a);
          } finally {
            const ms = Date.now() - began;
            s.objectCalls++;
            s.objectMs += ms;
            if (name === 'THREEDS_TRANSACTION') {
              if (first) times.first.push({ method: String(m), ms });
              else times.later.push(ms);
            }
          }
        };
      } });
    };
  } });
}
export class ThreeDsTransaction extends all.ThreeDsTransaction {
  constructor(ctx, env) {
    const began = Date.now();
    super(ctx, env);
    times.constructed.push(Date.now() - began);
  }
  async benchSchema() {
    // Its tables are created by the first call that records something: create them as it would.
    this.createTables();
    const schema = this.ctx.storage.sql
      .exec("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND substr(name, 1, 7) != 'sqlite_' AND substr(name, 1, 4) != '_cf_'")
      .toArray()
      .map((r) => r.sql);
    await this.ctx.storage.deleteAll();
    return schema;
  }
}
export default {
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    if (path === '/__bench/counts') {
      const body = JSON.stringify(counts);
      for (const k of Object.keys(counts)) delete counts[k];
      return new Response(body);
    }
    if (path === '/__bench/times') {
      const body = JSON.stringify(times);
      times = { steps: {}, first: [], later: [], constructed: [] };
      seen.clear();
      return new Response(body);
    }
    if (path === '/__bench/schema') {
      const ns = env.THREEDS_TRANSACTION;
      return Response.json(await ns.get(ns.idFromName('bench-schema-' + crypto.randomUUID())).benchSchema());
    }
    const step = request.headers.get('x-bench-step');
    if (step === null) return worker.fetch(request, env, ctx);
    const c = (counts[step] ??= { requests: 0, kvReads: 0, kvWrites: 0, doCalls: 0 });
    const s = (times.steps[step] ??= { requests: 0, workerMs: 0, objectCalls: 0, objectMs: 0 });
    c.requests++;
    s.requests++;
    const wrapped = {};
    for (const [name, b] of Object.entries(env)) wrapped[name] = isKv(b) ? kv(b, c) : isNamespace(b) ? namespace(b, name, c, s) : b;
    const began = Date.now();
    try {
      return await worker.fetch(request, wrapped, ctx);
    } finally {
      s.workerMs += Date.now() - began;
    }
  },
};
`;

/** The CREATE statements of a fresh ThreeDsTransaction, made safe to run again (IF NOT EXISTS). */
export async function transactionSchema(base: URL): Promise<string[]> {
  const response = await fetch(new URL('/__bench/schema', base));
  if (response.status !== 200) throw new Error(`/__bench/schema answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as string[]).map((s) =>
    /\bIF NOT EXISTS\b/i.test(s)
      ? s
      : s.replace(/^CREATE (UNIQUE )?(TABLE|INDEX|TRIGGER|VIEW) /i, 'CREATE $1$2 IF NOT EXISTS '),
  );
}
