import { failed, ok, type Result } from '../../failures';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { CompleteChallengeRequest } from '../../schemas/threeds-requests';
import type { ChallengeResult } from '../challenge-rules';
import type { SandboxResult } from '../transaction-api';
import { THREEDS_PATH } from '../api-paths';
import { threeDsCaller, type ThreeDsDeps } from './step-deps';

/** A challenge's one result as the sandbox names it. */
export function sandboxResultOf(result: ChallengeResult): SandboxResult | 'notCompleted' {
  if (result.outcome === 'passed') return 'passed';
  switch (result.reason) {
    case 'cancelled':
      return 'cancelled';
    case 'expired':
      return 'timedOut';
    case 'notCompleted':
      return 'notCompleted';
    default:
      return 'failed';
  }
}

/**
 * The sandbox control that completes a pending challenge without a browser (`test` only): the
 * challenge authenticate opened ends as the caller says, in the transaction's owner, exactly as
 * the cardholder's form would end it, so that verification then answers as it would after the
 * page. The first ending wins: a later call, whatever it asks, is told the challenge's one result.
 */
export async function completeChallenge(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: CompleteChallengeRequest,
): Promise<Result<Record<string, unknown>>> {
  const called = threeDsCaller(merchant, request.merchant.entity, request.transactionReference);
  if (!called.ok) return called;
  const caller = called.value;
  if (deps.environment !== 'test') return failed({ kind: 'sandboxNotEnabled' });
  const reference = request.challenge.reference;
  const ended = await deps.transactionFor(caller.scope).owner.completeChallenge(reference, request.result, deps.now);
  // (`pending` is verification's only: the sandbox ends a decoupled authentication at once.)
  if (ended.kind !== 'ended') return failed({ kind: 'challengeNotFound' });
  return ok({
    outcome: 'challengeCompleted',
    transactionReference: request.transactionReference,
    challenge: { reference, result: sandboxResultOf(ended.result) },
    _links: { '3ds:verify': { href: `${deps.baseUrl}${THREEDS_PATH}/verification` } },
  });
}
