import type { LocalWorker } from '../local-worker';
import { processCpuSeconds } from './load';
import { createEndpoint, eventsApi, patchEndpoint, waitFor, type Receiver } from './events-receiver';
import { fmt } from './summary';

/**
 * The held-backlog part of the events bench: how long an endpoint takes to get what was held for
 * it while it was disabled, once it is enabled again. A fresh endpoint of the test merchant at a
 * local receiver is disabled (`PATCH state=disabled`); `held` events are appended for it while it
 * is (pings: `POST /events/endpoints/{id}/ping`, the cheapest event to make through the API, each
 * with its own subject and sent only to that endpoint; a ping to a disabled endpoint is held like
 * any event); then `PATCH state=enabled` releases them, and the clock runs from that request until
 * the receiver has every one, each signature checked. The endpoint is deleted afterwards.
 */

export interface Recovery {
  held: number;
  /** Pings made per second while the endpoint was disabled (`concurrency` at a time). */
  pingsPerSecond: number;
  /** Deliveries that arrived while it was disabled (should be none). */
  arrivedWhileDisabled: number;
  /** The `PATCH state=enabled` answer's time, ms. */
  enableMs: number;
  /** From the enabling request to the first arrival, and to the last (or to the timeout), ms. */
  firstMs: number;
  allMs: number;
  /** Distinct held events that arrived (of `held`), deliveries in all (duplicates included), signatures not verified. */
  received: number;
  deliveries: number;
  unsigned: number;
  /** Deliveries per second from the enabling request to the last arrival. */
  perSecond: number;
  /** Gaps between consecutive arrivals: the longest, and how many were over 100 ms. */
  longestGapMs: number;
  gapsOver100ms: number;
  /** The Worker's workerd CPU from the enabling request to the last arrival, ms per delivery. */
  cpuMsPerDelivery: number;
  timedOut: boolean;
}

export async function measureRecovery(
  worker: LocalWorker,
  receiver: Receiver,
  o: { held: number; concurrency: number; timeoutMs: number; log: (m: string) => void },
): Promise<Recovery> {
  const name = `held-${o.held}`;
  const endpointId = await createEndpoint(worker, receiver, name);
  await patchEndpoint(worker, endpointId, { state: 'disabled' });
  const mine = () => receiver.arrivals.filter((a) => a.endpoint === name);
  o.log(`held backlog: ${o.held.toLocaleString('en-US')} pings to a disabled endpoint, ${o.concurrency} at a time`);
  const eventIds = new Set<string>();
  let next = 0;
  const pinging = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.held) {
        next++;
        const { eventId } = await eventsApi<{ eventId: string }>(
          worker,
          'POST',
          `/events/endpoints/${endpointId}/ping`,
          202,
        );
        eventIds.add(eventId);
      }
    }),
  );
  const pingsPerSecond = o.held / ((performance.now() - pinging) / 1000);
  // Anything sent while disabled would have come by now (a delivery is tried at once).
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const arrivedWhileDisabled = mine().length;

  o.log(`held backlog: enabling the endpoint, waiting for ${o.held.toLocaleString('en-US')} deliveries`);
  const from = receiver.arrivals.length;
  const cpuBefore = worker.pid !== undefined ? processCpuSeconds(worker.pid) : NaN;
  const enabledAt = Date.now();
  const began = performance.now();
  await patchEndpoint(worker, endpointId, { state: 'enabled' });
  const enableMs = performance.now() - began;
  const got = new Set<string>();
  let seen = from;
  let lastProgress = Date.now();
  const done = await waitFor(
    () => {
      for (; seen < receiver.arrivals.length; seen++) {
        const a = receiver.arrivals[seen]!;
        if (a.endpoint === name && eventIds.has(a.eventId)) got.add(a.eventId);
      }
      if (Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now();
        o.log(`held backlog: ${got.size.toLocaleString('en-US')} / ${o.held.toLocaleString('en-US')} delivered`);
      }
      return got.size >= o.held;
    },
    o.timeoutMs,
    10,
  );
  const cpuAfter = worker.pid !== undefined ? processCpuSeconds(worker.pid) : NaN;
  const arrivals = receiver.arrivals.slice(from).filter((a) => a.endpoint === name);
  const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
  const last = times[times.length - 1] ?? Date.now();
  let longestGapMs = times.length > 0 ? times[0]! - enabledAt : 0;
  let gapsOver100ms = 0;
  for (let i = 1; i < times.length; i++) {
    const gap = times[i]! - times[i - 1]!;
    longestGapMs = Math.max(longestGapMs, gap);
    if (gap > 100) gapsOver100ms++;
  }
  await eventsApi(worker, 'DELETE', `/events/endpoints/${endpointId}`, 204);
  return {
    held: o.held,
    pingsPerSecond,
    arrivedWhileDisabled,
    enableMs,
    firstMs: (times[0] ?? NaN) - enabledAt,
    allMs: last - enabledAt,
    received: got.size,
    deliveries: arrivals.length,
    unsigned: arrivals.filter((a) => !a.signed || a.eventType !== 'ping').length,
    perSecond: arrivals.length / ((last - enabledAt) / 1000),
    longestGapMs,
    gapsOver100ms,
    cpuMsPerDelivery: ((cpuAfter - cpuBefore) * 1000) / Math.max(1, arrivals.length),
    timedOut: !done,
  };
}

export function recoveryTable(runs: Recovery[]): string {
  const lines = [
    '| held events | pings/s while disabled | `PATCH state=enabled` answered in ms | first delivery after ms | all delivered after s | delivered / held | deliveries/s | longest gap ms | gaps > 100 ms | workerd CPU ms / delivery | arrived while disabled | not verified |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of runs) {
    lines.push(
      `| ${r.held.toLocaleString('en-US')} | ${fmt(r.pingsPerSecond, 0)} | ${fmt(r.enableMs, 0)} | ${fmt(r.firstMs, 0)} | ` +
        `${r.timedOut ? '> ' : ''}${fmt(r.allMs / 1000, 1)} | ${r.received.toLocaleString('en-US')} / ${r.held.toLocaleString('en-US')}` +
        `${r.deliveries !== r.received ? ` (${r.deliveries.toLocaleString('en-US')} deliveries)` : ''} | ${fmt(r.perSecond, 0)} | ` +
        `${fmt(r.longestGapMs, 0)} | ${r.gapsOver100ms} | ${fmt(r.cpuMsPerDelivery, 2)} | ${r.arrivedWhileDisabled} | ${r.unsigned} |`,
    );
  }
  return lines.join('\n');
}
