import { startLocalWorker } from '../local-worker';
import { processCpuSeconds } from './load';
import {
  FLOOR_STEPS,
  floorFlow,
  readFloorTimes,
  readTimes,
  startFloor,
  THREEDS_ENTRY,
  transactionSchema,
  type WorkerTimes,
} from './threeds-floor';
import { runFlow, storageCounts, timed, type FlowKind, type FlowRun, type StepCounts } from './threeds-flows';
import { fmt, stats, triple } from './summary';
import { COUNTING_ENTRY, startVersions, type Versions, type WorkerVersion } from './worker-versions';

/**
 * The 3DS part of `npm run bench`: full frictionless and challenged flows, `concurrency` at a
 * time, against this tree's Worker (bundled as deployed) and against the floor
 * (scripts/bench/threeds-floor-worker.js: per step, one call to a new transaction's Durable
 * Object that writes one SQLite row), both served by Miniflare in the same run with the same
 * static-asset chain in front; each round alternates which goes first. The floor makes as many
 * requests per flow as the real flow (checked). Then the storage calls each step makes, and where
 * the rest goes: the same flows one at a time, each request and each object call timed inside
 * the Worker, and the first call to a new object apart (beside the floor's, and the floor's with
 * this tree's tables created on that call). With `baselineRef`, an earlier commit's Worker too.
 * A report, not a test.
 */

export interface ThreeDsBenchOptions {
  root: string;
  /** An earlier commit to serve beside them (optional). */
  baselineRef?: string;
  runs: number;
  flows: number;
  concurrency: number;
  log: (m: string) => void;
}

const KINDS: FlowKind[] = ['frictionless', 'challenged'];
/** The target of the issue: this tree's flows/s at least this share of the floor's, for both kinds. */
const TARGET = 0.7;

interface Target {
  label: string;
  pid?: number;
  flow: (kind: FlowKind) => Promise<number>;
}

interface TimedRun extends FlowRun {
  /** workerd CPU (user + system) per flow, ms. */
  cpuMsPerFlow: number;
}

