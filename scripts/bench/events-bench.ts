import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyDelivery } from '../../examples/receive-events.mjs';
import { startLocalWorker, type LocalWorker } from '../local-worker';
import { timedFlows, type FlowKind, type FlowRun } from './threeds-flows';
import { fmt, stats, triple } from './summary';

/**
 * The events part of `npm run bench` (docs/benchmarks.md "Events"): the same 3DS flows against
 * two Workers of this tree served side by side, each with its own storage: one whose test merchant
 * has no endpoint (as configured), and one whose test merchant made an endpoint on a local HTTP
 * receiver (`POST /events/endpoints`, as a merchant does); the rounds alternate which goes first.
 * It reports the API's flow times with and without the endpoint (an event must never delay an
 * answer), and, at the receiver, the events delivered per second and the time from the change
 * (the event's `createdAt`) to its delivery, every signature checked with the receivers' own
 * function (examples/receive-events.mjs). A report, not a test.
 */

export interface EventsBenchOptions {
  root: string;
  runs: number;
  flows: number;
  concurrency: number;
  log: (m: string) => void;
}

const KINDS: FlowKind[] = ['frictionless', 'challenged'];

/** How long the receiver waits, after a run's last answer, for the run's events. */
const DRAIN_TIMEOUT_MS = 120_000;

const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;

interface Arrival {
  at: number;
  createdAt: number;
  eventType: string;
  signed: boolean;
}

interface Receiver {
  url: string;
  arrivals: Arrival[];
  server: Server;
  /** The endpoint's secret, once `POST /events/endpoints` answered it: every delivery is checked with it. */
  secret: string;
}

/** A local endpoint: answers 204 at once, and keeps each event's arrival time and signature check. */
async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', arrivals: [], server: createServer(), secret: '' };
  receiver.server.on('request', (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      response.writeHead(204).end();
      const event = JSON.parse(body) as { createdAt: string; eventType: string };
      let signed = true;
      try {
        // The webhook-* headers are single: Node gives each as a string.
        verifyDelivery(body, request.headers as Record<string, string>, receiver.secret);
      } catch {
        signed = false;
      }
      receiver.arrivals.push({ at, createdAt: Date.parse(event.createdAt), eventType: event.eventType, signed });
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  return receiver;
}

/** The test merchant's endpoint at `url` on `worker`, for every event type; answers its secret. */
async function createEndpoint(worker: LocalWorker, url: string): Promise<string> {
  const answer = await fetch(new URL('/events/endpoints', worker.url), {
    method: 'POST',
    headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ url, events: 'all', description: 'events bench receiver' }),
  });
  const body = (await answer.json()) as { secret?: string };
  if (answer.status !== 201 || typeof body.secret !== 'string')
    throw new Error(`POST /events/endpoints answered ${answer.status}: ${JSON.stringify(body)}`);
  return body.secret;
}

interface Delivered {
  events: number;
  expected: number;
  perSecond: number;
  p50: number;
  p99: number;
  unsigned: number;
}

