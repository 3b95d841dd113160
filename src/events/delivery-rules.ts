import type { DeliveryError } from './event-types';
import { backoffMs } from '../backoff';

/**
 * When and in what order events are sent (docs/events.md "Delivery"). Pure policy; the EventLog
 * object (src/events/event-log.ts, its attempts in delivery-attempt.ts) does the I/O.
 */

/** A 2xx within this long is delivered (docs/events.md "Delivery"); anything slower is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The first retry comes this long after the first failure (within a minute), then doubles… */
export const RETRY_BASE_MS = 30_000;
/** …up to once an hour. */
export const RETRY_MAX_MS = 60 * 60 * 1000;
/** A delivery is retried for this long after it was appended (or sent again), then marked failed. */
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
/**
 * Deliveries in flight at once, per object (one merchant) and per endpoint: an endpoint that
 * hangs holds at most its share for one deadline each, never every slot of the merchant's others.
 */
export const MAX_IN_FLIGHT = 16;
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4;

/** An endpoint with no success for this long (while it failed) is disabled, and its deliveries held. */
export const ENDPOINT_FAILING_MS = 3 * 24 * 60 * 60 * 1000;

/** What an attempt came to: its status when there was one, how long it took, and any Retry-After. */
export type AttemptOutcome = { durationMs?: number } & (
  | { delivered: true; status: number }
  | { delivered: false; error: DeliveryError; status?: number; retryAfterMs?: number }
);

/**
 * A 2xx is delivered; a 3xx (never followed: `redirect: 'manual'`) and every other status are not.
 * A `429` or `503` with `Retry-After` (seconds or an HTTP date) says how long to wait.
 */
export function outcomeOfStatus(status: number, retryAfter: string | null = null, now = 0): AttemptOutcome {
  if (status >= 200 && status <= 299) return { delivered: true, status };
  const wait = status === 429 || status === 503 ? retryAfterMs(retryAfter, now) : undefined;
  return {
    delivered: false,
    error: status >= 300 && status <= 399 ? 'redirect' : 'status',
    status,
    ...(wait !== undefined ? { retryAfterMs: wait } : {}),
  };
}

/** A `Retry-After` value in ms (delay seconds or an HTTP date), at most the backoff's ceiling; undefined when unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  // Delay seconds, or an IMF-fixdate (`Wed, 21 Oct 2026 07:28:00 GMT`): nothing else is one.
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : / GMT$/.test(text) ? Date.parse(text) - now : NaN;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(RETRY_MAX_MS, Math.max(0, ms));
}

/**
 * The wait after the n-th failure in a row (1-based), with jitter: between half and all of 30 s,
 * 1 min, 2 min, … at most an hour, so that many deliveries failed together do not come back together.
 */
export function retryDelayMs(failures: number, random: number, baseMs = RETRY_BASE_MS): number {
  const ceiling = backoffMs(failures, baseMs, RETRY_MAX_MS);
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

/**
 * After a failed attempt: tried again after the backoff (or the endpoint's Retry-After, when
 * longer, up to the ceiling), or failed for good once its window (from when it was appended or
 * sent again) is over. An event that waited behind an earlier one of its subject past its own
 * window still gets its one attempt first.
 */
export function afterFailure(
  delivery: { windowStart: number; failures: number; retryAfterMs?: number | undefined },
  now: number,
  random: number,
  windowMs = RETRY_WINDOW_MS,
  baseMs = RETRY_BASE_MS,
): { state: 'failed' } | { state: 'pending'; nextAt: number } {
  if (now >= delivery.windowStart + windowMs) return { state: 'failed' };
  const wait = Math.max(retryDelayMs(delivery.failures, random, baseMs), delivery.retryAfterMs ?? 0);
  return { state: 'pending', nextAt: now + wait };
}
