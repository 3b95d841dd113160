import { COUNTED_NAMESPACE, startVersions, type WorkerVersion } from './worker-versions';
import { withLuhnCheckDigit } from './pans';
import { triple as summary } from './summary';

/**
 * The token part of `npm run bench` (`--only tokens`): different updates of one token, against
 * this tree's Worker and an earlier commit's, both bundled as deployed and served by Miniflare in
 * the same run, with Cloudflare KV's one write per second per key emulated for every writer (the
 * Worker and the Durable Objects alike: Miniflare does not enforce it). Two shapes: 20 different
 * cardholder names at once, and 10 sent 150 ms apart. For each: how the requests were answered,
 * and how long the burst took to be answered in full. A report, not a test.
 */

export interface TokenBenchOptions {
  root: string;
  baselineRef: string;
  runs: number;
  log: (m: string) => void;
}

/**
 * The harness entry: the Worker and its Durable Object classes, with the SESSIONS namespace of
 * each (the Worker's env, and each object's) refusing a put or delete of a key written less than
 * a second before, as KV answers it on Cloudflare (429). One limiter per isolate: Miniflare runs
 * the Worker and its objects in one.
 */
const KV_LIMIT_ENTRY = `
import worker, * as all from './index.js';
export * from './index.js';
const lastWrite = new Map();
const counts = {};
let objectWrites = 0;
function limited(kv, c, byObject) {
  return new Proxy(kv, { get(t, p) {
    const v = Reflect.get(t, p);
    if (typeof v !== 'function') return v;
    if (p === 'get' || p === 'list' || p === 'getWithMetadata') return (...a) => { if (c) c.kvReads++; return Reflect.apply(v, t, a); };
    if (p !== 'put' && p !== 'delete') return v.bind(t);
    return async (key, ...rest) => {
      const now = Date.now();
      const last = lastWrite.get(key);
      if (last !== undefined && now - last < 1000) throw new Error('KV ' + String(p).toUpperCase() + ' failed: 429 Too Many Requests');
      lastWrite.set(key, now);
      if (byObject) objectWrites++; else if (c) c.kvWrites++;
      return Reflect.apply(v, t, [key, ...rest]);
    };
  } });
}
${COUNTED_NAMESPACE}
const objectEnv = (env) => ({ ...env, SESSIONS: limited(env.SESSIONS, undefined, true) });
export class TokenGroup extends all.TokenGroup { constructor(ctx, env) { super(ctx, objectEnv(env)); } }
export class ThreeDsTransaction extends all.ThreeDsTransaction { constructor(ctx, env) { super(ctx, objectEnv(env)); } }
export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === '/__bench/counts') {
      const body = JSON.stringify({ steps: counts, objectWrites });
      for (const k of Object.keys(counts)) delete counts[k];
      objectWrites = 0;
      return new Response(body);
    }
    const step = request.headers.get('x-bench-step');
    const c = step === null ? undefined : (counts[step] ??= { requests: 0, kvReads: 0, kvWrites: 0, doCalls: 0 });
    if (c) c.requests++;
    const wrapped = { ...env, SESSIONS: limited(env.SESSIONS, c, false) };
    if (c) for (const [name, b] of Object.entries(env)) if (b && typeof b.idFromName === 'function') wrapped[name] = namespace(b, c);
    return worker.fetch(request, wrapped, ctx);
  },
};
`;

const TOKENS = 'application/vnd.worldpay.tokens-v1.hal+json';
const AUTH = `Basic ${btoa('test-merchant:test-password')}`;
const HEADERS = { Authorization: AUTH, Accept: TOKENS, 'Content-Type': TOKENS };

interface ShapeRun {
  statuses: number[];
  ms: number;
}

const SHAPES = [
  { name: '20 different updates at once', count: 20, gapMs: 0 },
  { name: '10 different updates, 150 ms apart', count: 10, gapMs: 150 },
] as const;

export async function runTokenBench(o: TokenBenchOptions): Promise<string> {
  const versions = await startVersions(o.root, o.baselineRef, o.log, { entry: KV_LIMIT_ENTRY });
  try {
    const order: WorkerVersion[] = [versions.baseline, versions.current];
    const counts = new Map<WorkerVersion, StepCounts>();
    for (const v of order) {
      o.log(`tokens: counting the storage calls of each step, ${v.label}`);
      counts.set(v, await countedFlow(String(v.worker.url).replace(/\/$/, '')));
    }
    const results = new Map<string, ShapeRun[]>();
    for (const shape of SHAPES) {
      for (let run = 0; run < o.runs; run++) {
        for (const v of run % 2 === 0 ? order : [...order].reverse()) {
          o.log(`tokens: ${shape.name}, run ${run + 1}/${o.runs}, ${v.label}`);
          const key = `${shape.name}\u0000${v.label}`;
          results.set(key, [
            ...(results.get(key) ?? []),
            await updates(String(v.worker.url).replace(/\/$/, ''), shape.count, shape.gapMs),
          ]);
        }
      }
    }
    return [
      table(o, order, results),
      '',
      "Storage calls per request of each step of a token's life (the Worker's KV reads / KV writes / Durable Object calls), and the KV writes the objects made in all",
      '',
      countsTable(order, counts),
    ].join('\n');
  } finally {
    await versions.stop();
  }
}

