import { challengeResult, type ChallengeEnding } from './acs-results';
import type { AuthenticationResponse, ChallengeResponse, ResultsRequest } from './messages';
import type { TransactionRecord } from './transaction-record';

/**
 * The end of a challenge: the RReq the ACS sends through the DS to the 3DS Server (which /postauth
 * returns) and the final CRes it posts through the browser. Pure; the CAVV is passed in.
 */

/** The RReq of a challenge that ended so. */
export function resultsRequest(
  ares: AuthenticationResponse,
  acctNumber: string,
  ending: ChallengeEnding,
  interactions: number,
  cavv: string,
): ResultsRequest {
  return {
    messageType: 'RReq',
    messageVersion: ares.messageVersion,
    messageCategory: '01',
    threeDSServerTransID: ares.threeDSServerTransID,
    acsTransID: ares.acsTransID,
    dsTransID: ares.dsTransID,
    // An app's challenge: how the ACS rendered it; from 2.2.0 the SDK's transaction too.
    ...(ares.acsRenderingType !== undefined ? { acsRenderingType: ares.acsRenderingType } : {}),
    ...(ares.sdkTransID !== undefined && ares.messageVersion !== '2.1.0' ? { sdkTransID: ares.sdkTransID } : {}),
    ...challengeResult(ending, ares.messageVersion, acctNumber, cavv),
    interactionCounter: String(Math.min(interactions, 99)).padStart(2, '0'),
  };
}

/** The final CRes, which only says whether the challenge passed: the RReq is the result. */
export function finalChallengeResponse(rreq: ResultsRequest): ChallengeResponse {
  return {
    threeDSServerTransID: rreq.threeDSServerTransID,
    acsTransID: rreq.acsTransID,
    messageType: 'CRes',
    messageVersion: rreq.messageVersion,
    transStatus: rreq.transStatus === 'Y' ? 'Y' : 'N',
  };
}

/**
 * The transaction once its challenge ended: the RReq has arrived (now) and, for a browser, the
 * final CRes is ready.
 * `interactions` counts the submissions that ended it as well.
 */
export function endChallenge(
  tx: TransactionRecord & { ares: AuthenticationResponse },
  ending: ChallengeEnding,
  interactions: number,
  now: number,
  cavv: string,
): TransactionRecord {
  const rreq = resultsRequest(tx.ares, tx.acctNumber, ending, interactions, cavv);
  const challenge = tx.challenge ?? { wrongCodes: 0, interactions: 0 };
  return {
    ...tx,
    rreq,
    rreqAt: now,
    // A browser's challenge ends with the CRes its page posts; an app's SDK got its final CRes over
    // the secure channel (app-challenge-flow.ts).
    challenge: { ...challenge, interactions, endedAt: now, ...(tx.app ? {} : { cres: finalChallengeResponse(rreq) }) },
  };
}
