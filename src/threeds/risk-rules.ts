import type { RiskData } from '../schemas/threeds-requests';

/**
 * Risk rules (docs/threeds.md "Risk rules"): whether an authentication without a test scenario is
 * frictionless or challenged. They read the merchant's `riskData` in Worldpay's shape. Pure:
 * everything they need, the clock included, is in {@link RiskInput}.
 *
 * In order, the first that applies decides:
 *
 * | rule | fields | challenge when |
 * |---|---|---|
 * | merchant asks | `challenge.preference` | `challengeRequested` or `challengeMandated` |
 * | suspicious account | `account.previousSuspiciousActivity` | `true` |
 * | attempt velocity | `transaction.history.attemptsLastDay` | more than 10 |
 * | card-adding velocity | `transaction.history.addCardsLastDay` | more than 3 |
 * | password just changed | `account.history.passwordModifiedAt` | within the last day |
 * | card just added to the account | `account.history.paymentAccountEnrolledAt` | within the last day |
 * | new shipping address | `transaction.history.shippingAddressFirstUsedAt`, `shipping.method`, `shipping.nameMatchesAccountName`, `account.history.modifiedAt` | first used within the last day, and `otherAddress`, or another name, or the account changed within the last day |
 * | gift cards | `transaction.giftCardsPurchase`, `shipping.timeFrame` | more than 5, or worth the frictionless threshold or more, or delivered `electronic`ally |
 * | frictionless | `challenge.preference`, amount, device data | `noChallengeRequested*`, the amount under the threshold and the device data collected: **frictionless**; otherwise challenge |
 *
 * The threshold is the entity's `frictionlessThreshold` (3000 minor units by default), doubled
 * for an established customer: `transaction.history.completedLastSixMonths` at least 3 and
 * `account.history.createdAt` at least 90 days ago, not a `guestUser`.
 *
 * Read but deciding nothing on their own: names, emails and phone numbers (identity data for the
 * issuer's model; there is nothing here to compare them with), `account.type` (only to refuse the
 * established-customer bonus to guests), `attemptsLastYear`, `reorder`, `preOrderDate`, the
 * shipping address itself. They are validated as Worldpay's document says.
 */

export type ChallengePreference =
  | 'noPreference'
  | 'noChallengeRequested'
  | 'challengeRequested'
  | 'challengeMandated'
  | 'noChallengeRequestedTRAPerformed';

export interface RiskInput {
  preference: ChallengePreference;
  /** Minor units. */
  amount: number;
  /** Entity's frictionless threshold in minor units (default 3000). */
  frictionlessThreshold: number;
  deviceDataCollected: boolean;
  riskData?: RiskData;
  /** Now, in ms since the epoch (the dates in riskData are days, UTC). */
  now: number;
}

export const MAX_ATTEMPTS_LAST_DAY = 10;
export const MAX_CARDS_ADDED_LAST_DAY = 3;
export const MAX_GIFT_CARDS = 5;
export const ESTABLISHED_PURCHASES = 3;
export const ESTABLISHED_ACCOUNT_DAYS = 90;

export type RiskDecision = { kind: 'frictionless' } | { kind: 'challenge'; reason: string };

const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether a `YYYY-MM-DD` date is within `days` days before now (today and yesterday for 1). */
function within(date: string | undefined, days: number, now: number): boolean {
  if (date === undefined) return false;
  return now - Date.parse(`${date}T00:00:00Z`) < (days + 1) * DAY_MS;
}

function olderThan(date: string | undefined, days: number, now: number): boolean {
  return date !== undefined && now - Date.parse(`${date}T00:00:00Z`) >= days * DAY_MS;
}

export function decideRisk(input: RiskInput): RiskDecision {
  const { riskData: r, now } = input;
  const challenge = (reason: string): RiskDecision => ({ kind: 'challenge', reason });
  if (input.preference === 'challengeRequested' || input.preference === 'challengeMandated') {
    return challenge(`preference ${input.preference}`);
  }
  const account = r?.account;
  const history = r?.transaction?.history;
  if (account?.previousSuspiciousActivity === true) return challenge('previous suspicious activity');
  if ((history?.attemptsLastDay ?? 0) > MAX_ATTEMPTS_LAST_DAY) return challenge('too many attempts in the last day');
  if ((history?.addCardsLastDay ?? 0) > MAX_CARDS_ADDED_LAST_DAY)
    return challenge('too many cards added in the last day');
  if (within(account?.history?.passwordModifiedAt, 1, now)) return challenge('password changed in the last day');
  if (within(account?.history?.paymentAccountEnrolledAt, 1, now))
    return challenge('card added to the account in the last day');
  const shipping = r?.shipping;
  const unfamiliar =
    shipping?.method === 'otherAddress' ||
    shipping?.nameMatchesAccountName === false ||
    within(account?.history?.modifiedAt, 1, now);
  if (within(history?.shippingAddressFirstUsedAt, 1, now) && unfamiliar) return challenge('new shipping address');
  const threshold = established(input) ? input.frictionlessThreshold * 2 : input.frictionlessThreshold;
  const gifts = r?.transaction?.giftCardsPurchase;
  if (
    gifts !== undefined &&
    ((gifts.quantity ?? 0) > MAX_GIFT_CARDS ||
      (gifts.totalValue?.amount ?? 0) >= threshold ||
      ((gifts.quantity ?? 1) > 0 && shipping?.timeFrame === 'electronic'))
  ) {
    return challenge('gift cards');
  }
  const noChallenge =
    input.preference === 'noChallengeRequested' || input.preference === 'noChallengeRequestedTRAPerformed';
  if (!noChallenge) return challenge('no frictionless preference');
  if (input.amount >= threshold) return challenge('amount at or over the threshold');
  if (!input.deviceDataCollected) return challenge('device data not collected');
  return { kind: 'frictionless' };
}

/** A customer with a purchase record on an account older than 90 days. */
function established({ riskData: r, now }: RiskInput): boolean {
  return (
    (r?.transaction?.history?.completedLastSixMonths ?? 0) >= ESTABLISHED_PURCHASES &&
    olderThan(r?.account?.history?.createdAt, ESTABLISHED_ACCOUNT_DAYS, now) &&
    r?.account?.type !== 'guestUser'
  );
}
