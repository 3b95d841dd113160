import { readFileSync } from 'node:fs';
import { startLocalWorker, type LocalWorker } from '../local-worker';
import { processCpuSeconds } from './load';
import { timedFlows, type FlowKind, type FlowRun } from './threeds-flows';
import {
  createEndpoint,
  patchEndpoint,
  quantile,
  startReceiver,
  waitFor,
  type Arrival,
  type Receiver,
} from './events-receiver';
import { measureRecovery, recoveryTable, type Recovery } from './events-recovery';
import { fmt, triple } from './summary';

/**
 * The events part of `npm run bench` (docs/benchmarks.md "Events"). Two Workers of this tree are
 * served side by side (bundled as deployed, run by Miniflare), each with its own storage; the
 * endpoints are made through the API (`POST /events/endpoints`, as a merchant makes them) on one
 * local receiver (scripts/bench/events-receiver.ts), and every delivery's signature is checked
 * with the receivers' own function (examples/receive-events.mjs). A report, not a test.
 *
 * 1. The API's answer times with 0, 1 and 10 endpoints: the 3DS flows (scripts/bench/threeds-flows.ts)
 *    against the Worker whose test merchant has no endpoint (the same-run baseline) and the one
 *    whose test merchant has 1, then 10 answering, then 10 of which one never answers (its URL
 *    changed to a path of the receiver that keeps the request open until the Worker's deadline);
 *    rounds alternate which Worker goes first, and each run is paired with the baseline's run of
 *    the same round for the ratios. Each run's workerd CPU counts the run and its deliveries.
 * 2. At the receiver, in the same runs: deliveries per second, how long after the last answer
 *    the last delivery came, and the time from each event's `createdAt` (the change) to its
 *    arrival, p50 and p99 (one `threeDS.authentication.completed` per flow, to every endpoint).
 * 3. A held backlog (scripts/bench/events-recovery.ts), on the baseline Worker once the other is
 *    stopped: N pings to a disabled endpoint, then the time from `PATCH state=enabled` until the
 *    receiver has all N.
 */

export interface EventsBenchOptions {
  root: string;
  runs: number;
  flows: number;
  concurrency: number;
  /** The held backlogs to recover, one endpoint each (default 1,000 and 10,000). */
  held?: number[];
  /** How long a backlog may take before the bench gives up on it (the table says so). */
  recoveryTimeoutMs?: number;
  log: (m: string) => void;
}

const KINDS: FlowKind[] = ['frictionless', 'challenged'];

/** The endpoints of the Worker with endpoints, stage by stage (each stage adds to the one before). */
interface Stage {
  label: string;
  /** Endpoints that answer 204 at once (the receiver's `hooks/e0` … ). */
  answering: number;
  /** Endpoints that never answer (the last ones, their URL changed to `hang/…`). */
  hanging: number;
}

const STAGES: Stage[] = [
  { label: '1 endpoint', answering: 1, hanging: 0 },
  { label: '10 endpoints, all answering', answering: 10, hanging: 0 },
  { label: '10 endpoints, one never answers', answering: 9, hanging: 1 },
];

/** How long the receiver waits, after a run's last answer, for the run's deliveries. */
const DRAIN_TIMEOUT_MS = 120_000;
/** After a run (and its deliveries), before its workerd CPU is read: the objects' work after the answers. */
const SETTLE_MS = 300;

interface Run {
  /** Undefined when a request of the run failed (`error`). */
  flows?: FlowRun;
  error?: string;
  cpuMsPerFlow: number;
}

interface Delivered {
  deliveries: number;
  expected: number;
  perSecond: number;
  /** The last delivery's arrival after the run's last answer, ms. */
  lagMs: number;
  p50: number;
  p99: number;
  unsigned: number;
  /** Attempts that reached the never-answering endpoint during the run and its drain. */
  hung: number;
}

