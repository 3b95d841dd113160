import type { Brand } from '../bin/model';
import type { ApiVersion } from '../media-types';
import type { TransactionFacts } from './transaction-api';
import { THREEDS_PATH } from './api-paths';
import { outageAnswer, verificationKind } from './api-versions';
import { rendered } from './live/stored-answer';
import { answerFor, answerIds, unavailableFor, withExemption, type ResultKind } from './outcomes';
import { scenarioNamed } from './scenarios';
import { resultKindOf } from './challenge-rules';

/**
 * What a 3DS transaction is now, from its object's facts: its state, and once it is `completed`
 * its final outcome as the merchant sees it. One derivation for GET of the transaction
 * (steps/retrieve-transaction.ts) and for the `threeDS.authentication.completed` event the object
 * sends (threeds-owner.ts), so the two never disagree.
 *
 * - `initialized`: deviceDataInitialize ran, authenticate has not;
 * - `challenged`: authenticate asked for a challenge that has no result yet;
 * - `decoupled`: the issuer authenticates the cardholder out of band and has not answered yet;
 * - `completed`: the final outcome is known: what `verification` answers for a challenged
 *   transaction (the same answer, byte for byte, for the same API version), what `authenticate`
 *   answered for a frictionless one.
 */

export type TransactionState = 'initialized' | 'challenged' | 'decoupled' | 'completed';

export interface TransactionOutcome {
  state: TransactionState;
  result?: Record<string, unknown>;
}

/** What rendering an outcome needs besides the facts. */
export interface OutcomeContext {
  /** JWT_SIGNING_KEY: derives the answers' ids as verification does. */
  key: Uint8Array<ArrayBuffer>;
  /** Base of the links in answers. */
  baseUrl: string;
}

/** The state alone: synchronous, for the object to know when its outcome is final. */
export function transactionState(facts: TransactionFacts): TransactionState {
  const live = facts.live;
  if (live) {
    if (live.lost || !live.challenge) return 'completed';
    if (live.challenge.result) return 'completed';
    return live.challenge.challenge.decoupled ? 'decoupled' : 'challenged';
  }
  const auth = facts.auth;
  if (!auth) return 'initialized';
  if (!auth.challenge) return 'completed';
  if (facts.challengeResult) return 'completed';
  return auth.challenge.decoupled ? 'decoupled' : 'challenged';
}

export async function transactionOutcome(
  context: OutcomeContext,
  facts: TransactionFacts,
  transactionReference: string,
  version: ApiVersion,
): Promise<TransactionOutcome> {
  const state = transactionState(facts);
  if (state !== 'completed') return { state };
  return {
    state,
    result: facts.live
      ? liveResult(context, facts.live, transactionReference, version)
      : await testResult(context, facts, transactionReference, version),
  };
}

/**
 * The outcome as an event carries it (docs/events.md "Types"): without `authenticationValue`, which the
 * merchant fetches with `verification` or GET.
 */
export function withoutAuthenticationValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAuthenticationValue);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'authenticationValue')
      .map(([key, inner]) => [key, withoutAuthenticationValue(inner)]),
  );
}

async function testResult(
  context: OutcomeContext,
  facts: TransactionFacts,
  transactionReference: string,
  version: ApiVersion,
): Promise<Record<string, unknown>> {
  const auth = facts.auth!;
  const challenge = auth.challenge;
  if (!challenge) {
    // The stored answer names no version: an outage scenario's `unavailable` is rendered per version.
    const outage = scenarioNamed(auth.scenario)?.outage === true;
    return outage ? outageAnswer(auth.answer, version) : auth.answer;
  }
  const ended = facts.challengeResult!;
  // As verification derives it (verification.ts): the same answer for the same result and version.
  const kind = resultKindOf(ended, challenge.onSuccess) as ResultKind;
  const answer = answerFor(verificationKind(kind, version), {
    transactionReference,
    brands: auth.brands as Brand[],
    version: auth.version,
    ids: await answerIds(context.key, `verification:${challenge.reference}`),
    step: 'verification',
    apiBase: `${context.baseUrl}${THREEDS_PATH}`,
  });
  return { ...withExemption(answer, auth.exemption) };
}

function liveResult(
  context: OutcomeContext,
  live: NonNullable<TransactionFacts['live']>,
  transactionReference: string,
  version: ApiVersion,
): Record<string, unknown> {
  if (live.lost) {
    // The AReq went out and its answer is unknown: `unavailable` for good, as authenticate answers.
    const apiBase = `${context.baseUrl}${THREEDS_PATH}`;
    return { ...unavailableFor({ transactionReference, step: 'authenticate', apiBase }) };
  }
  // As authenticate renders its stored answer for the version: an outage mark never leaves.
  if (!live.challenge) return rendered(live.answer!, version);
  return live.challenge.result!.answer;
}
