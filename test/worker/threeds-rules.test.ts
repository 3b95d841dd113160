import { describe, expect, it } from 'vitest';
import { fromBase64, textOfBase64, toBase64, toBase64Url, toHex, utf8 } from '../../src/bytes';
import { maskPan, visibleLeadingDigits } from '../../src/cards/mask';
import { threeDsGuardName, tokenGuardName } from '../../src/storage/guards/clients';
import { sessionKey } from '../../src/storage/threeds-store';
import { tokenKey } from '../../src/storage/token-store';
import { challengeStep, MAX_CODE_ATTEMPTS } from '../../src/storage/guards/challenge-rules';
import { challengePayload, judgeCode, newChallengeReference, windowSizeOfPayload } from '../../src/threeds/challenge';
import { derivedAuthenticationValue, derivedUuid } from '../../src/threeds/hmac-derived-values';
import { decideRisk, type RiskInput } from '../../src/threeds/risk-rules';

const KEY = utf8('k'.repeat(32));

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

describe('challenge rules (pure)', () => {
  it('passes the right code, fails Cancel, and fails the third wrong code', () => {
    expect(challengeStep('right', 2)).toEqual({ kind: 'passed' });
    expect(challengeStep('cancel', 0)).toEqual({ kind: 'failed', reason: 'cancelled' });
    expect(challengeStep('wrong', 0)).toEqual({ kind: 'retry', attempts: 1 });
    expect(challengeStep('wrong', MAX_CODE_ATTEMPTS - 1)).toEqual({ kind: 'failed', reason: 'attempts' });
  });

  it('judges a code with surrounding spaces forgiven and nothing else', () => {
    expect(judgeCode('submit', ' 1234 ', '1234')).toBe('right');
    expect(judgeCode('submit', '12 34', '1234')).toBe('wrong');
    expect(judgeCode('cancel', '1234', '1234')).toBe('cancel');
  });

  it('draws 20-alphanumeric references, and derives the same payload from the same reference', async () => {
    const a = newChallengeReference();
    expect(a).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(newChallengeReference()).not.toBe(a);
    const payload = await challengePayload(KEY, a, '2.2.0', '500x600');
    expect(await challengePayload(KEY, a, '2.2.0', '500x600')).toBe(payload);
    expect(JSON.parse(textOfBase64(payload))).toMatchObject({
      messageType: 'CReq',
      messageVersion: '2.2.0',
      challengeWindowSize: '03',
    });
    expect(windowSizeOfPayload(payload)).toBe('500x600');
    expect(windowSizeOfPayload('not base64 json')).toBe('390x400');
  });
});

describe('derived values (pure)', () => {
  it('gives UUID v4 shapes and 28-character CAVVs, stable per seed', async () => {
    const uuid = await derivedUuid(KEY, 'seed');
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await derivedUuid(KEY, 'seed')).toBe(uuid);
    expect(await derivedUuid(KEY, 'seed2')).not.toBe(uuid);
    const cavv = await derivedAuthenticationValue(KEY, 'seed');
    expect(cavv).toHaveLength(28);
    expect(fromBase64(cavv)).toHaveLength(20);
  });
});

describe('key and object names (pure)', () => {
  const scope = { username: 'test-merchant', entity: 'default entity', transactionReference: 'a:b:c' };

  it('scopes the session key and the guard name by merchant, entity and reference', () => {
    expect(sessionKey(scope)).toBe('3ds:session:test-merchant:default entity:a:b:c');
    expect(threeDsGuardName(scope)).toBe('test-merchant:default entity:a:b:c');
    expect(threeDsGuardName({ ...scope, username: 'other-merchant' })).not.toBe(threeDsGuardName(scope));
  });

  it('names tokens by id and token guards by merchant and card hash, never by card number', () => {
    expect(tokenKey('abc')).toBe('token:abc');
    expect(tokenGuardName('m', 'x1y2')).toBe('m:x1y2');
  });
});

describe('byte helpers (pure)', () => {
  it('round-trips base64 and writes hex and base64url', () => {
    const bytes = new Uint8Array([0, 1, 250, 251, 255]);
    expect(fromBase64(toBase64(bytes))).toEqual(bytes);
    expect(toHex(bytes)).toBe('0001fafbff');
    expect(toBase64Url(bytes)).toBe('AAH6-_8');
  });
});

describe('masking card numbers (pure)', () => {
  it('shows the first 6 and last 4 of a 15 to 19 digit number', () => {
    expect(maskPan('4444333322221111')).toBe('444433******1111');
    expect(maskPan('341142000000002')).toBe('341142*****0002');
  });

  it('hides at least 5 digits of a short number, so the Luhn digit cannot give it back', () => {
    expect(maskPan('45713684004')).toBe('45*****4004');
    expect(maskPan('4571368400')).toBe('4*****8400');
    expect(maskPan('457136840')).toBe('*********');
    for (let length = 10; length <= 19; length++) {
      const masked = maskPan('4'.repeat(length));
      expect(masked.length - masked.replace(/\*/g, '').length).toBeGreaterThanOrEqual(5);
      expect(visibleLeadingDigits(length)).toBeLessThanOrEqual(6);
    }
  });
});