export async function runEventsBench(o: EventsBenchOptions): Promise<string> {
  const receiver = await startReceiver();
  const workers: LocalWorker[] = [];
  try {
    o.log('bundling and serving both Workers');
    const baseline = await startLocalWorker({ root: o.root, quiet: true });
    workers.push(baseline);
    const withEndpoints = await startLocalWorker({ root: o.root, quiet: true });
    workers.push(withEndpoints);
    // Other work on the shared cores: the machine's busy CPU time less this process's and both workerd processes'.
    const own = (): number =>
      (process.cpuUsage().user + process.cpuUsage().system) / 1e6 +
      [baseline, withEndpoints].reduce((n, w) => n + (w.pid !== undefined ? cpuOrZero(w.pid) : 0), 0);
    const machineAtStart = machineBusySeconds();
    const ownAtStart = own();
    const wallAtStart = performance.now();
    const api = new Map<string, Run[]>();
    const delivered = new Map<string, Delivered[]>();
    const endpointIds: string[] = [];
    for (const [s, stage] of STAGES.entries()) {
      const total = stage.answering + stage.hanging;
      while (endpointIds.length < total)
        endpointIds.push(await createEndpoint(withEndpoints, receiver, `e${endpointIds.length}`));
      for (let i = stage.answering; i < total; i++)
        await patchEndpoint(withEndpoints, endpointIds[i]!, { url: receiver.url(`e${i}`, true) });
      o.log(`stage ${s + 1}/${STAGES.length}: ${stage.label} (${receiver.url('e0')} …)`);
      const answering = new Set(Array.from({ length: stage.answering }, (_, i) => `e${i}`));
      for (const kind of KINDS) {
        const warm = Math.min(10, o.flows);
        o.log(`${stage.label}: ${kind} flows, warm-up (${warm} flows each)`);
        try {
          await timedFlows(baseline.url, kind, warm, o.concurrency);
          const began = Date.now();
          await timedFlows(withEndpoints.url, kind, warm, o.concurrency);
          await drain(receiver, answering, began, Date.now(), warm * stage.answering);
        } catch (e) {
          o.log(`warm-up failed: ${describe(e)}`);
          await quiet(receiver);
        }
        for (let run = 0; run < o.runs; run++) {
          const order = run % 2 === 0 ? [baseline, withEndpoints] : [withEndpoints, baseline];
          for (const worker of order) {
            const mine = worker === withEndpoints;
            o.log(`${stage.label}: ${kind} flows, run ${run + 1}/${o.runs}, ${mine ? stage.label : 'no endpoint'}`);
            const cpuBefore = worker.pid !== undefined ? processCpuSeconds(worker.pid) : NaN;
            const began = Date.now();
            let flows: FlowRun | undefined;
            let error: string | undefined;
            try {
              flows = await timedFlows(worker.url, kind, o.flows, o.concurrency);
            } catch (e) {
              // Reported, not fatal: the table counts the run as failed and the bench goes on.
              error = describe(e);
              o.log(`run failed: ${error}`);
            }
            const ended = Date.now();
            if (mine) {
              const expected = o.flows * stage.answering;
              if (flows) await drain(receiver, answering, began, ended, expected);
              else await quiet(receiver);
              const drained = Date.now();
              if (flows)
                push(delivered, `${s}\u0000${kind}`, deliveryOf(receiver, answering, began, ended, drained, expected));
            }
            await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
            const cpu = worker.pid !== undefined ? processCpuSeconds(worker.pid) - cpuBefore : NaN;
            push(api, `${s}\u0000${kind}\u0000${mine ? 'with' : 'without'}`, {
              ...(flows ? { flows } : {}),
              ...(error !== undefined ? { error } : {}),
              cpuMsPerFlow: (cpu * 1000) / o.flows,
            });
          }
        }
      }
    }
    // The backlogs run alone: the Worker with endpoints (and its never-answering endpoint's retries) stops.
    const withEndpointsCpu = withEndpoints.pid !== undefined ? cpuOrZero(withEndpoints.pid) : 0;
    workers.splice(workers.indexOf(withEndpoints), 1);
    await withEndpoints.stop();
    const recoveries: Recovery[] = [];
    for (const held of o.held ?? [1_000, 10_000]) {
      recoveries.push(
        await measureRecovery(baseline, receiver, {
          held,
          concurrency: o.concurrency,
          timeoutMs: o.recoveryTimeoutMs ?? 600_000,
          log: o.log,
        }),
      );
    }
    return [
      `API answer times: ${o.flows} 3DS flows per run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max). ` +
        "Each stage runs the Worker whose test merchant has no endpoint (the baseline) beside the one with endpoints, rounds alternating; ratios pair each run with the baseline's run of the same round. " +
        "workerd CPU: the Worker's process over the run and its deliveries, per flow.",
      '',
      apiTable(api),
      '',
      "At the receiver, the same runs: one `threeDS.authentication.completed` per flow to each answering endpoint; deliveries/s from the run's start to its last delivery; lag: the last delivery after the run's last answer; latency from the event's `createdAt` (the change) to its arrival, over every delivery of the run.",
      '',
      deliveryTable(delivered),
      '',
      `Held backlogs, on the baseline Worker once the other was stopped: a new endpoint, disabled; N pings to it (${o.concurrency} at a time, each held); then \`PATCH state=enabled\` and the time until the receiver had all N (per-endpoint limit: 4 deliveries in flight).`,
      '',
      recoveryTable(recoveries),
      '',
      othersNote(
        machineBusySeconds() - machineAtStart,
        (process.cpuUsage().user + process.cpuUsage().system) / 1e6 +
          (baseline.pid !== undefined ? cpuOrZero(baseline.pid) : 0) +
          withEndpointsCpu -
          ownAtStart,
        (performance.now() - wallAtStart) / 1000,
      ),
    ].join('\n');
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await receiver.close();
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.set(key, [...(map.get(key) ?? []), value]);
}

/** CPU seconds of a process, 0 once it has ended. */
function cpuOrZero(pid: number): number {
  try {
    return processCpuSeconds(pid);
  } catch {
    return 0;
  }
}

/** The machine's busy CPU seconds (all cores, /proc/stat: everything but idle and iowait). */
function machineBusySeconds(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = fields.map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - ticks[3]! - ticks[4]!) / 100;
}

