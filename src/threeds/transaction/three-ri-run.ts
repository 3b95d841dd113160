import { objectStorage } from '../../storage/object-storage';
import { THREEDS_PATH } from '../api-paths';
import { isMastercardFamily, type Brand } from '../../bin/model';
import { cardHashOf } from '../live/live-prepare';
import type { LiveRun } from '../live/live-state';
import { answerForEmvResult, notEnrolledAnswer, unavailableAnswer, type AnswerContext } from '../live/emv-outcomes';
import { buildThreeRiAReq } from '../live/three-ri-areq';
import { providerMissing } from '../live/three-ds-server';
import type { RequestorBlock } from '../../merchants/requestor';
import type { SessionScope } from '../session-record';
import { NON_PAYMENT_TYPES, THREE_RI_TYPES, type SeriesUseOutcome, type ThreeRiType } from '../series-rules';
import { answerFor, beforeLinks, randomAnswerIds } from '../outcomes';
import {
  threeDsTransaction,
  type AuthClaim,
  type LiveAuthenticated,
  type ThreeDsTransactionApi,
  type ThreeRiInput,
  type ThreeRiOutcome,
} from '../transaction-api';
import { neverReached, preparedFor, sendAReq, type LiveHost } from './live-authentication';
import type { SeriesHold } from './series-hold';
import type { TransactionParts } from './session-end';
import { claimAuthentication } from './transaction-claims';

/**
 * A 3RI (merchantInitiated, docs/threeds.md "Series and 3RI"), run in the 3RI's own transaction
 * object: it opens its hold on the prior's series (series-hold.ts) and asks the prior's object to
 * count the use, in that order, so that a use counted is always either kept or released; then the
 * issuer decides (in `live`: one AReq through the 3DS Server provider, as authenticate's run; in
 * `test`: the built-in issuer, in the object itself). The hold is settled with the outcome, in
 * the same synchronous block (final-outcome.ts): kept when authenticated, released
 * otherwise. Nothing here waits on a lease: the object is the one owner of the 3RI.
 */

/**
 * How a 3RI's object reaches its prior's object (to count a use, and to release it): a seam for
 * the tests only, to fail the calls an object makes itself.
 */
export const priorLinks = {
  prior: (env: Env, scope: SessionScope): ThreeDsTransactionApi =>
    threeDsTransaction(env.THREEDS_TRANSACTION, scope, objectStorage.timeoutMs).owner,
};

/** What a 3RI's run reaches besides a live run's host: its hold, and the prior's object. */
export interface ThreeRiHost extends LiveHost {
  hold: SeriesHold;
  prior(scope: SessionScope): ThreeDsTransactionApi;
}

/**
 * Opens the hold and asks the prior to count the use. Called in the same synchronous block as the
 * decision to run (so the hold is in storage before the call leaves). A call that fails leaves the
 * hold open: a retry of the same body finds it (the prior knows the use by reference and body),
 * and the session's end (or the hold's own time, series-hold.ts) releases it if none comes.
 */
export async function countUse(
  host: Pick<ThreeRiHost, 'hold' | 'prior'>,
  input: ThreeRiInput,
): Promise<SeriesUseOutcome> {
  const reference = input.request.transactionReference;
  const holder = host.hold.open(input.requestHash, reference, input.prior, input.now);
  const use = await host.prior(input.prior).seriesUse(reference, input.requestHash, input.use, holder, input.now);
  // Refused, or the prior knows the reference by another body: nothing of this body is counted.
  if (use.kind !== 'allowed') host.hold.drop(input.requestHash);
  return use;
}

/** The refusal of a use the prior did not allow. */
export function notAllowed(use: Exclude<SeriesUseOutcome, { kind: 'allowed' }>): LiveAuthenticated {
  return use.kind === 'conflict' ? { kind: 'conflict' } : { kind: 'invalid', errors: [use.error] };
}

/**
 * A Mastercard recurring or instalment 3RI that the test issuer authenticates answers ECI 07
 * (Identity Check for merchant-initiated payments; research: threeds-3ri-exemptions.md), as the
 * fake provider's ACS does in `live`.
 */
function recurringEci(type: ThreeRiType, brands: readonly Brand[]): string | undefined {
  return isMastercardFamily(brands) && (type === 'recurring' || type === 'instalment') ? '07' : undefined;
}

/**
 * A 3RI's `unavailable` with the issuer's reason (`statusReason`, EMV transStatusReason), an
 * extension: a merchant renewing without the cardholder needs to know whether to retry (22, ACS
 * technical issue) or to stop using 3RI for the card (21, 3RI not supported). Other answers as given.
 */
export function withStatusReason<T extends object>(answer: T, reason: string | undefined): T {
  if ((answer as { outcome?: unknown }).outcome !== 'unavailable' || reason === undefined) return answer;
  return beforeLinks(answer, { statusReason: reason });
}

/** The test issuer's answer to a 3RI, as the 3RI's claim keeps it: authenticate's frictionless shape, in the prior's version. */
export function testThreeRiClaim(input: ThreeRiInput, outcome: ThreeRiOutcome, version: string): AuthClaim {
  const { request, card } = input;
  const base = answerFor(outcome, {
    transactionReference: request.transactionReference,
    brands: card.brands,
    version,
    ids: randomAnswerIds(),
    step: 'authenticate',
    apiBase: `${input.baseUrl}${THREEDS_PATH}`,
  });
  const eci = recurringEci(request.type, card.brands);
  const authenticated =
    eci && base.authentication ? { ...base, authentication: { ...base.authentication, eci } } : base;
  // The test issuer's `unavailable` to a 3RI: EMV reason 21, "3RI transaction not supported".
  const answer = outcome === 'unavailable' ? withStatusReason(authenticated, '21') : authenticated;
  const kind = `${THREE_RI_TYPES[request.type]}${NON_PAYMENT_TYPES.includes(request.type) ? ', non-payment' : ''}`;
  return { answer: { ...answer }, version, brands: [...card.brands], scenario: `3ri ${request.type} (${kind})` };
}

