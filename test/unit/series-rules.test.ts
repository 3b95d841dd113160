import { describe, expect, it } from 'vitest';
import { seriesEnd, termsProblem, useProblem, type SeriesRecord } from '../../src/threeds/series-rules';
import { withStatusReason } from '../../src/threeds/transaction/three-ri-run';

const NOW = Date.parse('2026-11-28T12:00:00Z');

const SERIES: SeriesRecord = {
  terms: { type: 'recurring', expiry: '2027-06-30', frequencyDays: 30 },
  amount: 2500,
  currency: 'GBP',
  cardHash: 'h',
  brands: ['mastercard'],
  version: '2.2.0',
  method: '01',
  authenticatedAt: NOW,
  status: 'Y',
};
const USE = { type: 'recurring' as const, amount: 1000, currency: 'GBP', cardHash: 'h' };
const NONE = { amount: 0, instalments: 0 };

describe('termsProblem', () => {
  it('wants an expiry after today (UTC) and instalments for, and only for, an instalment series', () => {
    expect(termsProblem({ type: 'recurring', expiry: '2026-11-28', frequencyDays: 1 }, NOW)?.jsonPath).toBe(
      '$.recurring.expiry',
    );
    expect(termsProblem({ type: 'recurring', expiry: '2026-11-29', frequencyDays: 1 }, NOW)).toBeUndefined();
    expect(termsProblem({ type: 'instalment', expiry: '2027-01-01', frequencyDays: 1 }, NOW)?.errorName).toBe(
      'fieldIsMissing',
    );
    expect(
      termsProblem({ type: 'recurring', expiry: '2027-01-01', frequencyDays: 1, instalments: 2 }, NOW)?.jsonPath,
    ).toBe('$.recurring.instalments');
  });
});

describe('useProblem', () => {
  it('allows a use within the terms', () => {
    expect(useProblem(SERIES, USE, NONE, NOW)).toBeUndefined();
  });

  it.each([
    ['another card', { ...USE, cardHash: 'x' }, NONE, NOW, '$.priorTransactionReference'],
    ['after the expiry day', USE, NONE, seriesEnd(SERIES.terms), '$.priorTransactionReference'],
    ['the last moment of the expiry day is fine', USE, NONE, seriesEnd(SERIES.terms) - 1, undefined],
    [
      'over the first payment’s amount',
      { ...USE, amount: 1501 },
      { amount: 1000, instalments: 0 },
      NOW,
      '$.instruction.value.amount',
    ],
    ['exactly the amount left', { ...USE, amount: 1500 }, { amount: 1000, instalments: 0 }, NOW, undefined],
    ['another currency', { ...USE, currency: 'EUR' }, NONE, NOW, '$.instruction.value.amount'],
    ['an instalment of a recurring series', { ...USE, type: 'instalment' as const }, NONE, NOW, '$.type'],
    ['a non-payment type of any series', { ...USE, type: 'addCard' as const, amount: 0 }, NONE, NOW, undefined],
  ])('%s', (_name, use, counted, now, path) => {
    expect(useProblem(SERIES, use, counted, now)?.jsonPath).toBe(path);
  });

  it('refuses recurring 3RI where the scheme has none (Visa), at $.type', () => {
    expect(useProblem({ ...SERIES, brands: ['visa'] }, USE, NONE, NOW)?.jsonPath).toBe('$.type');
    expect(useProblem({ ...SERIES, brands: ['visa'] }, { ...USE, type: 'mailOrder' }, NONE, NOW)).toBeUndefined();
  });

  it('counts the first payment as an instalment', () => {
    const instalments = {
      ...SERIES,
      terms: { type: 'instalment' as const, expiry: '2027-06-30', frequencyDays: 30, instalments: 3 },
    };
    const use = { ...USE, type: 'instalment' as const, amount: 100 };
    expect(useProblem(instalments, use, { amount: 0, instalments: 1 }, NOW)).toBeUndefined();
    expect(useProblem(instalments, use, { amount: 0, instalments: 2 }, NOW)?.jsonPath).toBe('$.type');
  });
});

describe('withStatusReason', () => {
  it('puts the issuer’s reason on an unavailable answer only, before its links', () => {
    const unavailable = { outcome: 'unavailable', status: 'U', _links: { self: 1 } };
    expect(Object.keys(withStatusReason(unavailable, '22'))).toEqual(['outcome', 'status', 'statusReason', '_links']);
    expect(withStatusReason(unavailable, undefined)).toBe(unavailable);
    const failed = { outcome: 'authenticationFailed', status: 'N' };
    expect(withStatusReason(failed, '01')).toBe(failed);
  });
});
