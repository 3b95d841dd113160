import type { ThreeDsTransactionApi } from '../transaction-api';
import type { LiveChallenge, LiveResult } from './live-state';
import { THREEDS_PATH } from '../api-paths';
import type { ThreeDsDeps } from '../steps/step-deps';
import type { ResultsRequest } from './emv-messages';
import { answerForEmvResult, type AnswerContext } from './emv-outcomes';
import { ProviderUnavailable, type ThreeDsServer } from './three-ds-server';
import { resultFetchableUntil } from './timing';

/**
 * A live challenge's one result (docs/threeds.md "Live": "The result of a challenge"): the RReq
 * the ACS sent through the Directory Server to the 3DS Server provider, fetched from the provider
 * server-side and recorded once in the transaction's owner. The browser's `cres` only says that
 * the challenge ended; what it says of the outcome is never trusted.
 */

/** Pauses between fetches while the provider has no RReq yet: about 1.75 s in all. */
const PENDING_PAUSES_MS = [250, 500, 1_000];

export type FetchedResult =
  | { kind: 'decided'; result: LiveResult }
  /** The provider has no RReq (yet, or any more), or could not be asked: nothing was decided. */
  | { kind: 'undecided'; why: 'pending' | 'gone' | 'unavailable' };

function contextOf(deps: Pick<ThreeDsDeps, 'baseUrl'>, challenge: LiveChallenge): AnswerContext {
  return {
    transactionReference: challenge.transactionReference,
    brands: challenge.brands as AnswerContext['brands'],
    step: 'verification',
    apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
  };
}

/**
 * Fetches the RReq (again, briefly, while the provider does not have it yet) and records the
 * answer it gives; the first answer recorded stays, whoever recorded it.
 */
export async function fetchResult(
  deps: ThreeDsDeps,
  owner: ThreeDsTransactionApi,
  provider: ThreeDsServer,
  challenge: LiveChallenge,
): Promise<FetchedResult> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await provider.result(challenge.threeDSServerTransID);
    if (outcome.kind === 'rreq') {
      const answer = rreqAnswer(deps, challenge, outcome.rreq);
      const result = await owner.liveDecide(challenge.reference, { ...answer }, Date.now());
      // Undefined only when the session ended in between: the challenge is gone with it.
      return result ? { kind: 'decided', result } : { kind: 'undecided', why: 'gone' };
    }
    const pause = PENDING_PAUSES_MS[attempt];
    if (outcome.kind === 'gone' || pause === undefined) return { kind: 'undecided', why: outcome.kind };
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** The answer an RReq gives for the challenge; another transaction's RReq is the provider's fault. */
export function rreqAnswer(
  deps: Pick<ThreeDsDeps, 'baseUrl'>,
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
export function notCompletedAnswer(
  deps: Pick<ThreeDsDeps, 'baseUrl'>,
  challenge: LiveChallenge,
): Record<string, unknown> {
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
 * verification's result: the recorded one; else the RReq while the provider may still hold it;
 * else (none there, or too late) `authenticationFailed`, recorded, so that every later call
 * repeats it. A provider that cannot be asked answers 503 and records nothing.
 */
export async function verificationResult(
  deps: ThreeDsDeps,
  owner: ThreeDsTransactionApi,
  provider: ThreeDsServer,
  known: { challenge: LiveChallenge; result?: LiveResult },
): Promise<LiveResult> {
  if (known.result) return known.result;
  const { challenge } = known;
  if (deps.now < resultFetchableUntil(challenge.aresAt)) {
    const fetched = await fetchResult(deps, owner, provider, challenge);
    if (fetched.kind === 'decided') return fetched.result;
  }
  const answer = notCompletedAnswer(deps, challenge);
  const result = await owner.liveDecide(challenge.reference, answer, Date.now());
  return result ?? { answer, decidedAt: Date.now() };
}
