import { DELIVERY_TIMEOUT_MS } from './delivery-rules';

/**
 * What the EventLog object (src/events/event-log.ts) reaches outside itself: the outbound
 * request, its deadline, the clock and the jitter's randomness. A seam for the tests only, like
 * `objectStorage`: they put an in-test receiver in place of the network, a short deadline for a
 * receiver that hangs, and a clock they move forward to drive retries, the retry window and
 * endpoint health without waiting (the objects run in the tests' isolate). Nothing in the service
 * changes it.
 */
export const eventTransport = {
  /** Sends one delivery (`redirect: 'manual'`: a redirect is an answer, not followed). */
  fetch: (request: Request): Promise<Response> => fetch(request),
  /** A delivery's deadline: a 2xx later than this is a failed attempt. */
  timeoutMs: DELIVERY_TIMEOUT_MS,
  /** The objects' clock for events: due times, the retry window, retention, signature timestamps. */
  now: (): number => Date.now(),
  /** The retries' jitter: a number in [0, 1). */
  random: (): number => Math.random(),
};
