import type { ChallengeResult } from '../challenge-rules';
import type { ClaimTable } from '../../storage/claims';
import type { AuthClaim, ConcludeOutcome, SandboxResult } from '../transaction-api';
import type { TestChallenge } from './test-challenge';

/**
 * How a test challenge's one result is concluded (docs/threeds.md "Challenge"): by verification,
 * where a challenge still open ends as not completed (a decoupled authentication still waiting for
 * its issuer stays open: `pending`), or by the sandbox control (test only), which ends an open
 * challenge, decoupled or not, as the caller says, as if the cardholder had. A challenge already ended
 * keeps its one result, which is answered instead, with what authenticate decided.
 */

/**
 * How a challenge still open ends: its outcome and reason, and whether a decoupled one waiting for
 * its issuer ends too (the sandbox control) or stays open (verification).
 */
export interface ChallengeEnding {
  result: () => [ChallengeResult['outcome'], ChallengeResult['reason']];
  endsDecoupled: boolean;
}

/** Verification: a challenge still open ends as not completed; a decoupled one waits for its issuer. */
export const NOT_COMPLETED: ChallengeEnding = { result: () => ['failed', 'notCompleted'], endsDecoupled: false };

const SANDBOX_ENDINGS: Record<SandboxResult, [ChallengeResult['outcome'], ChallengeResult['reason']]> = {
  passed: ['passed', 'code'],
  failed: ['failed', 'attempts'],
  cancelled: ['failed', 'cancelled'],
  timedOut: ['failed', 'expired'],
};

/** The sandbox control: a challenge still open, decoupled or not, ends as `result` says. */
export function sandboxEnding(result: SandboxResult): ChallengeEnding {
  return { result: () => SANDBOX_ENDINGS[result], endsDecoupled: true };
}

/**
 * The challenge's one result, with what authenticate decided, when `reference` is the challenge
 * authenticate opened; one still open ends here as `ending` says. In the caller's synchronous block.
 */
export function concludeChallenge(
  p: { claims: ClaimTable; challenges: TestChallenge },
  reference: string,
  now: number,
  ending: ChallengeEnding,
): ConcludeOutcome {
  const auth = p.claims.answerOf<AuthClaim>('auth', now);
  if (auth?.challenge?.reference !== reference) return { kind: 'unknown' };
  const result = p.challenges.conclude(reference, now, ending.result, ending.endsDecoupled);
  if (!result) return { kind: 'unknown' };
  const session = {
    brands: auth.brands,
    version: auth.version,
    onSuccess: auth.challenge.onSuccess,
    ...(auth.exemption ? { exemption: auth.exemption } : {}),
  };
  // A decoupled authentication whose issuer has not answered: verification says so again.
  if (result === 'pending') return { kind: 'pending', session, expiresAt: auth.challenge.expiresAt };
  return { kind: 'ended', result, session };
}