export async function runEventsBench(o: EventsBenchOptions): Promise<string> {
  const receiver = await startReceiver();
  const workers: LocalWorker[] = [];
  try {
    o.log('bundling and serving both Workers');
    const without = { label: 'no endpoint', worker: await startLocalWorker({ root: o.root, quiet: true }) };
    workers.push(without.worker);
    const withIt = {
      label: 'an endpoint (local receiver)',
      worker: await startLocalWorker({ root: o.root, quiet: true }),
    };
    workers.push(withIt.worker);
    o.log(`creating an endpoint for test-merchant at ${receiver.url}`);
    receiver.secret = await createEndpoint(withIt.worker, receiver.url);
    const order = [without, withIt];
    const flows = new Map<string, FlowRun[]>();
    const delivered = new Map<FlowKind, Delivered[]>();
    // Events the endpoint's Worker has made so far (one per flow): each run waits for its own.
    let expected = 0;
    for (const kind of KINDS) {
      const warm = Math.min(20, o.flows);
      o.log(`${kind} flows, warm-up (${warm} flows each)`);
      for (const v of order) await timedFlows(v.worker.url, kind, warm, o.concurrency);
      expected += warm;
      await drain(receiver.arrivals, expected);
      for (let run = 0; run < o.runs; run++) {
        for (const v of run % 2 === 0 ? order : [...order].reverse()) {
          o.log(`${kind} flows, run ${run + 1}/${o.runs}, ${v.label}`);
          const from = receiver.arrivals.length;
          const began = Date.now();
          const timed = await timedFlows(v.worker.url, kind, o.flows, o.concurrency);
          flows.set(`${kind}\u0000${v.label}`, [...(flows.get(`${kind}\u0000${v.label}`) ?? []), timed]);
          if (v !== withIt) continue;
          expected += o.flows;
          await drain(receiver.arrivals, expected);
          delivered.set(kind, [
            ...(delivered.get(kind) ?? []),
            deliveryOf(receiver.arrivals.slice(from), o.flows, began),
          ]);
        }
      }
    }
    return [
      `${o.flows} flows per run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max); the same tree, its test merchant without and with an endpoint`,
      '',
      flowTable(
        order.map((v) => v.label),
        flows,
      ),
      '',
      "At the receiver (the Worker with an endpoint): one `threeDS.authentication.completed` per flow; latency from the event's `createdAt` (the change) to its arrival",
      '',
      deliveryTable(delivered),
    ].join('\n');
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    receiver.server.close();
  }
}

/** Waits until `count` events have arrived (or gives up after DRAIN_TIMEOUT_MS: the table shows what came). */
async function drain(arrivals: Arrival[], count: number): Promise<void> {
  const until = Date.now() + DRAIN_TIMEOUT_MS;
  while (arrivals.length < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

function deliveryOf(arrivals: Arrival[], expected: number, began: number): Delivered {
  const latencies = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const last = Math.max(...arrivals.map((a) => a.at));
  return {
    events: arrivals.length,
    expected,
    perSecond: arrivals.length / ((last - began) / 1000),
    p50: at(0.5),
    p99: at(0.99),
    unsigned: arrivals.filter((a) => !a.signed || a.eventType !== 'threeDS.authentication.completed').length,
  };
}

function flowTable(labels: string[], results: Map<string, FlowRun[]>): string {
  const lines = [
    '| flow | test merchant has | flows/s | flow p50 ms | flow p99 ms | flows/s ÷ no endpoint (medians) |',
    '|---|---|---|---|---|---|',
  ];
  for (const kind of KINDS) {
    const base = stats((results.get(`${kind}\u0000${labels[0]!}`) ?? []).map((r) => r.flowsPerSecond)).median;
    for (const label of labels) {
      const runs = results.get(`${kind}\u0000${label}`) ?? [];
      const ratio = stats(runs.map((r) => r.flowsPerSecond)).median / base;
      lines.push(
        `| ${kind} | ${label} | ${triple(runs.map((r) => r.flowsPerSecond))} | ${triple(runs.map((r) => r.p50))} | ` +
          `${triple(runs.map((r) => r.p99))} | ${label === labels[0] ? '1.00' : fmt(ratio, 2)} |`,
      );
    }
  }
  return lines.join('\n');
}

function deliveryTable(delivered: Map<FlowKind, Delivered[]>): string {
  const lines = [
    '| flow | delivered / expected | events/s delivered | change → delivery p50 ms | p99 ms | not verified |',
    '|---|---|---|---|---|---|',
  ];
  for (const kind of KINDS) {
    const runs = delivered.get(kind) ?? [];
    const sum = (f: (d: Delivered) => number): number => runs.reduce((s, d) => s + f(d), 0);
    lines.push(
      `| ${kind} | ${sum((d) => d.events)} / ${sum((d) => d.expected)} | ${triple(runs.map((d) => d.perSecond))} | ` +
        `${triple(
          runs.map((d) => d.p50),
          0,
        )} | ${triple(
          runs.map((d) => d.p99),
          0,
        )} | ${sum((d) => d.unsigned)} |`,
    );
  }
  return lines.join('\n');
}
