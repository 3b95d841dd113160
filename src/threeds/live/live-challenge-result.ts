import { RESULT_PENDING_PAUSES_MS, type LiveChallenge } from './live-state';
import { THREEDS_PATH } from '../api-paths';
import type { ResultsRequest } from './emv-messages';
import { answerForEmvResult, unavailableAnswer, type AnswerContext } from './emv-outcomes';
import { ProviderUnavailable, type ThreeDsServer } from './three-ds-server';
import { RESULT_RETENTION_MS, resultFetchableUntil } from './timing';

/**
 * A live challenge's one result (docs/threeds.md "Live": "The result of a challenge"): the RReq
 * the ACS sent through the Directory Server to the 3DS Server provider, fetched from the provider
 * server-side by the transaction's object, which records it once (transaction/live-results.ts). The browser's `cres` only says that
 * the challenge ended; what it says of the outcome is never trusted.
 */

export type FetchedRReq =
  | { kind: 'rreq'; answer: Record<string, unknown> }
  /** The provider has no RReq (yet, or any more): nothing was decided. */
  | { kind: 'undecided'; why: 'pending' | 'gone' };

function contextOf(deps: { baseUrl: string }, challenge: LiveChallenge): AnswerContext {
  return {
    transactionReference: challenge.transactionReference,
    brands: challenge.brands as AnswerContext['brands'],
    step: 'verification',
    apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
  };
}

/**
 * Fetches the RReq and gives the answer it says; the caller (the transaction's object) records it.
 * A provider that cannot be asked throws {@link ProviderUnavailable}.
 *
 * After a challenge (a browser's or an app's), the RReq is on its way when the result is asked
 * for: the ACS sends it as the challenge ends, so a provider without it yet is asked again,
 * briefly ({@link RESULT_PENDING_PAUSES_MS}). A decoupled authentication's RReq comes whenever the
 * cardholder confirms in the bank's app, minutes later or never: before its `expiresAt`, a
 * provider without it is asked once, and verification answers `decoupled` at once. From
 * `expiresAt` on, the ask that would end it as `unavailable` waits the same pauses, for an RReq
 * the ACS sent at its own deadline (a moment after ours: it counts from the AReq's arrival).
 */
export async function fetchRReq(
  provider: ThreeDsServer,
  challenge: LiveChallenge,
  baseUrl: string,
  now: number,
): Promise<FetchedRReq> {
  const pollOnly = challenge.decoupled !== undefined && now < challenge.decoupled.expiresAt;
  const pauses = pollOnly ? [] : RESULT_PENDING_PAUSES_MS;
  for (let attempt = 0; ; attempt++) {
    const outcome = await provider.result(challenge.threeDSServerTransID);
    if (outcome.kind === 'rreq') return { kind: 'rreq', answer: rreqAnswer({ baseUrl }, challenge, outcome.rreq) };
    const pause = pauses[attempt];
    if (outcome.kind === 'gone' || pause === undefined) return { kind: 'undecided', why: outcome.kind };
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** The answer an RReq gives for the challenge; another transaction's RReq is the provider's fault. */
export function rreqAnswer(
  deps: { baseUrl: string },
  challenge: LiveChallenge,
  rreq: ResultsRequest,
): Record<string, unknown> {
  if (rreq.threeDSServerTransID !== challenge.threeDSServerTransID || rreq.acsTransID !== challenge.acsTransID) {
    throw new ProviderUnavailable("3DS Server /postauth answered another transaction's RReq");
  }
  return { ...answerForEmvResult(rreq, contextOf(deps, challenge), challenge.exemption) };
}

/**
 * The answer for a challenge that has no RReq to show for itself (the cardholder closed the
 * frame, or the provider no longer holds it): `authenticationFailed`, not completed.
 */
export function notCompletedAnswer(deps: { baseUrl: string }, challenge: LiveChallenge): Record<string, unknown> {
  return {
    ...answerForEmvResult(
      {
        transStatus: 'N',
        messageVersion: challenge.messageVersion,
        acsTransID: challenge.acsTransID,
        dsTransID: challenge.dsTransID,
      },
      contextOf(deps, challenge),
      challenge.exemption,
    ),
  };
}

/**
 * Until when a challenge's RReq may still be fetched: it arrives by the end of the challenge's 10
 * minutes (a decoupled authentication's or an app challenge's `expiresAt`) at the latest, and the
 * provider keeps it 300 s.
 */
export function fetchableUntil(challenge: LiveChallenge): number {
  const ends = challenge.decoupled?.expiresAt ?? challenge.app?.expiresAt;
  return ends !== undefined ? ends + RESULT_RETENTION_MS : resultFetchableUntil(challenge.aresAt);
}

/**
 * The answer once no RReq came and none can: a challenge not completed (`authenticationFailed`);
 * a decoupled authentication whose time ran out, `unavailable` (CONTRACT §12).
 */
export function noResultAnswer(deps: { baseUrl: string }, challenge: LiveChallenge): Record<string, unknown> {
  return challenge.decoupled
    ? { ...unavailableAnswer(contextOf(deps, challenge)) }
    : notCompletedAnswer(deps, challenge);
}
