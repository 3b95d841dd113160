import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/records/token-record';
import { DEFAULT_TOKEN_TTL_MS, extensionDue } from '../../src/tokens/token-updates';

/**
 * When a token is due an extension (docs/tokens.md "Lifetime"): its expiry was not chosen by the
 * merchant, more than half of its lifetime has passed, and it has not ended. Pure, so checked
 * with fixed clocks.
 */

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2026, 0, 1);

/** A token created at `createdAt`, ending `lifetime` after `lifeStartedAt` (its creation unless given). */
function token(o: {
  createdAt?: number;
  lifeStartedAt?: number;
  lifetime?: number;
  expiryChosen?: boolean;
}): TokenRecord {
  const createdAt = o.createdAt ?? T0;
  const started = o.lifeStartedAt ?? createdAt;
  const expiresAt = started + (o.lifetime ?? DEFAULT_TOKEN_TTL_MS.test);
  return {
    tokenId: 'TNWTBF5ABUNPGSFWLZNJ1',
    username: 'test-merchant',
    sealed: { kid: 'k1', iv: '', ct: '' },
    fingerprint: 'f',
    maskedCardNumber: '432376******1234',
    cardExpiryDate: { month: 12, year: 2035 },
    brands: ['visa'],
    description: 'd',
    tokenExpiryDateTime: new Date(expiresAt).toISOString(),
    createdAt,
    expiresAt,
    version: 1,
    ...(o.lifeStartedAt !== undefined ? { lifeStartedAt: o.lifeStartedAt } : {}),
    ...(o.expiryChosen ? { expiryChosen: true } : {}),
  };
}

describe('extensionDue (a 7-day test token created at T0)', () => {
  const record = token({});

  it.each([
    ['at creation', 0, false],
    ['a day in', DAY, false],
    ['a second before half its life', 3.5 * DAY - 1000, false],
    ['a millisecond before half its life', 3.5 * DAY - 1, false],
    ['at exactly half its life', 3.5 * DAY, true],
    ['four days in', 4 * DAY, true],
    ['a millisecond before its end', 7 * DAY - 1, true],
    ['at its end', 7 * DAY, false],
    ['after its end', 8 * DAY, false],
    ['before it was created (a clock behind)', -DAY, false],
  ])('%s: %s', (_name, after, due) => {
    expect(extensionDue(record, T0 + after)).toBe(due);
  });

  it('is never due for a token whose expiry the merchant chose', () => {
    const chosen = token({ expiryChosen: true });
    for (const after of [0, 3.5 * DAY, 4 * DAY, 7 * DAY - 1]) expect(extensionDue(chosen, T0 + after)).toBe(false);
  });

  it('counts half the life from the last extension, not from the creation', () => {
    // Created at T0, extended at T0 + 4 days: 7 more days from then.
    const extended = token({ lifeStartedAt: T0 + 4 * DAY });
    expect(extended.expiresAt).toBe(T0 + 11 * DAY);
    expect(extensionDue(extended, T0 + 5 * DAY)).toBe(false);
    expect(extensionDue(extended, T0 + 7.5 * DAY - 1)).toBe(false);
    expect(extensionDue(extended, T0 + 7.5 * DAY)).toBe(true);
  });

  it('counts from the creation for a record written before lifeStartedAt existed', () => {
    const old = token({});
    expect(old).not.toHaveProperty('lifeStartedAt');
    expect(extensionDue(old, T0 + 3 * DAY)).toBe(false);
    expect(extensionDue(old, T0 + 4 * DAY)).toBe(true);
  });

  it('uses the live lifetime of 4 years the same way', () => {
    const live = token({ lifetime: DEFAULT_TOKEN_TTL_MS.live });
    expect(DEFAULT_TOKEN_TTL_MS.live).toBe(1461 * DAY);
    expect(extensionDue(live, T0 + 730 * DAY)).toBe(false);
    expect(extensionDue(live, T0 + 730.5 * DAY)).toBe(true);
  });

  it('is due exactly in the second half of the life, for any start, lifetime and clock', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 * 365 * DAY }),
        fc.integer({ min: 2, max: 1461 * DAY }),
        fc.integer({ min: -DAY, max: 1500 * DAY }),
        fc.boolean(),
        (start, lifetime, offset, chosen) => {
          const r = token({ createdAt: T0, lifeStartedAt: T0 + start, lifetime, expiryChosen: chosen });
          const now = T0 + start + offset;
          const secondHalf = 2 * offset >= lifetime && offset < lifetime;
          expect(extensionDue(r, now)).toBe(!chosen && secondHalf);
        },
      ),
    );
  });
});
