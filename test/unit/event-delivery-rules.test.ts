import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  outcomeOfStatus,
  retryAfterMs,
  retryDelayMs,
  RETRY_MAX_MS,
  RETRY_WINDOW_MS,
} from '../../src/events/delivery-rules';
import { endpointUrlProblem } from '../../src/events/endpoint-rules';

describe('event delivery rules', () => {
  it('counts a 2xx as delivered, a 3xx as a redirect not followed, anything else as a failed status', () => {
    expect(outcomeOfStatus(200)).toEqual({ delivered: true, status: 200 });
    expect(outcomeOfStatus(299)).toEqual({ delivered: true, status: 299 });
    expect(outcomeOfStatus(301)).toEqual({ delivered: false, error: 'redirect', status: 301 });
    expect(outcomeOfStatus(199)).toEqual({ delivered: false, error: 'status', status: 199 });
    expect(outcomeOfStatus(500, '60')).toEqual({ delivered: false, error: 'status', status: 500 });
  });

  it('reads Retry-After of a 429 or 503, in seconds or as a date, up to the ceiling', () => {
    expect(outcomeOfStatus(429, '120')).toMatchObject({ retryAfterMs: 120_000 });
    expect(outcomeOfStatus(503, 'Wed, 21 Oct 2026 07:28:30 GMT', Date.parse('2026-10-21T07:28:00Z'))).toMatchObject({
      retryAfterMs: 30_000,
    });
    expect(retryAfterMs('999999', 0)).toBe(RETRY_MAX_MS);
    expect(retryAfterMs('soon', 0)).toBeUndefined();
    expect(retryAfterMs('-5', 0)).toBeUndefined();
    expect(retryAfterMs(null, 0)).toBeUndefined();
  });

  it('retries within a minute, then doubles up to an hour, each wait between half and all of that', () => {
    expect([1, 2, 3, 4, 8, 20].map((n) => retryDelayMs(n, 1))).toEqual([
      30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000,
    ]);
    expect([1, 2, 20].map((n) => retryDelayMs(n, 0))).toEqual([15_000, 30_000, 1_800_000]);
    expect(retryDelayMs(1, 0.5)).toBe(22_500);
  });

  it('fails a delivery only once its window is over, and waits for Retry-After when it is longer', () => {
    const windowStart = 1_000;
    expect(afterFailure({ windowStart, failures: 1 }, windowStart + 5, 1)).toEqual({
      state: 'pending',
      nextAt: windowStart + 5 + 30_000,
    });
    expect(afterFailure({ windowStart, failures: 1, retryAfterMs: 600_000 }, windowStart, 1)).toEqual({
      state: 'pending',
      nextAt: windowStart + 600_000,
    });
    expect(afterFailure({ windowStart, failures: 9 }, windowStart + RETRY_WINDOW_MS - 1, 1).state).toBe('pending');
    expect(afterFailure({ windowStart, failures: 9 }, windowStart + RETRY_WINDOW_MS, 1)).toEqual({ state: 'failed' });
  });
});

describe('endpoint URLs', () => {
  it.each([
    ['https://shop.example/hooks?k=1', false],
    ['https://shop.example/hooks', true],
    ['http://localhost:3000/events', false],
    ['http://127.0.0.1/events', false],
    ['https://8.8.8.8/hooks', true],
    ['https://[2001:db8::1]/hooks', true],
  ])('take %s (live: %s)', (url, live) => {
    expect(endpointUrlProblem(url, live)).toBeUndefined();
  });

  it.each([
    ['http://localhost:3000/events', true, /https/],
    ['https://localhost/events', true, /local host/],
    ['https://hooks.internal/', true, /local host/],
    ['https://printer.local./', true, /local host/],
    ['http://shop.example/hooks', false, /https/],
    ['https://u:p@shop.example/', false, /credentials/],
    ['https://shop.example/#x', false, /fragment/],
    ['https://192.168.1.1/', false, /private/],
    ['https://172.16.0.1/', false, /private/],
    ['https://127.0.0.2/', false, /private/],
    ['https://0.0.0.0/', false, /private/],
    ['https://224.0.0.1/', false, /private/],
    ['https://[fe80::1]/', false, /private/],
    ['https://[::ffff:7f00:1]/', false, /private/],
    ['https://[64:ff9b::a00:1]/', false, /private/],
    ['https://[2002:c0a8:101::1]/', false, /private/],
    ['https://[2001:0:4136:e378::1]/', false, /private/],
    ['https://[fec0::1]/', false, /private/],
    ['https://shop.example/' + 'x'.repeat(2048), false, /2048/],
    ['shop.example/hooks', false, /absolute/],
  ])('refuse %s (live: %s)', (url, live, problem) => {
    expect(endpointUrlProblem(url, live)).toMatch(problem);
  });
});