function othersNote(machine: number, own: number, wall: number): string {
  const others = Math.max(0, machine - own);
  return (
    `Other processes on the machine during the measurements: ${fmt(others, 0)} CPU s in ${fmt(wall, 0)} s ` +
    `(${fmt(others / wall, 2)} of the 2 cores on average; this bench's own processes: ${fmt(own / wall, 2)}).`
  );
}

function describe(e: unknown): string {
  const cause = (e as { cause?: { message?: string } }).cause?.message;
  return `${(e as Error).message ?? String(e)}${cause !== undefined ? ` (${cause})` : ''}`;
}

/** After a failed run: waits until no delivery has arrived for 3 s (at most DRAIN_TIMEOUT_MS). */
async function quiet(receiver: Receiver): Promise<void> {
  let count = receiver.arrivals.length;
  let since = Date.now();
  await waitFor(() => {
    if (receiver.arrivals.length !== count) {
      count = receiver.arrivals.length;
      since = Date.now();
    }
    return Date.now() - since > 3_000;
  }, DRAIN_TIMEOUT_MS);
}

/** The run's deliveries at the answering endpoints: events created between `began` and `ended`. */
function runArrivals(receiver: Receiver, answering: Set<string>, began: number, ended: number): Arrival[] {
  return receiver.arrivals.filter((a) => answering.has(a.endpoint) && a.createdAt >= began && a.createdAt <= ended);
}

/** Waits until the run's `expected` deliveries have arrived (or DRAIN_TIMEOUT_MS has passed: the table shows what came). */
async function drain(
  receiver: Receiver,
  answering: Set<string>,
  began: number,
  ended: number,
  expected: number,
): Promise<void> {
  let seen = 0;
  let count = 0;
  await waitFor(() => {
    for (; seen < receiver.arrivals.length; seen++) {
      const a = receiver.arrivals[seen]!;
      if (answering.has(a.endpoint) && a.createdAt >= began && a.createdAt <= ended) count++;
    }
    return count >= expected;
  }, DRAIN_TIMEOUT_MS);
}

