import { startLocalWorker, type LocalWorker } from '../local-worker';
import { shardName, shardOf } from '../../src/events/event-shards';
import type { NewEvent } from '../../src/events/event-types';
import { createEndpoint, patchEndpoint, quantile, startReceiver, waitFor, type Receiver } from './events-receiver';
import { triple } from './summary';

/**
 * One merchant's event log under load, split or not (docs/benchmarks.md "Events: one merchant at
 * scale"). Two Workers of this tree side by side, the same bundle, one with `EVENT_LOG_SHARDS=1`
 * (the log in one object, as before the split: the same-run baseline) and one with the default 8.
 * Each gets one endpoint at the bench's receiver (every delivery's signature checked); then N
 * events, one subject each (as N 3DS transactions), are appended the way the owners append them:
 * one call per event to the shard of its subject, many at once. Measured: appends answered per
 * second, deliveries per second (from the first append to the last arrival), and the time from
 * each event's creation to its arrival, p50 and p99; first with an endpoint that answers at once,
 * then with one that takes 50 ms (what limits one object is then its deliveries in flight).
 */

/** The harness: the Worker as deployed, plus a route that makes the owners' append calls (10 a request). */
const APPEND_ENTRY = `
import worker from './index.js';
export * from './index.js';
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== '/bench/append') return worker.fetch(request, env, ctx);
    const calls = await request.json();
    await Promise.all(calls.map((c) =>
      env.EVENT_LOG.get(env.EVENT_LOG.idFromName(c.name)).append(c.username, c.events, c.shard)));
    return new Response(null, { status: 204 });
  },
};
`;

const USERNAME = 'test-merchant';
/** Append calls per request to the harness, and requests in flight. */
const CALLS_PER_REQUEST = 10;
const REQUESTS_IN_FLIGHT = 8;
const DRAIN_TIMEOUT_MS = 180_000;

export interface EventsScaleOptions {
  root: string;
  runs: number;
  /** Events per run (default 2,000). */
  events: number;
  log: (m: string) => void;
}

interface Sample {
  appendedPerS: number;
  deliveredPerS: number;
  p50: number;
  p99: number;
  unsigned: number;
  missing: number;
}

export async function runEventsScale(o: EventsScaleOptions): Promise<string> {
  const receiver = await startReceiver();
  const workers: { shards: number; worker: LocalWorker; endpointId: string; name: string }[] = [];
  try {
    for (const shards of [1, 8]) {
      const worker = await startLocalWorker({
        root: o.root,
        entry: APPEND_ENTRY,
        quiet: true,
        vars: { EVENT_LOG_SHARDS: String(shards) },
      });
      const name = `scale${shards}`;
      workers.push({ shards, worker, name, endpointId: await createEndpoint(worker, receiver, name) });
    }
    const rows: string[] = [];
    for (const endpoint of ['answers at once', 'answers in 50 ms'] as const) {
      const samples = new Map<number, Sample[]>(workers.map((w) => [w.shards, []]));
      for (const w of workers)
        await patchEndpoint(w.worker, w.endpointId, {
          url: receiver.url(w.name, endpoint === 'answers in 50 ms' ? 'slow' : false),
        });
      for (let run = 0; run < o.runs; run++) {
        // Alternate which Worker goes first.
        const order = run % 2 === 0 ? workers : [...workers].reverse();
        for (const w of order) {
          o.log(`events at scale: ${endpoint}, ${w.shards} shard(s), run ${run + 1}/${o.runs}`);
          samples.get(w.shards)!.push(await oneRun(w, receiver, o.events, `${endpoint.length}-${run}`));
        }
      }
      const base = samples.get(1)!;
      for (const w of workers) {
        const s = samples.get(w.shards)!;
        const ratios = s.map((x, i) => x.deliveredPerS / base[i]!.deliveredPerS);
        rows.push(
          `| ${endpoint} | ${w.shards} | ${triple(s.map((x) => x.appendedPerS))} | ${triple(s.map((x) => x.deliveredPerS))} | ` +
            `${w.shards === 1 ? '1 (baseline)' : triple(ratios, 2)} | ${triple(s.map((x) => x.p50))} | ${triple(s.map((x) => x.p99))} | ` +
            `${s.reduce((n, x) => n + x.missing, 0)} / ${s.reduce((n, x) => n + x.unsigned, 0)} |`,
        );
      }
    }
    return [
      `One merchant, ${o.events} events a run (one subject each, one append call each, ${CALLS_PER_REQUEST * REQUESTS_IN_FLIGHT} at once), one endpoint; ${o.runs} runs, min / median / max. The baseline is the same bundle with EVENT_LOG_SHARDS=1, in the same run.`,
      '',
      '| endpoint | shards | appends/s | deliveries/s | deliveries/s vs 1 shard | creation → arrival p50 ms | p99 ms | missing / unsigned |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  } finally {
    for (const w of workers) await w.worker.stop();
    await receiver.close();
  }
}

async function oneRun(
  w: { shards: number; worker: LocalWorker; name: string },
  receiver: Receiver,
  count: number,
  tag: string,
): Promise<Sample> {
  const runId = `${w.shards}_${tag.replaceAll(/[^A-Za-z0-9]/g, '')}_${Date.now()}`;
  const ids = new Set<string>();
  const calls = Array.from({ length: count }, (_, i) => {
    const subject = `threeDS:bench-${runId}-${i}`;
    const shard = shardOf(subject, w.shards);
    const event: NewEvent = {
      eventId: `evt_bench_${runId}_${i}`,
      eventType: 'threeDS.authentication.completed',
      subject,
      createdAt: 0,
      entity: 'default',
      data: { transactionReference: `bench-${i}`, outcome: 'authenticated' },
    };
    ids.add(event.eventId);
    return { name: shardName(USERNAME, shard), username: USERNAME, shard, events: [event] };
  });
  const arrivedBefore = receiver.arrivals.length;
  const start = Date.now();
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < calls.length) {
      const batch = calls.slice(next, next + CALLS_PER_REQUEST);
      next += CALLS_PER_REQUEST;
      const now = Date.now();
      for (const c of batch) c.events[0]!.createdAt = now;
      const answer = await fetch(new URL('/bench/append', w.worker.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(batch),
      });
      await answer.arrayBuffer();
      if (answer.status !== 204) throw new Error(`append answered ${answer.status}`);
    }
  };
  await Promise.all(Array.from({ length: REQUESTS_IN_FLIGHT }, sender));
  const appended = Date.now();
  const mine = () => receiver.arrivals.slice(arrivedBefore).filter((a) => ids.has(a.eventId));
  await waitFor(() => new Set(mine().map((a) => a.eventId)).size >= count, DRAIN_TIMEOUT_MS, 50);
  const arrivals = mine();
  const last = Math.max(...arrivals.map((a) => a.at));
  const latencies = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
  return {
    appendedPerS: count / ((appended - start) / 1000),
    deliveredPerS: count / ((last - start) / 1000),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    unsigned: arrivals.filter((a) => !a.signed).length,
    missing: count - new Set(arrivals.map((a) => a.eventId)).size,
  };
}
