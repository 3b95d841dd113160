import { failed, fieldFailure, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { MerchantInitiatedRequest } from '../../schemas/threeds-requests';
import { seriesCardHash } from '../series-rules';
import { SESSION_TTL_MS, sessionKey } from '../session-record';
import type { ThreeRiInput, ThreeRiOutcome } from '../transaction-api';
import { areqCard } from '../live/areq-builder';
import { rendered } from '../live/stored-answer';
import { liveParts } from './live-parts';
import {
  callerAndCard,
  duplicateAnswer,
  eventScope,
  requestHash,
  type Authenticated,
  type ThreeDsDeps,
} from './step-deps';

/**
 * merchantInitiated (docs/threeds.md "Series and 3RI"): a 3RI authentication, the cardholder
 * absent, of a series set up by a customer-present `authenticate`. The Worker validates the
 * request and resolves the card; then one call hands both to the 3RI's own transaction object,
 * which runs the 3RI (src/threeds/transaction/three-ri-run.ts): the prior transaction's object
 * checks and counts the use before anything is sent (the prior is this merchant's and entity's,
 * set up a series, ended `Y` or `A`, for the same card, not expired; the amounts together within
 * the first payment's; instalments left; the scheme and the prior's version take the type), so
 * 20 concurrent 3RIs never overshoot; then the issuer decides: in `test` the built-in issuer, by
 * the cardholder name; in `live` one AReq through the 3DS Server provider. The 3RI's object keeps
 * its answer (GET, the event, identical retries) and gives the use back unless it authenticated.
 */

/** The test issuer's 3RI answers by cardholder name (docs/threeds.md "Test magic values"). */
const THREE_RI_SCENARIOS: Readonly<Record<string, ThreeRiOutcome>> = {
  '3ri-authentication-failed': 'authenticationFailed',
  '3ri-unavailable': 'unavailable',
};

export async function merchantInitiated(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: MerchantInitiatedRequest,
  version: ApiVersion = 1,
): Promise<Result<Authenticated>> {
  const checked = await callerAndCard(deps, merchant, request);
  if (!checked.ok) return checked;
  const { caller, card } = checked.value;
  if (request.priorTransactionReference === request.transactionReference)
    return fieldFailure(
      'fieldHasInvalidValue',
      'A 3RI is a transaction of its own: give it a reference of its own.',
      '$.priorTransactionReference',
    );
  // In live, a deployment without a provider or a requestor block is misconfigured: 503, before any call.
  const issuer: ThreeRiInput['issuer'] =
    deps.environment === 'live'
      ? { kind: 'live', requestor: liveParts(deps, caller.entity).requestor }
      : {
          kind: 'test',
          outcome: THREE_RI_SCENARIOS[card.cardHolderName?.trim().toLowerCase() ?? ''] ?? 'authenticated',
        };
  const { owner } = deps.transactionFor(caller.scope);
  const outcome = await owner.merchantInitiated({
    requestHash: await requestHash(deps.key, request),
    now: deps.now,
    sessionEnd: deps.now + SESSION_TTL_MS,
    scope: eventScope(deps, caller.scope, version),
    projectionKey: sessionKey(caller.scope),
    baseUrl: deps.baseUrl,
    request,
    card: areqCard(card),
    prior: { ...caller.scope, transactionReference: request.priorTransactionReference },
    use: {
      type: request.type,
      amount: request.instruction.value.amount,
      currency: request.instruction.value.currency,
      cardHash: await seriesCardHash(deps.key, card.cardNumber),
    },
    issuer,
  });
  switch (outcome.kind) {
    case 'answered':
      return ok({
        answer: rendered(outcome.answer, version),
        card: card.masked,
        scenario: outcome.scenario,
        conflict: false,
      });
    case 'invalid':
      return failed({ kind: 'bodyDoesNotMatchSchema', errors: outcome.errors });
    case 'conflict':
      return duplicateAnswer(deps, request.transactionReference, card.masked, version);
  }
}
