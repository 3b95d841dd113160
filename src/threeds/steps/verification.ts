import { failed, ok, type Result } from '../../failures';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { VerificationRequest } from '../../schemas/threeds-requests';
import { THREEDS_PATH } from '../api-paths';
import { answerFor, answerIds, type ResultKind } from '../outcomes';
import { threeDsCaller, type ThreeDsDeps } from './step-deps';

export interface Verified {
  answer: Record<string, unknown>;
  outcome: string;
}

/**
 * verification (docs/threeds.md "verification"). The session record (KV, written by authenticate before its
 * answer left) says which challenge belongs to the transaction; the guard gives the challenge's
 * one result, ending a challenge that is still open as not completed, so that the answer never
 * changes afterwards and the cardholder's page can no longer contradict it. The answer is
 * derived from that frozen result and the challenge reference: every call repeats it.
 */
export async function verification(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: VerificationRequest,
): Promise<Result<Verified>> {
  const called = threeDsCaller(merchant, request.merchant.entity, request.transactionReference);
  if (!called.ok) return called;
  const caller = called.value;
  const session = await deps.sessions.get(caller.scope, deps.now);
  const challenge = session?.challenge;
  // Another merchant's, another transaction's or an unknown reference all look the same.
  if (!session || !challenge || challenge.reference !== request.challenge.reference)
    return failed({ kind: 'challengeNotFound' });
  const concluded = await deps.guardFor(caller.scope).guard.concludeChallenge(challenge.reference, deps.now);
  if (concluded.kind === 'unknown') return failed({ kind: 'challengeNotFound' });
  // A challenge passed with the right code gets its scenario's answer; anything else failed.
  const kind = (concluded.result.outcome === 'passed' ? challenge.onSuccess : 'authenticationFailed') as ResultKind;
  const ids = await answerIds(deps.key, `verification:${challenge.reference}`);
  const answer = answerFor(kind, {
    transactionReference: request.transactionReference,
    brands: session.brands,
    version: session.version,
    ids,
    step: 'verification',
    apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
  });
  return ok({ answer: { ...answer }, outcome: answer.outcome });
}
