import type { DeliveryError } from './event-types';
import { backoffMs } from '../backoff';

/**
 * When and in what order events are sent (docs/events.md "Delivery"). Pure policy; the EventLog
 * object (src/events/event-log.ts) does the I/O.
 */

/** A 2xx within this long is delivered (docs/events.md "Delivery"); anything slower is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The first retry comes this long after the first failure (within a minute), then doubles… */
export const RETRY_BASE_MS = 30_000;
/** …up to once an hour. */
export const RETRY_MAX_MS = 60 * 60 * 1000;
/** A delivery is retried for this long after its event (or its redelivery), then marked failed. */
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
/**
 * Deliveries in flight at once, per object (one merchant) and per endpoint: an endpoint that
 * hangs holds at most its share for one deadline each, never every slot of the merchant's others.
 */
export const MAX_IN_FLIGHT = 16;
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4;

/** What an attempt came to. */
export type AttemptOutcome =
  { delivered: true; status: number } | { delivered: false; error: DeliveryError; status?: number };

/** A 2xx is delivered; a 3xx (never followed: `redirect: 'manual'`) and every other status are not. */
export function outcomeOfStatus(status: number): AttemptOutcome {
  if (status >= 200 && status <= 299) return { delivered: true, status };
  return { delivered: false, error: status >= 300 && status <= 399 ? 'redirect' : 'status', status };
}

/** The wait after the n-th failure in a row (1-based): 30 s, 1 min, 2 min, … at most an hour. */
export function retryDelayMs(failures: number, baseMs = RETRY_BASE_MS): number {
  return backoffMs(failures, baseMs, RETRY_MAX_MS);
}

/**
 * After a failed attempt: tried again after the backoff, or failed for good once its window (from
 * the event, or from its redelivery) is over. An event that waited behind an earlier one of its
 * subject past its own window still gets its one attempt first.
 */
export function afterFailure(
  delivery: { windowStart: number; failures: number },
  now: number,
  windowMs = RETRY_WINDOW_MS,
  baseMs = RETRY_BASE_MS,
): { state: 'failed' } | { state: 'pending'; nextAt: number } {
  if (now >= delivery.windowStart + windowMs) return { state: 'failed' };
  return { state: 'pending', nextAt: now + retryDelayMs(delivery.failures, baseMs) };
}

/** The first pending delivery of one subject to one endpoint: the only one of them that may be sent. */
export interface Head {
  /** The delivery's key: event sequence and endpoint. */
  key: string;
  endpoint: string;
  nextAt: number;
}

/**
 * Which heads to send now: those due and not in flight, soonest first, within the limits (in
 * flight already counted). `inFlight` maps each delivery in flight to its endpoint.
 */
export function pickDue<H extends Head>(
  heads: readonly H[],
  inFlight: ReadonlyMap<string, string>,
  now: number,
  limits = { total: MAX_IN_FLIGHT, perEndpoint: MAX_IN_FLIGHT_PER_ENDPOINT },
): H[] {
  const perEndpoint = new Map<string, number>();
  for (const endpoint of inFlight.values()) perEndpoint.set(endpoint, (perEndpoint.get(endpoint) ?? 0) + 1);
  let total = inFlight.size;
  const picked: H[] = [];
  for (const head of [...heads].sort((a, b) => a.nextAt - b.nextAt)) {
    if (total >= limits.total) break;
    if (head.nextAt > now || inFlight.has(head.key)) continue;
    const n = perEndpoint.get(head.endpoint) ?? 0;
    if (n >= limits.perEndpoint) continue;
    perEndpoint.set(head.endpoint, n + 1);
    total++;
    picked.push(head);
  }
  return picked;
}

/**
 * When the next head is due (undefined when none is pending): a head in flight is due again only
 * once its attempt has had its deadline (the alarm then finds it done, or ends it).
 */
export function nextDue(
  heads: readonly Head[],
  inFlight: ReadonlyMap<string, string>,
  now: number,
  timeoutMs = DELIVERY_TIMEOUT_MS,
): number | undefined {
  let due: number | undefined;
  for (const head of heads) {
    const at = inFlight.has(head.key) ? now + timeoutMs : head.nextAt;
    due = due === undefined ? at : Math.min(due, at);
  }
  return due;
}
