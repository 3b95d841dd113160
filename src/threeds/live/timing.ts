/**
 * The clocks of a live authentication (docs/threeds.md "Live"), as pure rules over a `now` the
 * caller passes, so that they are tested with any clock:
 *
 * | window | length | who sets it | what it means here |
 * |---|---|---|---|
 * | prepared transaction | 80 s | the 3DS Server provider | authenticate prepares the card again once it is 70 s old |
 * | 3DS Method | 10 s | EMV | authenticate waits out the rest of the 10 s for a method still running; then it did not complete |
 * | DDC page | 7 s | this service | the page tells the merchant's checkout it is done after 7 s at most, so a checkout's own 8 s fallback never fires |
 * | start of the challenge | 30 s | the ACS | the challenge JWT expires 30 s after the ARes |
 * | challenge interaction | 10 min | the ACS | a challenge still open then has ended |
 * | result | 300 s | the 3DS Server provider | an RReq can be fetched for 300 s after it arrived |
 */

import { METHOD_WINDOW_MS } from './live-state';

export { METHOD_WINDOW_MS };
export const PREPARE_AGAIN_AFTER_MS = 70_000;
export const DDC_PAGE_GIVES_UP_MS = 7_000;
export const CHALLENGE_START_WINDOW_MS = 30_000;
export const CHALLENGE_INTERACTION_MS = 10 * 60_000;
export const RESULT_RETENTION_MS = 300_000;

/** Whether a card prepared at `preparedAt` must be prepared again before its AReq. */
export function needsPreparing(preparedAt: number | undefined, now: number): boolean {
  return preparedAt === undefined || now - preparedAt >= PREPARE_AGAIN_AFTER_MS;
}

/** What the transaction knows of its 3DS Method. */
export interface MethodState {
  /** The ACS's method URL for the chosen version; absent when the ACS has none. */
  url?: string;
  /** When the DDC page started the method in the browser. */
  startedAt?: number;
  /** When the ACS's notification reached the service. */
  completedAt?: number;
}

/**
 * The AReq's `threeDSCompInd`, or how long to wait first: `U` when the ACS has no method, `Y`
 * when the method completed (within its 10 s), `N` when it was never started or did not complete
 * within 10 s; while a started method still has time left, `wait` says how long.
 *
 * @example
 * ```ts
 * methodIndicator({ url: 'https://acs/m', startedAt: 0 }, 4_000); // { kind: 'wait', ms: 6_000 }
 * ```
 */
export function methodIndicator(
  method: MethodState,
  now: number,
): { kind: 'indicator'; value: 'Y' | 'N' | 'U' } | { kind: 'wait'; ms: number } {
  if (method.url === undefined) return { kind: 'indicator', value: 'U' };
  if (method.startedAt === undefined) return { kind: 'indicator', value: 'N' };
  const deadline = method.startedAt + METHOD_WINDOW_MS;
  if (method.completedAt !== undefined && method.completedAt <= deadline) return { kind: 'indicator', value: 'Y' };
  if (method.completedAt === undefined && now < deadline) return { kind: 'wait', ms: deadline - now };
  return { kind: 'indicator', value: 'N' };
}

/** The end of the window in which the browser must start the challenge (the challenge JWT's expiry). */
export function challengeStartDeadline(aresAt: number): number {
  return aresAt + CHALLENGE_START_WINDOW_MS;
}

/**
 * Until when the service may still fetch a challenge's RReq itself: the RReq arrives by the end of
 * the challenge's 10 minutes at the latest, and the provider keeps it 300 s.
 */
export function resultFetchableUntil(aresAt: number): number {
  return aresAt + CHALLENGE_INTERACTION_MS + RESULT_RETENTION_MS;
}
