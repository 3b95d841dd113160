import type { Brand } from '../../bin/model';
import { failed, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { VerificationRequest } from '../../schemas/threeds-requests';
import { THREEDS_PATH } from '../api-paths';
import { verificationKind } from '../api-versions';
import { resultKindOf } from '../challenge-rules';
import { liveParts } from './live-parts';
import { answerFor, answerIds, decoupledAnswer, withExemption, type ResultKind } from '../outcomes';
import { threeDsCaller, type Caller, type ThreeDsDeps } from './step-deps';

export interface Verified {
  answer: Record<string, unknown>;
  outcome: string;
}

/**
 * verification (docs/threeds.md "verification"); in `live`, see {@link liveVerification}. The
 * transaction's owner knows which challenge authenticate opened and gives its one result, ending
 * a challenge that is still open as not completed, so that the answer never changes afterwards
 * and the cardholder's page can no longer contradict it. One call, to the object that decided:
 * no KV read, so no location can miss the session. The answer is derived from that frozen result
 * and the challenge reference: every call repeats it, rendered for the request's `version` of the
 * API (src/threeds/api-versions.ts).
 */
export async function verification(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: VerificationRequest,
  version: ApiVersion = 1,
): Promise<Result<Verified>> {
  const called = threeDsCaller(merchant, request.merchant.entity, request.transactionReference);
  if (!called.ok) return called;
  const caller = called.value;
  if (deps.environment === 'live') return liveVerification(deps, caller, request);
  const reference = request.challenge.reference;
  const concluded = await deps.transactionFor(caller.scope).owner.concludeChallenge(reference, deps.now);
  // Another merchant's, another transaction's or an unknown reference all look the same.
  if (concluded.kind === 'unknown') return failed({ kind: 'challengeNotFound' });
  const { session } = concluded;
  const apiBase = `${deps.baseUrl}${THREEDS_PATH}`;
  if (concluded.kind === 'pending') {
    // Decoupled, the issuer has not answered yet: `decoupled` again, as authenticate answered.
    const { transactionReference } = request;
    const pending = { transactionReference, version: session.version, reference, expiresAt: concluded.expiresAt };
    const answer = decoupledAnswer({ ...pending, apiBase });
    return ok({ answer: { ...withExemption(answer, session.exemption) }, outcome: 'decoupled' });
  }
  // A challenge passed with the right code gets its scenario's answer; anything else failed.
  const result = resultKindOf(concluded.result, session.onSuccess) as ResultKind;
  const kind = verificationKind(result, version);
  const ids = await answerIds(deps.key, `verification:${reference}`);
  const answer = answerFor(kind, {
    transactionReference: request.transactionReference,
    brands: session.brands as Brand[],
    version: session.version,
    ids,
    step: 'verification',
    apiBase,
  });
  return ok({ answer: { ...withExemption(answer, session.exemption) }, outcome: answer.outcome });
}

/**
 * verification in `live` (docs/threeds.md "Live": "verification"): one call to the transaction's
 * object, which gives the challenge's recorded result, else fetches the RReq from the provider
 * while it may hold it, else answers `authenticationFailed`; recorded once, so every call repeats
 * it (src/threeds/transaction/live-results.ts).
 */
async function liveVerification(
  deps: ThreeDsDeps,
  caller: Caller,
  request: VerificationRequest,
): Promise<Result<Verified>> {
  // The entity's requestor and the provider's configuration are checked here, as for authenticate.
  liveParts(deps, caller.entity);
  const { owner } = deps.transactionFor(caller.scope);
  const result = await owner.liveVerified(request.challenge.reference, deps.now, deps.baseUrl);
  if (!result) return failed({ kind: 'challengeNotFound' });
  // Decoupled, the issuer has not answered yet: `decoupled` again, as authenticate answered.
  if ('kind' in result) return ok({ answer: result.answer, outcome: 'decoupled' });
  return ok({ answer: result.answer, outcome: String(result.answer.outcome) });
}
