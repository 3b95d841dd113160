import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyDelivery } from '../../examples/receive-events.mjs';
import type { LocalWorker } from '../local-worker';

/**
 * The local endpoints of the events bench (scripts/bench/events-bench.ts) and its calls to the
 * events API. One Node HTTP server stands for every endpoint a merchant makes, each on its own
 * path: `/hooks/<name>` answers 204 at once, then checks the delivery's signature with the
 * receivers' own function (examples/receive-events.mjs) and keeps its arrival; `/hang/<name>`
 * never answers (the Worker gives up at its deadline), and only counts the attempts.
 */

/** How long a `slow/` endpoint takes to answer. */
export const SLOW_ENDPOINT_MS = 50;

export const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;

export interface Arrival {
  /** Date.now() when the body had arrived (before the answer). */
  at: number;
  /** The event's `createdAt`, ms. */
  createdAt: number;
  eventId: string;
  eventType: string;
  /** The endpoint it came to (its path's name). */
  endpoint: string;
  /** Its `webhook-signature` verified with that endpoint's secret. */
  signed: boolean;
}

export interface Receiver {
  /** The URL of the endpoint `name`: answering, never answering with `hang`, or answering after 50 ms with `slow`. */
  url(name: string, hang?: boolean | 'slow'): string;
  /** The secret each endpoint verifies with, by name (set once `POST /events/endpoints` answered it). */
  secrets: Map<string, string>;
  arrivals: Arrival[];
  /** Attempts that reached a never-answering endpoint. */
  hung: { at: number; endpoint: string }[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const arrivals: Arrival[] = [];
  const hung: Receiver['hung'] = [];
  const secrets = new Map<string, string>();
  const waiting = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const [, kind, name = ''] = (request.url ?? '').split('/');
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const at = Date.now();
      if (kind === 'hang') {
        // Never answered: the Worker's deadline ends the attempt (and the connection).
        hung.push({ at, endpoint: name });
        waiting.add(response);
        response.on('close', () => waiting.delete(response));
        return;
      }
      // `slow/`: an endpoint that takes SLOW_ENDPOINT_MS to answer, as a real one across the network does.
      if (kind === 'slow') setTimeout(() => response.writeHead(204).end(), SLOW_ENDPOINT_MS);
      else response.writeHead(kind === 'hooks' ? 204 : 404).end();
      if (kind !== 'hooks' && kind !== 'slow') return;
      const body = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(body) as { createdAt: string; eventType: string; eventId: string };
      let signed = true;
      try {
        // The webhook-* headers are single: Node gives each as a string.
        verifyDelivery(body, request.headers as Record<string, string>, secrets.get(name) ?? '');
      } catch {
        signed = false;
      }
      arrivals.push({
        at,
        createdAt: Date.parse(event.createdAt),
        eventId: event.eventId,
        eventType: event.eventType,
        endpoint: name,
        signed,
      });
    });
  });
  // Connections stay open between deliveries (keep-alive); none times out under the Worker's deadline.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name, hang = false) =>
      `http://127.0.0.1:${port}/${hang === 'slow' ? 'slow' : hang ? 'hang' : 'hooks'}/${name}`,
    secrets,
    arrivals,
    hung,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of waiting) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One call to the events API of `worker` as the test merchant; throws unless it answers `status`. */
export async function eventsApi<T>(
  worker: LocalWorker,
  method: string,
  path: string,
  status: number,
  body?: unknown,
): Promise<T> {
  const answer = await fetch(new URL(path, worker.url), {
    method,
    headers: { Authorization: AUTH, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await answer.text();
  if (answer.status !== status) throw new Error(`${method} ${path} answered ${answer.status}: ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/**
 * A new endpoint of the test merchant for every event type at the receiver's endpoint `name`
 * (`POST /events/endpoints`, as a merchant makes one); the receiver keeps its secret. Answers its id.
 */
export async function createEndpoint(
  worker: LocalWorker,
  receiver: Receiver,
  name: string,
  hang: boolean | 'slow' = false,
): Promise<string> {
  const created = await eventsApi<{ endpointId: string; secret: string }>(worker, 'POST', '/events/endpoints', 201, {
    url: receiver.url(name, hang),
    events: 'all',
    description: `events bench ${name}`,
  });
  receiver.secrets.set(name, created.secret);
  return created.endpointId;
}

/** `PATCH /events/endpoints/{endpointId}`. */
export function patchEndpoint(
  worker: LocalWorker,
  endpointId: string,
  change: { url?: string; state?: 'enabled' | 'disabled' },
): Promise<unknown> {
  return eventsApi(worker, 'PATCH', `/events/endpoints/${endpointId}`, 200, change);
}

/** Waits until `done()` or `timeoutMs` has passed; true when done. */
export async function waitFor(done: () => boolean, timeoutMs: number, pollMs = 20): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return true;
}

/** The q-quantile of ascending `sorted` (NaN when empty). */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
