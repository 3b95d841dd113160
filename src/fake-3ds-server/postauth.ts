import { erro } from './erro';
import type { ErrorMessage, ResultsRequest } from './messages';
import { DECOUPLED_RREQ_MS, LATE_RREQ_POSTAUTHS, scenarioFor } from './scenarios';
import { endChallenge } from './results';
import { appTimeoutArrival } from './app-challenge-flow';
import { rreqExpired } from './time-rules';
import type { TransactionRecord } from './transaction-record';

/**
 * POST /postauth: the RReq the 3DS Server holds for a transaction. 3dsecure.io answers Erro 305
 * "No RReq has been received" until it arrives, and Erro 203 "Unknown threeDSServerTransID" for
 * an id it never knew or whose RReq it dropped 300 s after it arrived (research notes §1.3).
 */

export type PostauthAnswer = { kind: 'rreq'; rreq: ResultsRequest } | { kind: 'erro'; erro: ErrorMessage };

/**
 * A /postauth call for `threeDSServerTransID`: the transaction as it now stands and the answer.
 *
 * @example
 * ```ts
 * const { record, answer } = fetchResult(stored, id, now);
 * ```
 */
export function fetchResult(
  stored: TransactionRecord | undefined,
  threeDSServerTransID: string,
  now: number,
  cavv = '',
): { record: TransactionRecord | undefined; answer: PostauthAnswer } {
  const version = stored?.ares?.messageVersion;
  const refuse = (code: '203' | '305', description: string, detail: string): PostauthAnswer => ({
    kind: 'erro',
    erro: erro({ code, component: 'S', description, detail, about: 'RReq', version, threeDSServerTransID }),
  });
  const unknown = (detail: string) => refuse('203', 'Unknown threeDSServerTransID', detail);
  const noRReq = () => refuse('305', 'No RReq has been received', 'The ACS has not sent the result yet');
  if (!stored) return { record: undefined, answer: unknown('No transaction has this id') };
  const counted = appTimeoutArrival(
    decoupledArrival({ ...stored, postauthCalls: stored.postauthCalls + 1 }, now, cavv),
    now,
    cavv,
  );
  const { rreq, rreqAt } = counted;
  if (!rreq || rreqAt === undefined) return { record: counted, answer: noRReq() };
  const tx = { ...counted, postauthCallsAfterEnd: counted.postauthCallsAfterEnd + 1 };
  const flow = scenarioFor(tx.acctNumber)?.challenge;
  if (flow === 'manualExpiredRReq') return { record: tx, answer: unknown('The RReq expired') };
  if (flow === 'manualLateRReq' && tx.postauthCallsAfterEnd <= LATE_RREQ_POSTAUTHS) {
    return { record: tx, answer: noRReq() };
  }
  if (rreqExpired(rreqAt, now)) {
    return { record: tx, answer: unknown('The RReq expired 300 seconds after it arrived') };
  }
  return { record: tx, answer: { kind: 'rreq', rreq } };
}

/**
 * A decoupled authentication (ARes D) whose ACS has answered by `now`: its RReq arrived
 * {@link DECOUPLED_RREQ_MS} after the ARes (Y or N by the card's flow; never for `decoupledNever`),
 * unless the control route ended it first.
 */
function decoupledArrival(tx: TransactionRecord, now: number, cavv: string): TransactionRecord {
  const flow = scenarioFor(tx.acctNumber)?.challenge;
  const ending = flow === 'decoupledPass' ? 'pass' : flow === 'decoupledFail' ? 'fail' : undefined;
  if (tx.rreq || !ending || tx.ares?.transStatus !== 'D' || tx.aresAt === undefined) return tx;
  const at = tx.aresAt + DECOUPLED_RREQ_MS;
  return now < at ? tx : endChallenge({ ...tx, ares: tx.ares }, ending, 0, at, cavv);
}
