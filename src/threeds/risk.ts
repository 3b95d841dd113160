/**
 * Risk rules (CONTRACT.md §6.5): whether an authentication without a test scenario is
 * frictionless or challenged. Pure: everything it needs is in {@link RiskInput}.
 *
 * 1. `challengeRequested` / `challengeMandated` → challenge.
 * 2. Risk signals in riskData → challenge: the account had suspicious activity, or more than
 *    {@link MAX_ATTEMPTS_LAST_DAY} transactions were attempted in the last day, or more than
 *    {@link MAX_CARDS_ADDED_LAST_DAY} cards were added in the last day.
 * 3. `noChallengeRequested` / `noChallengeRequestedTRAPerformed`, amount under the entity's
 *    frictionless threshold and the device data collection completed → frictionless.
 * 4. Anything else → challenge.
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
  previousSuspiciousActivity?: boolean;
  transactionsAttemptedLastDay?: number;
  addCardAttemptsLastDay?: number;
}

export const MAX_ATTEMPTS_LAST_DAY = 10;
export const MAX_CARDS_ADDED_LAST_DAY = 3;

export type RiskDecision = { kind: 'frictionless' } | { kind: 'challenge'; reason: string };

export function decideRisk(input: RiskInput): RiskDecision {
  if (input.preference === 'challengeRequested' || input.preference === 'challengeMandated') {
    return { kind: 'challenge', reason: `preference ${input.preference}` };
  }
  if (input.previousSuspiciousActivity === true) return { kind: 'challenge', reason: 'previous suspicious activity' };
  if ((input.transactionsAttemptedLastDay ?? 0) > MAX_ATTEMPTS_LAST_DAY) {
    return { kind: 'challenge', reason: 'too many transactions in the last day' };
  }
  if ((input.addCardAttemptsLastDay ?? 0) > MAX_CARDS_ADDED_LAST_DAY) {
    return { kind: 'challenge', reason: 'too many cards added in the last day' };
  }
  const noChallenge =
    input.preference === 'noChallengeRequested' || input.preference === 'noChallengeRequestedTRAPerformed';
  if (!noChallenge) return { kind: 'challenge', reason: 'no frictionless preference' };
  if (input.amount >= input.frictionlessThreshold)
    return { kind: 'challenge', reason: 'amount at or over the threshold' };
  if (!input.deviceDataCollected) return { kind: 'challenge', reason: 'device data not collected' };
  return { kind: 'frictionless' };
}
