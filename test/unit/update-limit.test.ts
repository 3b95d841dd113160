import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_UPDATES, UPDATE_WINDOW_MS, updateAllowed } from '../../src/tokens/update-limit';

/**
 * The rolling limit on token updates (docs/tokens.md "Updates"), as properties over any sequence
 * of attempts: what it lets through never exceeds 50 in any 30 days, it refuses only when 50 are
 * already in the window, and the Retry-After it gives is exact.
 */

const DAY = 24 * 60 * 60 * 1000;

/** Replays attempts (times in order) through the rule, keeping the accepted ones. */
function replay(attempts: number[]): { accepted: number[]; refusals: { at: number; retryAfterSeconds: number }[] } {
  const accepted: number[] = [];
  const refusals: { at: number; retryAfterSeconds: number }[] = [];
  for (const at of attempts) {
    const allowed = updateAllowed(accepted, at);
    if (allowed.ok) accepted.push(at);
    else refusals.push({ at, retryAfterSeconds: allowed.retryAfterSeconds });
  }
  return { accepted, refusals };
}

/** Increasing attempt times: bursts and gaps over up to about 200 days. */
const attemptTimes = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 5 * DAY })), { maxLength: 400 })
  .map((gaps) => {
    let t = 0;
    return gaps.map((g) => (t += g));
  });

describe('the rolling limit on token updates', () => {
  it('never lets more than 50 through in any 30 days', () => {
    fc.assert(
      fc.property(attemptTimes, (attempts) => {
        const { accepted } = replay(attempts);
        for (const start of accepted) {
          expect(accepted.filter((at) => at >= start && at < start + UPDATE_WINDOW_MS).length).toBeLessThanOrEqual(
            MAX_UPDATES,
          );
        }
      }),
    );
  });

  it('refuses only when 50 were accepted in the 30 days before, and then names the exact wait', () => {
    fc.assert(
      fc.property(attemptTimes, (attempts) => {
        const accepted: number[] = [];
        for (const at of attempts) {
          const inWindow = accepted.filter((t) => t > at - UPDATE_WINDOW_MS).length;
          const allowed = updateAllowed(accepted, at);
          expect(allowed.ok).toBe(inWindow < MAX_UPDATES);
          if (allowed.ok) {
            accepted.push(at);
            continue;
          }
          // At the Retry-After the same update goes through; a second earlier it would not have.
          const wait = allowed.retryAfterSeconds * 1000;
          expect(updateAllowed(accepted, at + wait).ok).toBe(true);
          if (wait > 1000) expect(updateAllowed(accepted, at + wait - 1000).ok).toBe(false);
        }
      }),
    );
  });

  it('takes 50 in a burst, refuses the 51st for 30 days, and counts what is older no more', () => {
    const burst = Array.from({ length: 50 }, (_, i) => i);
    expect(updateAllowed(burst.slice(0, 49), 100)).toEqual({ ok: true });
    expect(updateAllowed(burst, 100)).toEqual({
      ok: false,
      retryAfterSeconds: Math.ceil((UPDATE_WINDOW_MS - 100) / 1000),
    });
    expect(updateAllowed(burst, UPDATE_WINDOW_MS + 1)).toEqual({ ok: true });
    // The order of the earlier times does not matter.
    expect(updateAllowed([...burst].reverse(), 100)).toEqual(updateAllowed(burst, 100));
  });
});
