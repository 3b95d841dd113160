import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/backoff';

describe('backoffMs', () => {
  it('waits the base after the first failure, doubling, never past the most', () => {
    expect([1, 2, 3, 4, 6, 7, 8, 20].map((n) => backoffMs(n, 1_000, 60_000))).toEqual([
      1_000, 2_000, 4_000, 8_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('treats no failure yet as the first', () => {
    expect(backoffMs(0, 30_000, 3_600_000)).toBe(30_000);
  });
});
