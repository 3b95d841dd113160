import { startLocalWorker, type LocalWorker } from '../local-worker';
import { load, processCpuSeconds, type LoadRequest } from './load';

/**
 * The panLookup path built up step by step inside one isolate, this tree's: an entry module in
 * front of the bundle answers the same request as the bare Worker, as the floor (this tree's
 * answer and log line, nothing else), and (the last step) as the Worker itself.
 * Served as one Worker, the steps share the process, the isolate, the heap and Miniflare's entry,
 * so their differences are the steps' own: a finer measure than Workers in separate processes.
 *
 * Each step is measured twice: over HTTP (workerd's CPU per request under load, as in the path
 * table), and hot, in a loop of calls inside one request (no HTTP, no other code in between).
 */

export interface StepsOptions {
  root: string;
  runs: number;
  /** The warm-login panLookup every step answers. */
  request: LoadRequest;
  /** The bare Worker's constant answer. */
  bareAnswer: string;
  /** The floor's log line after its correlation id and time (`"level":"info",...}`). */
  floorLogRest: string;
  log: (message: string) => void;
}

const STEPS = [
  { name: 'bare', label: 'bare: read the body, send a constant JSON' },
  { name: 'floor', label: "floor: this tree's answer (body, six headers) and its log line" },
  { name: 'worker', label: "this tree's Worker" },
] as const;

function entry(o: StepsOptions): string {
  const init = {
    method: o.request.method,
    headers: { ...o.request.headers, 'Content-Length': String(Buffer.byteLength(o.request.body ?? '')) },
    body: o.request.body,
  };
  return `
import worker from './index.js';
export * from './index.js';
const PATH = ${JSON.stringify(o.request.path)};
const INIT = ${JSON.stringify(init)};
const BARE = ${JSON.stringify(o.bareAnswer)};
const REST = ${JSON.stringify(o.floorLogRest)};
let answer; // the Worker's own answer (body and headers), taken once
async function ownAnswer(env, ctx) {
  if (answer) return answer;
  const r = await worker.fetch(new Request('http://steps' + PATH, INIT), env, ctx);
  const headers = {};
  r.headers.forEach((v, k) => { if (k !== 'wp-correlationid') headers[k] = v; });
  return (answer = { body: await r.text(), headers });
}
async function floor(request, env, ctx) {
  const { body, headers } = await ownAnswer(env, ctx);
  await request.arrayBuffer();
  const id = crypto.randomUUID();
  console.log('{"correlationId":"' + id + '","ts":"' + new Date().toISOString() + '",' + REST);
  return new Response(body, { headers: { ...headers, 'WP-CorrelationId': id } });
}
const STEPS = {
  async bare(request) {
    await request.arrayBuffer();
    return new Response(BARE, { headers: { 'Content-Type': 'application/json' } });
  },
  floor,
  worker: (request, env, ctx) => worker.fetch(request, env, ctx),
};
export default {
  async fetch(request, env, ctx) {
    const step = request.headers.get('x-step');
    if (step === null) return worker.fetch(request, env, ctx);
    const hot = Number(request.headers.get('x-hot') ?? 0);
    if (hot === 0) return STEPS[step](request, env, ctx);
    await request.arrayBuffer();
    let bytes = 0;
    for (let i = 0; i < hot; i++) {
      const r = await STEPS[step](new Request('http://steps' + PATH, INIT), env, ctx);
      bytes += (await r.arrayBuffer()).byteLength;
    }
    return new Response(String(bytes));
  },
};`;
}

const median = (v: readonly number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const spread = (v: readonly number[]): string => {
  const s = [...v].sort((a, b) => a - b);
  return `${s[0]!.toFixed(0)} / **${median(s).toFixed(0)}** / ${s.at(-1)!.toFixed(0)}`;
};

/** CPU µs per call of `step`, `calls` calls in a loop inside one request. */
async function hot(worker: LocalWorker, o: StepsOptions, step: string, calls: number): Promise<number> {
  const before = processCpuSeconds(worker.pid!);
  const r = await fetch(new URL(o.request.path, worker.url), {
    method: 'POST',
    headers: { ...o.request.headers, 'x-step': step, 'x-hot': String(calls) },
    body: o.request.body ?? null,
  });
  if (!r.ok) throw new Error(`the hot loop of ${step} answered ${r.status}`);
  await r.text();
  return ((processCpuSeconds(worker.pid!) - before) * 1e6) / calls;
}

export async function isolateStepsTable(o: StepsOptions): Promise<string> {
  const worker = await startLocalWorker({ root: o.root, entry: entry(o), quiet: true, assets: false });
  try {
    if (worker.pid === undefined) throw new Error('cannot tell the workerd process of the steps Worker');
    const next = (step: string) => (): LoadRequest => ({
      ...o.request,
      headers: { ...o.request.headers, 'x-step': step },
    });
    const http = new Map<string, number[]>();
    const loop = new Map<string, number[]>();
    const HOT_CALLS = 10_000;
    for (const s of STEPS) {
      await load(worker.url, { connections: 10, requests: 1_000, next: next(s.name) });
      await hot(worker, o, s.name, 1_000);
    }
    for (let run = 0; run < o.runs; run++) {
      const round = run % 2 === 0 ? STEPS : [...STEPS].reverse();
      for (const s of round) {
        o.log(`panLookup steps in one isolate, run ${run + 1}/${o.runs}, ${s.name}`);
        const r = await load(worker.url, {
          connections: 10,
          requests: 3_000,
          next: next(s.name),
          serverPid: worker.pid,
        });
        if (r.statuses[200] !== r.requests) throw new Error(`step ${s.name} answered ${JSON.stringify(r.statuses)}`);
        http.set(s.name, [...(http.get(s.name) ?? []), r.cpuMsPerRequest * 1000]);
        loop.set(s.name, [...(loop.get(s.name) ?? []), await hot(worker, o, s.name, HOT_CALLS)]);
      }
    }
    // Each step's cost over the one before it: the median of the runs' differences (paired, so
    // that a slow moment of the machine, which touches both, cancels out).
    const over = (m: Map<string, number[]>, i: number): string => {
      if (i === 0) return '–';
      const a = m.get(STEPS[i]!.name)!;
      const b = m.get(STEPS[i - 1]!.name)!;
      return `+${median(a.map((x, k) => x - b[k]!)).toFixed(0)}`;
    };
    const lines = [
      `The same path built up step by step inside one isolate (this tree's bundle with an entry module in front answering each step; min / **median** / max of ${o.runs} runs): ` +
        'over HTTP (workerd CPU per request, 3,000 requests on 10 connections) and hot (CPU per call in a loop of ' +
        `${HOT_CALLS.toLocaleString('en')} calls inside one request, no HTTP; each call also builds its Request, alike for every step). ` +
        '"Over the step before" is the median of the runs\' paired differences.',
      '',
      '| step | HTTP: CPU µs/request | over the step before | hot: CPU µs/call | over the step before |',
      '|---|---|---|---|---|',
      ...STEPS.map(
        (s, i) =>
          `| ${s.label} | ${spread(http.get(s.name)!)} | ${over(http, i)} | ${spread(loop.get(s.name)!)} | ${over(loop, i)} |`,
      ),
    ];
    return lines.join('\n');
  } finally {
    await worker.stop();
  }
}
