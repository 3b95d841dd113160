import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  nextDue,
  outcomeOfStatus,
  pickDue,
  retryDelayMs,
  RETRY_WINDOW_MS,
  type Head,
} from '../../src/events/delivery-rules';

const head = (key: string, endpoint: string, nextAt = 0): Head => ({ key, endpoint, nextAt });

describe('event delivery rules', () => {
  it('counts a 2xx as delivered, a 3xx as a redirect not followed, anything else as a failed status', () => {
    expect(outcomeOfStatus(200)).toEqual({ delivered: true, status: 200 });
    expect(outcomeOfStatus(299)).toEqual({ delivered: true, status: 299 });
    expect(outcomeOfStatus(301)).toEqual({ delivered: false, error: 'redirect', status: 301 });
    expect(outcomeOfStatus(199)).toEqual({ delivered: false, error: 'status', status: 199 });
    expect(outcomeOfStatus(500)).toEqual({ delivered: false, error: 'status', status: 500 });
  });

  it('retries within a minute, then doubles up to an hour', () => {
    expect([1, 2, 3, 4, 8, 20].map((n) => retryDelayMs(n))).toEqual([
      30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000,
    ]);
  });

  it('fails a delivery only once its window is over', () => {
    const windowStart = 1_000;
    expect(afterFailure({ windowStart, failures: 1 }, windowStart + 5)).toEqual({
      state: 'pending',
      nextAt: windowStart + 5 + 30_000,
    });
    expect(afterFailure({ windowStart, failures: 9 }, windowStart + RETRY_WINDOW_MS - 1).state).toBe('pending');
    expect(afterFailure({ windowStart, failures: 9 }, windowStart + RETRY_WINDOW_MS)).toEqual({ state: 'failed' });
  });

  it('picks the due heads, soonest first, skipping those in flight, within both limits', () => {
    const heads = [
      head('1 a', 'a', 5),
      head('2 a', 'a', 1),
      head('3 a', 'a', 2),
      head('4 b', 'b', 3),
      head('5 c', 'c', 99),
      head('6 a', 'a', 0),
    ];
    const limits = { total: 4, perEndpoint: 2 };
    expect(pickDue(heads, new Map(), 10, limits).map((h) => h.key)).toEqual(['6 a', '2 a', '4 b']);
    // One of a's in flight already: a gets one more; the total counts it too.
    expect(pickDue(heads, new Map([['1 a', 'a']]), 10, limits).map((h) => h.key)).toEqual(['6 a', '4 b']);
    expect(
      pickDue(
        heads,
        new Map([
          ['x', 'b'],
          ['y', 'b'],
          ['z', 'c'],
          ['w', 'c'],
        ]),
        10,
        limits,
      ),
    ).toEqual([]);
    expect(pickDue(heads, new Map(), 100, limits).map((h) => h.key)).toEqual(['6 a', '2 a', '4 b', '5 c']);
  });

  it('is due next at the soonest head, a head in flight only after its deadline', () => {
    expect(nextDue([], new Map(), 10)).toBeUndefined();
    expect(nextDue([head('1 a', 'a', 50), head('2 b', 'b', 40)], new Map(), 10)).toBe(40);
    expect(nextDue([head('1 a', 'a', 50), head('2 b', 'b', 0)], new Map([['2 b', 'b']]), 10, 1_000)).toBe(50);
    expect(nextDue([head('2 b', 'b', 0)], new Map([['2 b', 'b']]), 10, 1_000)).toBe(1_010);
  });
});