export async function runThreeDsBench(o: ThreeDsBenchOptions): Promise<string> {
  const stops: (() => Promise<void>)[] = [];
  try {
    o.log('bundling and serving this tree’s Worker');
    const current = await startLocalWorker({ root: o.root, entry: THREEDS_ENTRY, quiet: true });
    stops.push(() => current.stop());
    const schema = await transactionSchema(current.url);
    o.log(`serving the floor (a fresh ThreeDsTransaction has ${schema.length} tables and indexes)`);
    const floor = await startFloor(o.root, schema);
    stops.push(() => floor.stop());
    let versions: Versions | undefined;
    if (o.baselineRef !== undefined) {
      versions = await startVersions(o.root, o.baselineRef, o.log, { entry: COUNTING_ENTRY });
      const started = versions;
      stops.push(() => started.stop());
    }
    const currentVersion: WorkerVersion = { label: 'this tree', worker: current };
    const counted: WorkerVersion[] = [...(versions ? [versions.baseline] : []), currentVersion];

    const counts = new Map<WorkerVersion, Record<string, StepCounts>>();
    for (const v of counted) {
      o.log(`counting the storage calls of each step, ${v.label}`);
      counts.set(v, await storageCounts(v));
    }
    checkFloorSteps(counts.get(currentVersion)!);

    const targets: Target[] = [
      { label: 'floor', ...pidOf(floor.pid), flow: (kind) => floorFlow(floor.url, kind) },
      ...counted.map((v) => ({
        label: v.label,
        ...pidOf(v.worker.pid),
        flow: (kind: FlowKind) => runFlow(v.worker.url, kind, false),
      })),
    ];
    const results = new Map<string, TimedRun[]>();
    for (const kind of KINDS) {
      o.log(`${kind} flows, warm-up (${Math.min(20, o.flows)} flows each)`);
      for (const t of targets) await timed(() => t.flow(kind), Math.min(20, o.flows), o.concurrency);
      for (let run = 0; run < o.runs; run++) {
        for (const t of run % 2 === 0 ? targets : [...targets].reverse()) {
          o.log(`${kind} flows, run ${run + 1}/${o.runs}, ${t.label}`);
          const key = `${kind}\u0000${t.label}`;
          results.set(key, [...(results.get(key) ?? []), await timedRun(t, kind, o)]);
        }
      }
    }

    const probeFlows = Math.min(40, o.flows);
    const probes = await probe(o, probeFlows, current.url, floor.url);
    return [
      flowTable(o, targets, results),
      '',
      `Storage calls per request of each step (one counted flow of each kind; KV reads / writes, Durable Object calls). The floor makes one object call per step by construction (${FLOOR_STEPS.frictionless.length} per frictionless flow, ${FLOOR_STEPS.challenged.length} per challenged one), and no KV call.`,
      '',
      countsTable(counted, counts),
      '',
      stepsTable(probeFlows, probes),
      '',
      firstCallTable(probeFlows, schema.length, probes),
    ].join('\n');
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

const pidOf = (pid: number | undefined): { pid?: number } => (pid !== undefined ? { pid } : {});

/** The floor must make the requests the real flows make, or flows/s would not compare. */
function checkFloorSteps(counts: Record<string, StepCounts>): void {
  for (const kind of KINDS) {
    const real = Object.entries(counts)
      .filter(([step]) => step.endsWith(` (${kind})`))
      .flatMap(([step, c]) => Array.from({ length: c.requests }, () => step.slice(0, -` (${kind})`.length)));
    if (real.join('|') !== FLOOR_STEPS[kind].join('|'))
      throw new Error(`the ${kind} flow made ${real.join(', ')}; the floor makes ${FLOOR_STEPS[kind].join(', ')}`);
  }
}

async function timedRun(t: Target, kind: FlowKind, o: ThreeDsBenchOptions): Promise<TimedRun> {
  const cpuBefore = t.pid !== undefined ? processCpuSeconds(t.pid) : NaN;
  const run = await timed(() => t.flow(kind), o.flows, o.concurrency);
  const cpu = t.pid !== undefined ? processCpuSeconds(t.pid) - cpuBefore : NaN;
  return { ...run, cpuMsPerFlow: (cpu * 1000) / o.flows };
}

function flowTable(o: ThreeDsBenchOptions, targets: Target[], results: Map<string, TimedRun[]>): string {
  const lines = [
    `${o.flows} flows per run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max); ÷ floor: each run's flows/s over the floor's in the same round. Target: at least ${fmt(TARGET, 2)}× the floor's (median).`,
    '',
    '| flow | Worker | flows/s | requests/s | flow p50 ms | flow p99 ms | workerd CPU ms/flow | flows/s ÷ floor | target |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const kind of KINDS) {
    const floorRuns = results.get(`${kind}\u0000floor`) ?? [];
    for (const t of targets) {
      const runs = results.get(`${kind}\u0000${t.label}`) ?? [];
      const ratios = runs.map((r, i) => r.flowsPerSecond / floorRuns[i]!.flowsPerSecond);
      const isFloor = t.label === 'floor';
      const target = isFloor ? '–' : `${stats(ratios).median >= TARGET ? 'PASS' : 'MISS'} (≥ ${fmt(TARGET, 2)})`;
      lines.push(
        `| ${kind} | ${t.label} | ${triple(runs.map((r) => r.flowsPerSecond))} | ${triple(runs.map((r) => r.requestsPerSecond))} | ` +
          `${triple(runs.map((r) => r.p50))} | ${triple(runs.map((r) => r.p99))} | ${triple(runs.map((r) => r.cpuMsPerFlow))} | ` +
          `${isFloor ? '1.00' : triple(ratios, 2)} | ${target} |`,
      );
    }
  }
  return lines.join('\n');
}

function countsTable(order: WorkerVersion[], counts: Map<WorkerVersion, Record<string, StepCounts>>): string {
  const steps = [...new Set(order.flatMap((v) => Object.keys(counts.get(v) ?? {})))];
  const cell = (c: StepCounts | undefined): string =>
    c ? `${c.kvReads / c.requests} / ${c.kvWrites / c.requests} | ${c.doCalls / c.requests}` : '– | –';
  const lines = [
    `| step | ${order.map((v) => `${v.label}: KV r / w | DO`).join(' | ')} |`,
    `|---|${order.map(() => '---|---').join('|')}|`,
  ];
  for (const step of steps) lines.push(`| ${step} | ${order.map((v) => cell(counts.get(v)?.[step])).join(' | ')} |`);
  const total = (v: WorkerVersion, kind: FlowKind, field: keyof StepCounts): number =>
    Object.entries(counts.get(v) ?? {})
      .filter(([step]) => step.endsWith(`(${kind})`))
      .reduce((sum, [, c]) => sum + c[field], 0);
  for (const kind of KINDS) {
    lines.push(
      `| **whole ${kind} flow** | ${order.map((v) => `${total(v, kind, 'kvReads')} / ${total(v, kind, 'kvWrites')} | ${total(v, kind, 'doCalls')}`).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

interface Probes {
  /** Per kind, per Worker ('this tree', 'floor', 'floor + tables'): what it timed, and the client's flow times. */
  times: Record<FlowKind, Record<string, WorkerTimes>>;
  flowMs: Record<FlowKind, Record<string, number[]>>;
}

const PROBED = ['this tree', 'floor', 'floor + tables'] as const;

/**
 * The same flows one at a time (this tree's, the floor's, and the floor's with this tree's tables,
 * in turn, flow by flow), each request and each object call timed inside its Worker.
 */
async function probe(o: ThreeDsBenchOptions, flows: number, current: URL, floor: URL): Promise<Probes> {
  const out: Probes = {
    times: { frictionless: {}, challenged: {} },
    flowMs: { frictionless: {}, challenged: {} },
  };
  const run: Record<(typeof PROBED)[number], (kind: FlowKind) => Promise<number>> = {
    'this tree': (kind) => runFlow(current, kind, true),
    floor: (kind) => floorFlow(floor, kind, { label: true }),
    'floor + tables': (kind) => floorFlow(floor, kind, { label: true, schema: true }),
  };
  for (const kind of KINDS) {
    o.log(`where the rest goes: ${flows} ${kind} flows one at a time, each Worker in turn`);
    await readTimes(current); // reset
    await readFloorTimes(floor);
    const ms: Record<string, number[]> = { 'this tree': [], floor: [], 'floor + tables': [] };
    for (let i = 0; i < flows; i++) {
      for (const label of PROBED) {
        const began = performance.now();
        await run[label](kind);
        ms[label]!.push(performance.now() - began);
      }
    }
    out.flowMs[kind] = ms;
    const floorTimes = await readFloorTimes(floor);
    out.times[kind] = {
      'this tree': await readTimes(current),
      floor: floorTimes.floor,
      'floor + tables': floorTimes.withSchema,
    };
  }
  return out;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function stepsTable(flows: number, p: Probes): string {
  const lines = [
    `Where the rest goes: ${flows} flows of each kind one at a time (this tree's and the floor's in turn), each request and each object call timed inside the Worker (workerd's clock, 1 ms steps: means over the flows). ` +
      "Per request: the time in the Worker (from the harness entry's call into the Worker to its answer), of which in object calls (from the Worker's call to the object's answer), and the rest (the Worker's own code). " +
      'The floor columns are its one-table objects (the floor with the tables is in the first-call table below).',
    '',
    '| step | this tree: in the Worker ms | in object calls ms | the rest ms | floor: in the Worker ms | in object calls ms | the rest ms |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const kind of KINDS) {
    const tree = p.times[kind]['this tree']!.steps;
    const floor = p.times[kind].floor!.steps;
    const sums: Record<'tree' | 'floor', [number, number]> = { tree: [0, 0], floor: [0, 0] };
    for (const step of FLOOR_STEPS[kind]) {
      const a = tree[step];
      const b = floor[step];
      const cell = (s: typeof a, sum: [number, number]): string => {
        if (!s) return '– | – | –';
        const w = s.workerMs / s.requests;
        const d = s.objectMs / s.requests;
        sum[0] += w;
        sum[1] += d;
        return `${fmt(w, 2)} | ${fmt(d, 2)} | ${fmt(w - d, 2)}`;
      };
      lines.push(`| ${step} (${kind}) | ${cell(a, sums.tree)} | ${cell(b, sums.floor)} |`);
    }
    const whole = (s: [number, number]): string =>
      `**${fmt(s[0], 2)}** | **${fmt(s[1], 2)}** | **${fmt(s[0] - s[1], 2)}**`;
    lines.push(`| **whole ${kind} flow** | ${whole(sums.tree)} | ${whole(sums.floor)} |`);
    const flowMs = p.flowMs[kind];
    lines.push(
      `| ${kind} flow at the client (HTTP, Miniflare's entry and asset router included), ms | ${fmt(mean(flowMs['this tree']!), 2)} | | | ` +
        `${fmt(mean(flowMs.floor!), 2)} | | |`,
    );
  }
  return lines.join('\n');
}

function firstCallTable(flows: number, tables: number, p: Probes): string {
  const pick = (label: string): WorkerTimes => {
    const a = p.times.frictionless[label]!;
    const b = p.times.challenged[label]!;
    return {
      steps: {},
      first: [...a.first, ...b.first],
      later: [...a.later, ...b.later],
      constructed: [...a.constructed, ...b.constructed],
    };
  };
  const ms = (xs: WorkerTimes['first']): number[] => xs.map((x) => (typeof x === 'number' ? x : x.ms));
  const cell = (xs: number[]): string =>
    xs.length === 0 ? '–' : `${fmt(mean(xs), 2)} (${fmt(stats(xs).median, 0)}, ${fmt(stats(xs).max, 0)})`;
  const tree = pick('this tree');
  const methods = [...new Set(tree.first.map((x) => (typeof x === 'number' ? '?' : x.method)))].join(', ');
  const lines = [
    `The first call to a new transaction's object (${2 * flows} new objects each: ${flows} flows of each kind), timed from the Worker; mean (median, max) ms, workerd's clock (1 ms steps). ` +
      'The constructor is timed inside the object (the whole constructor, the base class included).',
    '',
    '| object | first call ms | later calls ms | first − later ms | constructor ms |',
    '|---|---|---|---|---|',
  ];
  for (const [label, t] of [
    ['floor (its one table, one row)', pick('floor')],
    [`floor + this tree's ${tables} tables (created in its constructor), one row`, pick('floor + tables')],
    [`this tree's ThreeDsTransaction (first call: ${methods})`, tree],
  ] as const) {
    const first = ms(t.first);
    lines.push(
      `| ${label} | ${cell(first)} | ${cell(t.later)} | ${fmt(mean(first) - mean(t.later), 2)} | ${cell(t.constructed)} |`,
    );
  }
  return lines.join('\n');
}