function deliveryOf(
  receiver: Receiver,
  answering: Set<string>,
  began: number,
  ended: number,
  drained: number,
  expected: number,
): Delivered {
  const arrivals = runArrivals(receiver, answering, began, ended);
  const latencies = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
  const last = Math.max(...arrivals.map((a) => a.at));
  return {
    deliveries: arrivals.length,
    expected,
    perSecond: arrivals.length / ((last - began) / 1000),
    lagMs: last - ended,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    unsigned: arrivals.filter((a) => !a.signed || a.eventType !== 'threeDS.authentication.completed').length,
    hung: receiver.hung.filter((h) => h.at >= began && h.at <= drained).length,
  };
}

/** min / **median** / max of the runs' ratios, each run over the baseline's run of its round (both answered). */
function ratios(runs: Run[], base: Run[], f: (r: FlowRun) => number): string {
  const paired = runs.flatMap((r, i) => (r.flows && base[i]?.flows ? [f(r.flows) / f(base[i].flows)] : []));
  return paired.length > 0 ? triple(paired, 2) : '–';
}

/** `triple` over the runs that answered, or – when none did. */
function over(runs: Run[], f: (r: FlowRun) => number, digits = 1): string {
  const ok = runs.flatMap((r) => (r.flows ? [f(r.flows)] : []));
  return ok.length > 0 ? triple(ok, digits) : '–';
}

function apiTable(api: Map<string, Run[]>): string {
  const lines = [
    '| endpoints (Worker with endpoints) | flow | test merchant has | flows/s | flow p50 ms | flow p99 ms | workerd CPU ms / flow | flows/s ÷ baseline | p50 ÷ baseline | p99 ÷ baseline | flows/s, runs in order | failed runs |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [s, stage] of STAGES.entries()) {
    for (const kind of KINDS) {
      const base = api.get(`${s}\u0000${kind}\u0000without`) ?? [];
      const runs = api.get(`${s}\u0000${kind}\u0000with`) ?? [];
      for (const [label, rs] of [
        ['no endpoint (baseline)', base],
        [stage.label, runs],
      ] as const) {
        const mine = rs === runs;
        const failed = rs.filter((r) => r.error !== undefined);
        lines.push(
          `| ${stage.label} | ${kind} | ${label} | ${over(rs, (f) => f.flowsPerSecond)} | ${over(rs, (f) => f.p50)} | ` +
            `${over(rs, (f) => f.p99)} | ${triple(
              rs.map((r) => r.cpuMsPerFlow),
              2,
            )} | ` +
            (mine
              ? `${ratios(runs, base, (f) => f.flowsPerSecond)} | ${ratios(runs, base, (f) => f.p50)} | ${ratios(runs, base, (f) => f.p99)} | `
              : '1.00 | 1.00 | 1.00 | ') +
            `${rs.map((r) => (r.flows ? fmt(r.flows.flowsPerSecond, 1) : 'failed')).join(', ')} | ` +
            `${failed.length === 0 ? '0' : `${failed.length}: ${[...new Set(failed.map((r) => r.error))].join('; ')}`} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

function deliveryTable(delivered: Map<string, Delivered[]>): string {
  const lines = [
    '| endpoints | flow | delivered / expected | deliveries/s (all endpoints) | lag after the last answer ms | change → delivery p50 ms | p99 ms | not verified | attempts at the never-answering endpoint |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [s, stage] of STAGES.entries()) {
    for (const kind of KINDS) {
      const runs = delivered.get(`${s}\u0000${kind}`) ?? [];
      const sum = (f: (d: Delivered) => number): number => runs.reduce((n, d) => n + f(d), 0);
      lines.push(
        `| ${stage.label} | ${kind} | ${sum((d) => d.deliveries)} / ${sum((d) => d.expected)} | ` +
          `${triple(runs.map((d) => d.perSecond))} | ${triple(
            runs.map((d) => d.lagMs),
            0,
          )} | ${triple(
            runs.map((d) => d.p50),
            0,
          )} | ${triple(
            runs.map((d) => d.p99),
            0,
          )} | ${sum((d) => d.unsigned)} | ${stage.hanging > 0 ? sum((d) => d.hung) : '–'} |`,
      );
    }
  }
  return lines.join('\n');
}
