import { storageCounts, timedFlows, type FlowKind, type FlowRun, type StepCounts } from './threeds-flows';
import { startVersions, type WorkerVersion } from './worker-versions';
import { fmt, stats, triple } from './summary';

/**
 * The 3DS part of `npm run bench`: full frictionless and challenged flows, `concurrency` at a
 * time, against this tree's Worker and an earlier commit's, both bundled as deployed and served
 * by Miniflare in the same run; the rounds alternate which version goes first. Also the storage
 * calls each step makes (KV and Durable Object separately). A report, not a test.
 */

export interface ThreeDsBenchOptions {
  root: string;
  baselineRef: string;
  runs: number;
  flows: number;
  concurrency: number;
  log: (m: string) => void;
}

const KINDS: FlowKind[] = ['frictionless', 'challenged'];

export async function runThreeDsBench(o: ThreeDsBenchOptions): Promise<string> {
  const versions = await startVersions(o.root, o.baselineRef, o.log);
  try {
    const order: WorkerVersion[] = [versions.baseline, versions.current];
    const counts = new Map<WorkerVersion, Record<string, StepCounts>>();
    for (const v of order) {
      o.log(`counting the storage calls of each step, ${v.label}`);
      counts.set(v, await storageCounts(v));
    }
    const results = new Map<string, FlowRun[]>();
    for (const kind of KINDS) {
      o.log(`${kind} flows, warm-up (${Math.min(20, o.flows)} flows each)`);
      for (const v of order) await timedFlows(v.worker.url, kind, Math.min(20, o.flows), o.concurrency); // warm-up
      for (let run = 0; run < o.runs; run++) {
        for (const v of run % 2 === 0 ? order : [...order].reverse()) {
          o.log(`${kind} flows, run ${run + 1}/${o.runs}, ${v.label}`);
          const key = `${kind}\u0000${v.label}`;
          results.set(key, [...(results.get(key) ?? []), await timedFlows(v.worker.url, kind, o.flows, o.concurrency)]);
        }
      }
    }
    return [
      flowTable(o, order, results),
      '',
      `Storage calls per request of each step (one counted flow of each kind; KV reads / writes, Durable Object calls)`,
      '',
      countsTable(order, counts),
    ].join('\n');
  } finally {
    await versions.stop();
  }
}

function flowTable(o: ThreeDsBenchOptions, order: WorkerVersion[], results: Map<string, FlowRun[]>): string {
  const lines = [
    `${o.flows} flows per run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max)`,
    '',
    '| flow | Worker | flows/s | requests/s | flow p50 ms | flow p99 ms | flows/s ÷ baseline (medians) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const kind of KINDS) {
    const baseline = stats((results.get(`${kind}\u0000${order[0]!.label}`) ?? []).map((r) => r.flowsPerSecond)).median;
    for (const v of order) {
      const runs = results.get(`${kind}\u0000${v.label}`) ?? [];
      const ratio = stats(runs.map((r) => r.flowsPerSecond)).median / baseline;
      lines.push(
        `| ${kind} | ${v.label} | ${triple(runs.map((r) => r.flowsPerSecond))} | ${triple(runs.map((r) => r.requestsPerSecond))} | ` +
          `${triple(runs.map((r) => r.p50))} | ${triple(runs.map((r) => r.p99))} | ${v === order[0] ? '1.00' : fmt(ratio, 2)} |`,
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