/**
 * A 3RI decided by the test issuer (its outcome by the cardholder name), in the caller's session:
 * an answer already claimed is answered (this body's) or a conflict (another's) without asking
 * the prior; else the prior counts the use, and the claim records the answer with its event,
 * settling the hold in the same block. A claim lost to another body (an authenticate under the
 * same reference) releases the use: this 3RI never happened.
 */
export async function runTestThreeRi(
  host: Pick<ThreeRiHost, 'hold' | 'prior'>,
  p: TransactionParts,
  input: ThreeRiInput,
  outcome: ThreeRiOutcome,
): Promise<LiveAuthenticated> {
  const { requestHash: hash, now } = input;
  const known = p.claims.entry<AuthClaim>('auth', now);
  if (known) {
    if (p.claims.hashOf('auth', now) !== hash) return { kind: 'conflict' };
    return { kind: 'answered', answer: known.answer.answer, scenario: known.answer.scenario };
  }
  // The hold's own time is an alarm time: a hold that never comes to an outcome is released then.
  p.effects.keepAlarm();
  const use = await countUse(host, input);
  if (use.kind !== 'allowed') return notAllowed(use);
  const claim = claimAuthentication(p, testThreeRiClaim(input, outcome, use.series.version), input);
  // Another body claimed the reference first (between the count and the claim): this 3RI never happened.
  if (claim.conflict) p.hold.settle(hash, false, now);
  await p.hold.flush(Date.now());
  return claim.conflict
    ? { kind: 'conflict' }
    : { kind: 'answered', answer: claim.answer.answer, scenario: claim.answer.scenario };
}

/**
 * A live 3RI's run: the hold and the prior's count, /preauth for the transaction id, the 3RI AReq
 * (the prior's version; checked field by field before it leaves, nothing sent if it fails), and
 * the ARes as authenticate's frictionless answer. `C` is a protocol error for a 3RI (no
 * cardholder can be challenged): `unavailable`. Before the AReq is marked sent, a failure leaves
 * nothing but the open hold (the caller answers 503); after, it is never sent again.
 */
export async function runLiveThreeRi(
  host: ThreeRiHost,
  input: ThreeRiInput,
  requestor: RequestorBlock,
  begun: LiveRun,
): Promise<LiveAuthenticated> {
  const { live } = host;
  const provider = host.provider();
  if (!provider) {
    live.abandon();
    throw providerMissing();
  }
  let use: SeriesUseOutcome;
  try {
    use = await countUse(host, input);
  } catch (e) {
    live.abandon();
    throw e;
  }
  if (use.kind !== 'allowed') {
    live.abandon();
    return notAllowed(use);
  }
  const context: AnswerContext = {
    transactionReference: input.request.transactionReference,
    brands: input.card.brands,
    step: 'authenticate',
    apiBase: `${input.baseUrl}${THREEDS_PATH}`,
  };
  // The answer is recorded with the outcome (which settles the hold); its release, if any, is sent before the answer.
  const answered = async (answer: object, scenario: string): Promise<LiveAuthenticated> => {
    const recorded = live.complete({ ...answer }, Date.now());
    await host.hold.flush(Date.now());
    return { kind: 'answered', answer: recorded ?? { ...unavailableAnswer(context) }, scenario };
  };

  let sent = false;
  try {
    // A retry after an AReq that may not have left reuses its preparation (the provider then
    // refuses a second AReq for the transaction), as authenticate's run does.
    const cardHash = await cardHashOf(host.key, input.card.cardNumber);
    const { prepared } = await preparedFor(host, provider, input, cardHash, begun);
    if (prepared.kind !== 'prepared') {
      const answer = prepared.kind === 'notEnrolled' ? notEnrolledAnswer(context) : unavailableAnswer(context);
      return await answered(answer, `live 3RI: ${prepared.kind === 'unsupported' ? prepared.why : 'not enrolled'}`);
    }
    const built = buildThreeRiAReq({
      threeDSServerTransID: prepared.threeDSServerTransID,
      now: Date.now(),
      request: input.request,
      card: input.card,
      requestor,
      series: use.series,
    });
    if (!built.ok) {
      // Nothing was sent: the use is released and the next request starts afresh.
      host.hold.settle(input.requestHash, false, Date.now());
      live.abandon();
      await host.hold.flush(Date.now());
      return { kind: 'invalid', errors: built.errors };
    }
    sent = true;
    const result = await sendAReq(host, provider, built.areq, context, 'live 3RI');
    if (result.kind === 'lost') {
      live.lose(Date.now());
      await host.hold.flush(Date.now());
      return { kind: 'answered', answer: result.answer, scenario: result.scenario };
    }
    if (result.kind === 'final') return await answered(result.answer, result.scenario);
    const ares = result.ares;
    if (ares.transStatus === 'C' || ares.transStatus === 'D')
      return await answered(unavailableAnswer(context), `live 3RI: ${ares.transStatus} to a 3RI (a protocol error)`);
    // An `unavailable` 3RI says why when the ACS did (EMV transStatusReason: 21 3RI not supported…).
    return await answered(
      withStatusReason(answerForEmvResult(ares, context, undefined), ares.transStatusReason),
      `live 3RI: ${ares.transStatus ?? 'no transStatus'}`,
    );
  } catch (e) {
    // Before the AReq was sent (or it never reached the provider): nothing is left but the open
    // hold. After: it is never sent again.
    if (sent && !neverReached(e)) live.lose(Date.now());
    else live.abandon();
    throw e;
  }
}
