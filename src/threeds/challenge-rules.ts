/**
 * The rules of a challenge that its owner object enforces (docs/threeds.md "Challenge"): how many
 * wrong codes end it, what one post of the form leads to, and the one result it ends with. They
 * live with the owner because the owner applies them; the 3DS steps above only judge a posted
 * code against the expected one and read the result.
 */

/** Wrong codes allowed before the challenge ends as failed. */
export const MAX_CODE_ATTEMPTS = 3;

/** One post of the challenge form, as judged against the expected code. */
export type CodeAttempt = 'cancel' | 'right' | 'wrong';

/**
 * How a challenge ended: the one result that the page shows and verification reports. A
 * decoupled authentication (docs/threeds.md "Decoupled") ends as the issuer decided (`issuer`), or
 * `unavailable` when its time passed with no result.
 */
export interface ChallengeResult {
  outcome: 'passed' | 'failed' | 'unavailable';
  reason: 'code' | 'cancelled' | 'attempts' | 'expired' | 'notCompleted' | 'issuer';
  completedAt: number;
}

/**
 * What verification answers for a challenge's one result: the scenario's answer (`onSuccess`)
 * when it passed, `unavailable` when a decoupled authentication timed out, else
 * `authenticationFailed`. One rule for verification, GET and the event.
 */
export function resultKindOf(result: ChallengeResult, onSuccess: string): string {
  if (result.outcome === 'passed') return onSuccess;
  return result.outcome === 'unavailable' ? 'unavailable' : 'authenticationFailed';
}

/**
 * The final CRes's `transStatus` for an app challenge's result (EMV allows Y or N there): Y when
 * verification will say authenticated (or attempted), else N, so that the SDK and verification
 * never disagree.
 */
export function cresTransStatus(result: ChallengeResult, onSuccess: string): 'Y' | 'N' {
  const kind = resultKindOf(result, onSuccess);
  return kind === 'authenticated' || kind === 'authenticatedAttempted' ? 'Y' : 'N';
}

/**
 * What the test issuer does with a decoupled authentication (docs/threeds.md "Decoupled"): the
 * result it gives out of band and when, or none ever (`answersAt` null: the time runs out).
 */
export interface DecoupledIssuer {
  answersAt: number | null;
  outcome: 'passed' | 'failed';
}

/** What one post of the challenge form leads to. */
export type ChallengeStep =
  { kind: 'passed' } | { kind: 'failed'; reason: 'cancelled' | 'attempts' } | { kind: 'retry'; attempts: number };

/**
 * Pure rule of one post, given the wrong codes so far: Cancel fails, the right code passes, the
 * third wrong code fails.
 *
 * @example
 * ```ts
 * challengeStep('wrong', 2); // { kind: 'failed', reason: 'attempts' }
 * ```
 */
export function challengeStep(attempt: CodeAttempt, wrongSoFar: number): ChallengeStep {
  if (attempt === 'cancel') return { kind: 'failed', reason: 'cancelled' };
  if (attempt === 'right') return { kind: 'passed' };
  const next = wrongSoFar + 1;
  return next >= MAX_CODE_ATTEMPTS ? { kind: 'failed', reason: 'attempts' } : { kind: 'retry', attempts: next };
}
