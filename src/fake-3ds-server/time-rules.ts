/**
 * The provider's and the ACS's clocks (research notes §1.3, §1.7), as pure rules over a `now` the
 * caller passes: the fake's clock, Date.now() plus the offset the control routes set, so that a
 * test moves time instead of waiting for it.
 */

/** A prepared threeDSServerTransID can start an AReq for 80 s. */
export const PREPARED_LIFETIME_MS = 80_000;

/** The browser must post the CReq within 30 s of the ARes. */
export const CHALLENGE_START_WINDOW_MS = 30_000;

/** The provider keeps an RReq for 300 s after it arrived. */
export const RREQ_RETENTION_MS = 300_000;

/** Whether a transaction prepared at `preparedAt` is too old for its AReq. */
export function preparedExpired(preparedAt: number, now: number): boolean {
  return now - preparedAt > PREPARED_LIFETIME_MS;
}

/** Whether a CReq arriving now is later than the ACS accepts after the ARes of `aresAt`. */
export function creqTooLate(aresAt: number, now: number): boolean {
  return now - aresAt > CHALLENGE_START_WINDOW_MS;
}

/** Whether an RReq that arrived at `arrivedAt` has left the provider's cache. */
export function rreqExpired(arrivedAt: number, now: number): boolean {
  return now - arrivedAt > RREQ_RETENTION_MS;
}
