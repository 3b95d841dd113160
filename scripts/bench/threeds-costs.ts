import { startLocalWorker } from '../local-worker';
import { processCpuSeconds } from './load';
import { floorFlow, startFloor } from './threeds-floor';
import { runFlow, timed, type FlowKind, type FlowBenchOptions } from './threeds-flows';
import { fmt, stats, triple } from './summary';

/**
 * `npm run bench -- --only threeds-costs`: what each platform call the 3DS flows must make costs
 * workerd, measured by taking it away. This tree's Worker is served several times in the same
 * run, each behind a harness entry that turns one kind of call into a no-op (in the Worker and in
 * the transaction's object alike), beside the unchanged Worker and the floor; each serves the
 * same flows, in turn, and the table gives workerd's CPU per flow. The difference a no-op makes
 * is that call's cost, the simulator's included: a KV write in Miniflare is a local SQLite and
 * file write, where the deployed service makes a network call. A report, not a test: the variants
 * answer what the flows check (outcome `authenticated`), but none of them keeps the guarantees
 * the call is there for.
 */

export type ThreeDsCostsOptions = FlowBenchOptions;

interface Taken {
  /** The KV projection's writes (`SESSIONS.put`). */
  kvPut?: boolean;
  /** The append of the transaction's event to its merchant's EventLog object. */
  eventAppend?: boolean;
  /** The transaction's alarm settings (`setAlarm`, `getAlarm` answering none). */
  alarm?: boolean;
  /** The request's log line (`console.log`). */
  logLine?: boolean;
}

const VARIANTS: { label: string; taken: Taken }[] = [
  { label: 'this tree', taken: {} },
  { label: 'without the KV projection’s write', taken: { kvPut: true } },
  { label: 'without the event’s append to the EventLog', taken: { eventAppend: true } },
  { label: 'without setting the alarm', taken: { alarm: true } },
  { label: 'without the log line', taken: { logLine: true } },
  { label: 'without all four', taken: { kvPut: true, eventAppend: true, alarm: true, logLine: true } },
];

/** The harness entry of one variant: this tree's Worker and object with the `taken` calls made no-ops. */
function entry(t: Taken): string {
  return `
import worker, * as all from './index.js';
export * from './index.js';
${t.logLine ? 'console.log = () => {};' : ''}
const noPut = (kv) => new Proxy(kv, { get(target, p) {
  if (p === 'put') return async () => undefined;
  const v = Reflect.get(target, p);
  return typeof v === 'function' ? v.bind(target) : v;
} });
const patched = (env) => ${t.kvPut ? '({ ...env, SESSIONS: noPut(env.SESSIONS) })' : 'env'};
const appendOnly = { idFromName: (n) => ({ toString: () => n, name: n }), idFromString: (s) => ({ toString: () => s }),
  get: () => new Proxy({}, { get: (_t, m) => (m === 'then' ? undefined : async () => ({ appended: 1 })) }) };
export class ThreeDsTransaction extends all.ThreeDsTransaction {
  constructor(ctx, env) {
    ${t.alarm ? 'ctx.storage.setAlarm = async () => undefined; ctx.storage.getAlarm = async () => null;' : ''}
    super(ctx, ${t.eventAppend ? '{ ...patched(env), EVENT_LOG: appendOnly }' : 'patched(env)'});
  }
}
export default { fetch: (request, env, ctx) => worker.fetch(request, patched(env), ctx) };
`;
}

export async function runThreeDsCosts(o: ThreeDsCostsOptions): Promise<string> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const served: { label: string; pid?: number; flow: (kind: FlowKind) => Promise<number> }[] = [];
    for (const v of VARIANTS) {
      o.log(`serving this tree’s Worker ${v.label === 'this tree' ? 'unchanged' : v.label}`);
      const w = await startLocalWorker({ root: o.root, entry: entry(v.taken), quiet: true });
      stops.push(() => w.stop());
      served.push({
        label: v.label,
        ...(w.pid !== undefined ? { pid: w.pid } : {}),
        flow: (k) => runFlow(w.url, k, false),
      });
    }
    const floor = await startFloor(o.root);
    stops.push(() => floor.stop());
    served.push({
      label: 'floor',
      ...(floor.pid !== undefined ? { pid: floor.pid } : {}),
      flow: (k) => floorFlow(floor.url, k),
    });

    const cpu = new Map<string, number[]>();
    for (const kind of ['frictionless', 'challenged'] as const) {
      o.log(`${kind} flows, warm-up`);
      for (const s of served) await timed(() => s.flow(kind), Math.min(20, o.flows), o.concurrency);
      for (let run = 0; run < o.runs; run++) {
        o.log(`${kind} flows, run ${run + 1}/${o.runs}, each Worker in turn`);
        for (const s of run % 2 === 0 ? served : [...served].reverse()) {
          const before = s.pid !== undefined ? processCpuSeconds(s.pid) : NaN;
          await timed(() => s.flow(kind), o.flows, o.concurrency);
          const ms = (((s.pid !== undefined ? processCpuSeconds(s.pid) : NaN) - before) * 1000) / o.flows;
          const key = `${kind}\u0000${s.label}`;
          cpu.set(key, [...(cpu.get(key) ?? []), ms]);
        }
      }
    }

    const lines = [
      `What each platform call of the flows costs workerd: this tree's Worker served once unchanged and once for each call made a no-op (in the Worker and in its objects), beside the floor, in the same run; ${o.flows} flows a run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max of workerd's CPU per flow, ms). ` +
        "The saving is the median against the unchanged Worker's; \"floor ÷\" is the floor's CPU over the variant's, which bounds the flows/s ratio when CPU is what limits it. No variant keeps the guarantee its call is there for.",
      '',
      '| flow | Worker | workerd CPU ms/flow | saving ms/flow | floor ÷ |',
      '|---|---|---|---|---|',
    ];
    for (const kind of ['frictionless', 'challenged'] as const) {
      const median = (label: string): number => stats(cpu.get(`${kind}\u0000${label}`) ?? []).median;
      for (const s of served) {
        const own = median(s.label);
        const saving = s.label === 'this tree' || s.label === 'floor' ? '–' : fmt(median('this tree') - own, 2);
        lines.push(
          `| ${kind} | ${s.label} | ${triple(cpu.get(`${kind}\u0000${s.label}`) ?? [])} | ${saving} | ${fmt(median('floor') / own, 2)} |`,
        );
      }
    }
    return lines.join('\n');
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}
