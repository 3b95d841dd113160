import type { Brand } from '../../bin/model';
import { failed, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../http/media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { TransactionFacts } from '../../storage/guards/threeds-guard';
import { isoSeconds } from '../../tokens/token-resource';
import { THREEDS_PATH } from '../api-paths';
import { outageAnswer, verificationKind } from '../api-versions';
import { answerFor, answerIds, unavailableFor, type ResultKind } from '../outcomes';
import { scenarioNamed } from '../scenarios';
import { rendered } from '../live/live-authenticate';
import { threeDsCaller, type ThreeDsDeps } from './step-deps';

/**
 * GET of a 3DS transaction (docs/threeds.md "Retrieve a transaction"): what it is now, from the
 * transaction's object, without changing it and without calling the 3DS Server provider.
 *
 * - `initialized`: deviceDataInitialize ran, authenticate has not;
 * - `challenged`: authenticate asked for a challenge that has no result yet (`verification` would
 *   end it as not completed: this read does not);
 * - `completed`: the final outcome is known, and `result` is what `verification` answers for a
 *   challenged transaction (the same answer, byte for byte, for the same API version), or what
 *   `authenticate` answered for a frictionless one.
 */

type TransactionState = 'initialized' | 'challenged' | 'completed';

interface RetrievedTransaction {
  body: Record<string, unknown>;
  state: TransactionState;
}

export async function retrieveTransaction(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  query: { entity: string; transactionReference: string },
  version: ApiVersion = 1,
): Promise<Result<RetrievedTransaction>> {
  const called = threeDsCaller(merchant, query.entity, query.transactionReference);
  if (!called.ok) return called;
  const facts = await deps.guardFor(called.value.scope).guard.transaction(deps.now);
  // Another merchant's, another entity's and an unknown reference all look the same.
  if (!facts) return failed({ kind: 'resourceNotFound' });
  const { state, result } =
    deps.environment === 'live'
      ? liveOutcome(deps, facts, query.transactionReference, version)
      : await testOutcome(deps, facts, query.transactionReference, version);
  const href = `${deps.baseUrl}${THREEDS_PATH}/authentications/${encodeURIComponent(query.transactionReference)}`;
  return ok({
    state,
    body: {
      transactionReference: query.transactionReference,
      merchant: { entity: query.entity },
      state,
      createdAt: isoSeconds(facts.createdAt),
      updatedAt: isoSeconds(facts.updatedAt),
      ...(result ? { result } : {}),
      _links: { '3ds:transaction': { href: `${href}?entity=${encodeURIComponent(query.entity)}` } },
    },
  });
}

type Outcome = { state: TransactionState; result?: Record<string, unknown> };

async function testOutcome(
  deps: ThreeDsDeps,
  facts: TransactionFacts,
  transactionReference: string,
  version: ApiVersion,
): Promise<Outcome> {
  const auth = facts.auth;
  if (!auth) return { state: 'initialized' };
  const challenge = auth.challenge;
  if (!challenge) {
    // The stored answer names no version: an outage scenario's `unavailable` is rendered per version.
    const outage = scenarioNamed(auth.scenario)?.outage === true;
    return { state: 'completed', result: outage ? outageAnswer(auth.answer, version) : auth.answer };
  }
  const ended = facts.challengeResult;
  if (!ended) return { state: 'challenged' };
  // As verification derives it (verification.ts): the same answer for the same result and version.
  const kind = (ended.outcome === 'passed' ? challenge.onSuccess : 'authenticationFailed') as ResultKind;
  const answer = answerFor(verificationKind(kind, version), {
    transactionReference,
    brands: auth.brands as Brand[],
    version: auth.version,
    ids: await answerIds(deps.key, `verification:${challenge.reference}`),
    step: 'verification',
    apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
  });
  return { state: 'completed', result: { ...answer } };
}

function liveOutcome(
  deps: ThreeDsDeps,
  facts: TransactionFacts,
  transactionReference: string,
  version: ApiVersion,
): Outcome {
  const live = facts.live;
  if (!live) return { state: 'initialized' };
  if (live.lost) {
    // The AReq went out and its answer is unknown: `unavailable` for good, as authenticate answers.
    const apiBase = `${deps.baseUrl}${THREEDS_PATH}`;
    return {
      state: 'completed',
      result: { ...unavailableFor({ transactionReference, step: 'authenticate', apiBase }) },
    };
  }
  const challenge = live.challenge;
  // As authenticate renders its stored answer for the version: an outage mark never leaves.
  if (!challenge) return { state: 'completed', ...(live.answer ? { result: rendered(live.answer, version) } : {}) };
  return challenge.result ? { state: 'completed', result: challenge.result.answer } : { state: 'challenged' };
}
