import { describe, expect, it } from 'vitest';
import { decideRisk, type RiskInput } from '../../src/threeds/risk-rules';

describe("risk rules on Worldpay's riskData (pure)", () => {
  const NOW = Date.parse('2026-11-22T12:00:00Z');
  const frictionless: RiskInput = {
    preference: 'noChallengeRequested',
    amount: 2999,
    frictionlessThreshold: 3000,
    deviceDataCollected: true,
    now: NOW,
  };
  const withRisk = (riskData: RiskInput['riskData'], change: Partial<RiskInput> = {}): RiskInput => ({
    ...frictionless,
    riskData,
    ...change,
  });

  it('is frictionless for a small no-challenge-requested payment whose device data was collected', () => {
    expect(decideRisk(frictionless)).toEqual({ kind: 'frictionless' });
    expect(decideRisk({ ...frictionless, preference: 'noChallengeRequestedTRAPerformed' }).kind).toBe('frictionless');
  });

  it.each<[string, RiskInput]>([
    ['a challengeRequested preference', { ...frictionless, preference: 'challengeRequested' }],
    ['a challengeMandated preference', { ...frictionless, preference: 'challengeMandated' }],
    ['no preference', { ...frictionless, preference: 'noPreference' }],
    ['an amount at the threshold', { ...frictionless, amount: 3000 }],
    ['no device data collection', { ...frictionless, deviceDataCollected: false }],
    ['previous suspicious activity', withRisk({ account: { previousSuspiciousActivity: true } })],
    ['11 attempts in a day', withRisk({ transaction: { history: { attemptsLastDay: 11 } } })],
    ["5 cards added in a day (Worldpay's example)", withRisk({ transaction: { history: { addCardsLastDay: 5 } } })],
    ['a password changed today', withRisk({ account: { history: { passwordModifiedAt: '2026-11-22' } } })],
    [
      'a card added to the account yesterday',
      withRisk({ account: { history: { paymentAccountEnrolledAt: '2026-11-21' } } }),
    ],
    [
      'a new shipping address of another name',
      withRisk({
        transaction: { history: { shippingAddressFirstUsedAt: '2026-11-22' } },
        shipping: { nameMatchesAccountName: false },
      }),
    ],
    [
      'a new other shipping address',
      withRisk({
        transaction: { history: { shippingAddressFirstUsedAt: '2026-11-22' } },
        shipping: { method: 'otherAddress' },
      }),
    ],
    ['6 gift cards', withRisk({ transaction: { giftCardsPurchase: { quantity: 6 } } })],
    [
      'gift cards worth the threshold',
      withRisk({ transaction: { giftCardsPurchase: { totalValue: { amount: 3000, currency: 'GBP' } } } }),
    ],
    [
      'gift cards delivered electronically',
      withRisk({ transaction: { giftCardsPurchase: { quantity: 1 } }, shipping: { timeFrame: 'electronic' } }),
    ],
  ])('challenges on %s', (_name, input) => {
    expect(decideRisk(input).kind).toBe('challenge');
  });

  it('lets the counters reach their limits, and old changes pass, without a challenge', () => {
    const calm = withRisk({
      account: {
        previousSuspiciousActivity: false,
        history: { passwordModifiedAt: '2026-11-20', paymentAccountEnrolledAt: '2026-10-01' },
      },
      transaction: { history: { attemptsLastDay: 10, addCardsLastDay: 3, shippingAddressFirstUsedAt: '2026-11-22' } },
      shipping: { method: 'billingAddress', nameMatchesAccountName: true },
    });
    expect(decideRisk(calm).kind).toBe('frictionless');
  });

  it('doubles the threshold for an established customer, never for a guest', () => {
    const established = {
      transaction: { history: { completedLastSixMonths: 3 } },
      account: { history: { createdAt: '2026-01-01' } },
    };
    expect(decideRisk(withRisk(established, { amount: 5999 })).kind).toBe('frictionless');
    expect(decideRisk(withRisk(established, { amount: 6000 })).kind).toBe('challenge');
    expect(
      decideRisk(withRisk({ ...established, account: { ...established.account, type: 'guestUser' } }, { amount: 5999 }))
        .kind,
    ).toBe('challenge');
    expect(
      decideRisk(withRisk({ ...established, account: { history: { createdAt: '2026-10-01' } } }, { amount: 5999 }))
        .kind,
    ).toBe('challenge');
  });
});