/** A new token (a card no run used before), then `count` different cardholder names, `gapMs` apart. */
async function updates(base: string, count: number, gapMs: number): Promise<ShapeRun> {
  const created = await fetch(`${base}/tokens`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      paymentInstrument: { type: 'card/front', cardNumber: freshCard(), cardExpiryDate: { month: 12, year: 2035 } },
      merchant: { entity: 'default' },
    }),
  });
  if (created.status !== 201) throw new Error(`POST /tokens answered ${created.status}: ${await created.text()}`);
  const href = ((await created.json()) as { tokenPaymentInstrument: { href: string } }).tokenPaymentInstrument.href;
  // KV's per-key limit starts from the creation's own write: let it pass, as a client would.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * gapMs));
      const response = await fetch(`${href}/paymentInstrument/cardHolderName`, {
        method: 'PUT',
        headers: HEADERS,
        body: JSON.stringify(`Holder ${i}`),
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  return { statuses: answers, ms: performance.now() - started };
}

interface StepCounts {
  steps: Record<string, { requests: number; kvReads: number; kvWrites: number; doCalls: number }>;
  objectWrites: number;
}

/**
 * One token's life, each step counted (`x-bench-step`), a second apart so that KV's per-key limit
 * refuses no write of either version; then the counts, once the objects' writes have landed.
 */
async function countedFlow(base: string): Promise<StepCounts> {
  await fetch(`${base}/__bench/counts`); // reset
  const cardNumber = freshCard();
  const body = (name: string) =>
    JSON.stringify({
      paymentInstrument: {
        type: 'card/front',
        cardNumber,
        cardExpiryDate: { month: 12, year: 2035 },
        cardHolderName: name,
      },
      merchant: { entity: 'default' },
      namespace: 'bench',
    });
  const step = async (
    label: string,
    url: string,
    init: RequestInit = {},
    headers: Record<string, string> = HEADERS,
  ): Promise<Response> => {
    const response = await fetch(url, { ...init, headers: { ...headers, 'x-bench-step': label } });
    if (response.status >= 300 && response.status !== 409)
      throw new Error(`${label} answered ${response.status}: ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    return response;
  };
  const created = await step('POST /tokens (201)', `${base}/tokens`, { method: 'POST', body: body('Ada') });
  const href = ((await created.json()) as { tokenPaymentInstrument: { href: string } }).tokenPaymentInstrument.href;
  await step('GET the token', href);
  await step('PUT cardHolderName', `${href}/paymentInstrument/cardHolderName`, { method: 'PUT', body: '"Ada King"' });
  const conflict = await step('POST /tokens (409)', `${base}/tokens`, { method: 'POST', body: body('Ada B') });
  const link = ((await conflict.json()) as { _links: Record<string, { href: string }> })._links['tokens:conflicts']!
    .href;
  await step('PUT the conflict', link, { method: 'PUT' });
  await step('GET /tokens?namespace', `${base}/tokens?namespace=bench`);
  await step(
    'panLookup by token',
    `${base}/api/cardBin/panLookup`,
    { method: 'POST', body: JSON.stringify({ merchant: { entity: 'default' }, token: href }) },
    { Authorization: AUTH, 'Content-Type': 'application/json', 'WP-Api-Version': '1' },
  );
  await step('DELETE the token', href, { method: 'DELETE' });
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  return (await (await fetch(`${base}/__bench/counts`)).json()) as StepCounts;
}

function countsTable(order: WorkerVersion[], counts: Map<WorkerVersion, StepCounts>): string {
  const lines = [`| step | ${order.map((v) => v.label).join(' | ')} |`, `|---|${order.map(() => '---').join('|')}|`];
  const steps = Object.keys(counts.get(order[0]!)?.steps ?? {});
  const cell = (c: StepCounts['steps'][string] | undefined): string =>
    c ? `${c.kvReads / c.requests} / ${c.kvWrites / c.requests} / ${c.doCalls / c.requests}` : '–';
  for (const label of steps)
    lines.push(`| ${label} | ${order.map((v) => cell(counts.get(v)?.steps[label])).join(' | ')} |`);
  lines.push(
    `| KV writes by the objects, in all | ${order.map((v) => counts.get(v)?.objectWrites ?? 0).join(' | ')} |`,
  );
  return lines.join('\n');
}

let seq = 0;
/** A Luhn-valid Visa number of the 457136 range that no other run used. */
function freshCard(): string {
  seq += 1;
  return withLuhnCheckDigit(
    `45713684${String(Date.now() % 1e5).padStart(5, '0')}${String(seq % 100).padStart(2, '0')}`,
  );
}

function table(o: TokenBenchOptions, order: WorkerVersion[], results: Map<string, ShapeRun[]>): string {
  const lines = [
    `Different cardholder-name updates of one token, KV's one write per second per key emulated for every writer; ${o.runs} runs (min / **median** / max)`,
    '',
    '| shape | Worker | 204 per run | 503 per run | other per run | all answered, ms |',
    '|---|---|---|---|---|---|',
  ];
  const triple = (values: number[]): string => summary(values, 0);
  for (const shape of SHAPES) {
    for (const v of order) {
      const runs = results.get(`${shape.name}\u0000${v.label}`) ?? [];
      const count = (pick: (s: number) => boolean): number[] => runs.map((r) => r.statuses.filter(pick).length);
      lines.push(
        `| ${shape.name} | ${v.label} | ${triple(count((s) => s === 204))} | ${triple(count((s) => s === 503))} | ` +
          `${triple(count((s) => s !== 204 && s !== 503))} | ${triple(runs.map((r) => r.ms))} |`,
      );
    }
  }
  return lines.join('\n');
}
