/**
 * Worldpay's limit on token updates (docs/tokens.md "Updates"): at most {@link MAX_UPDATES} in
 * any rolling {@link UPDATE_WINDOW_MS}. Pure, over the times of the updates already made, so
 * that the rule is tested with any clock (test/unit/update-limit.test.ts).
 */

export const MAX_UPDATES = 50;
export const UPDATE_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Whether an update at `now` is allowed, given the times of the token's earlier updates (any
 * order); when not, in how many seconds the next one is (the oldest of the last 50 then leaves
 * the window).
 *
 * @example
 * ```ts
 * updateAllowed([], 0); // { ok: true }
 * updateAllowed(Array(50).fill(0), 1_000); // { ok: false, retryAfterSeconds: 2_591_999 }
 * ```
 */
export function updateAllowed(
  earlier: readonly number[],
  now: number,
): { ok: true } | { ok: false; retryAfterSeconds: number } {
  const inWindow = earlier.filter((at) => at > now - UPDATE_WINDOW_MS && at <= now).sort((a, b) => a - b);
  if (inWindow.length < MAX_UPDATES) return { ok: true };
  const freeAt = inWindow[inWindow.length - MAX_UPDATES]! + UPDATE_WINDOW_MS;
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now) / 1000)) };
}
