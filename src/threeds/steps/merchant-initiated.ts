import { failed, fieldFailure, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { MerchantInitiatedRequest } from '../../schemas/threeds-requests';
import { THREEDS_PATH } from '../api-paths';
import { answerFor, randomAnswerIds, type ResultKind, type ThreeDsAnswer } from '../outcomes';
import { NON_PAYMENT_TYPES, seriesCardHash, THREE_RI_TYPES, type ThreeRiType } from '../series-rules';
import type { Brand } from '../../bin/model';
import { SESSION_TTL_MS, sessionKey } from '../session-record';
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
 * absent, of a series set up by a customer-present `authenticate`. Checked before anything is
 * decided, by the prior transaction's object, which alone counts the series' uses (so 20
 * concurrent 3RIs never overshoot, and a retried one finds its first answer): the prior is this
 * merchant's and entity's, set up a series, ended `Y` or `A`, for the same card, not expired;
 * the amounts together within the first payment's; instalments left; the scheme takes the type.
 * Then the 3RI's own transaction object keeps its answer (GET, the event, identical retries), as
 * for any transaction. In `test` the built-in issuer decides by the cardholder name.
 */

/** The test issuer's 3RI answers by cardholder name (docs/threeds.md "Test magic values"). */
const THREE_RI_SCENARIOS: Readonly<Record<string, ResultKind>> = {
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
  // Live 3RI (its AReq through the 3DS Server provider) is not built yet: never the test issuer there.
  if (deps.environment === 'live')
    return failed({
      kind: 'merchantNotConfigured',
      feature: 'merchant-initiated 3-D Secure in live (not available yet)',
    });
  if (request.priorTransactionReference === request.transactionReference)
    return fieldFailure(
      'fieldHasInvalidValue',
      'A 3RI is a transaction of its own: give it a reference of its own.',
      '$.priorTransactionReference',
    );

  const hash = await requestHash(deps.key, request);
  // The test issuer's outcome is known before the series is used: only an authenticated 3RI counts.
  const kind: ResultKind = THREE_RI_SCENARIOS[card.cardHolderName?.trim().toLowerCase() ?? ''] ?? 'authenticated';
  const prior = deps.transactionFor({ ...caller.scope, transactionReference: request.priorTransactionReference });
  const use = await prior.owner.seriesUse(
    request.transactionReference,
    hash,
    {
      type: request.type,
      amount: request.instruction.value.amount,
      currency: request.instruction.value.currency,
      cardHash: await seriesCardHash(deps.key, card.cardNumber),
    },
    kind === 'authenticated',
    deps.now,
  );
  if (use.kind === 'refused') return failed({ kind: 'bodyDoesNotMatchSchema', errors: [use.error] });
  if (use.kind === 'conflict') return duplicateAnswer(deps, request.transactionReference, card.masked, version);

  const { owner } = deps.transactionFor(caller.scope);
  const apiBase = `${deps.baseUrl}${THREEDS_PATH}`;
  const answer = answerFor(kind, {
    transactionReference: request.transactionReference,
    brands: card.brands,
    version: use.series.version,
    ids: randomAnswerIds(),
    step: 'authenticate',
    apiBase,
  });
  const claim = await owner.authenticate(
    hash,
    {
      answer: { ...(kind === 'authenticated' ? withRecurringEci(answer, request.type, card.brands) : answer) },
      version: use.series.version,
      brands: [...card.brands],
      scenario: `3ri ${request.type} (${THREE_RI_TYPES[request.type]}${NON_PAYMENT_TYPES.includes(request.type) ? ', non-payment' : ''})`,
    },
    deps.now,
    deps.now + SESSION_TTL_MS,
    sessionKey(caller.scope),
    eventScope(deps, caller.scope, version),
  );
  if (claim.kind !== 'done') throw new Error('a 3RI claim asked about a device data collection');
  if (claim.conflict) {
    // The reference is another transaction's: this 3RI never happened, so its use does not count.
    await prior.owner.seriesRelease(request.transactionReference, hash);
    return duplicateAnswer(deps, request.transactionReference, card.masked, version);
  }
  return ok({ answer: claim.answer.answer, card: card.masked, scenario: claim.answer.scenario, conflict: false });
}

/**
 * A recurring or instalment 3RI that Mastercard authenticates answers ECI 07 (Identity Check for
 * merchant-initiated payments; research: threeds-3ri-exemptions.md); others as any authentication.
 */
function withRecurringEci(answer: ThreeDsAnswer, type: ThreeRiType, brands: readonly Brand[]): ThreeDsAnswer {
  const mastercard = brands.some((b) => b === 'mastercard' || b === 'maestro');
  if (!mastercard || (type !== 'recurring' && type !== 'instalment') || !answer.authentication) return answer;
  return { ...answer, authentication: { ...answer.authentication, eci: '07' } };
}
