/* global Response */
/**
 * The 3DS floor of `npm run bench -- --only threeds` (scripts/bench/threeds-floor.ts serves it with
 * Miniflare): the least a Worker can do per 3DS step while keeping each transaction's state in its
 * own Durable Object. Every step is one POST whose body names the transaction's reference and the
 * step; the Worker reads it, makes exactly one RPC call to the transaction's object
 * (`idFromName(reference)`: a new object for every new reference), which inserts one SQLite row
 * and answers, and the Worker answers that as JSON. Nothing else: no login, no validation, no
 * KV, no JWT, no page.
 *
 * `FloorWithSchema` is the same object creating the tables of this tree's ThreeDsTransaction
 * first (their statements come in the SCHEMA binding, read from a fresh ThreeDsTransaction):
 * served for the bench's profile of an object's first call, never timed as the floor.
 *
 * Requests with `x-bench-step: <label>` are timed inside the Worker (workerd's clock, 1 ms steps):
 * the whole request and each object call, the first call to each object apart from the later
 * ones; `GET /__bench/times` answers those and each object's constructor time, for each class
 * apart, and resets them.
 * Miniflare runs the Worker and its objects in one isolate, so both record into the same arrays.
 */
import { DurableObject } from 'cloudflare:workers';

const TABLE = 'CREATE TABLE IF NOT EXISTS steps (seq INTEGER PRIMARY KEY, step TEXT NOT NULL, at INTEGER NOT NULL)';

const fresh = () => ({ steps: {}, first: [], later: [], constructed: [] });
/** Apart for each class: `floor` (FloorTransaction) and `withSchema` (FloorWithSchema). */
let times = { floor: fresh(), withSchema: fresh() };
const seen = new Set();

export class FloorTransaction extends DurableObject {
  constructor(ctx, env) {
    const began = Date.now();
    super(ctx, env);
    if (this.withSchema()) for (const statement of JSON.parse(env.SCHEMA)) ctx.storage.sql.exec(statement);
    ctx.storage.sql.exec(TABLE);
    times[this.withSchema() ? 'withSchema' : 'floor'].constructed.push(Date.now() - began);
  }

  withSchema() {
    return false;
  }

  step(name) {
    this.ctx.storage.sql.exec('INSERT INTO steps (step, at) VALUES (?, ?)', name, Date.now());
    return { step: name, done: true };
  }
}

export class FloorWithSchema extends FloorTransaction {
  withSchema() {
    return true;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/__bench/times') {
      const body = JSON.stringify(times);
      times = { floor: fresh(), withSchema: fresh() };
      seen.clear();
      return new Response(body, { headers: { 'Content-Type': 'application/json' } });
    }
    if (request.method !== 'POST' || url.pathname !== '/floor/step') return new Response('not found', { status: 404 });
    const began = Date.now();
    const { reference, step, schema } = await request.json();
    const namespace = schema ? env.FLOOR_WITH_SCHEMA : env.FLOOR;
    const id = namespace.idFromName(reference);
    const called = Date.now();
    const answer = await namespace.get(id).step(step);
    const label = request.headers.get('x-bench-step');
    if (label !== null) {
      const ms = Date.now() - called;
      const key = id.toString();
      const t = times[schema ? 'withSchema' : 'floor'];
      (seen.has(key) ? t.later : t.first).push(ms);
      seen.add(key);
      const s = (t.steps[label] ??= { requests: 0, workerMs: 0, objectCalls: 0, objectMs: 0 });
      s.requests++;
      s.objectCalls++;
      s.objectMs += ms;
      s.workerMs += Date.now() - began;
    }
    return new Response(JSON.stringify({ reference, ...answer }), { headers: { 'Content-Type': 'application/json' } });
  },
};
