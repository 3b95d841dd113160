import type { ChallengeEnding } from './acs-results';
import { ERRO, type CReq, type CResState, type ErroCode } from '../emv/challenge-messages';
import { isExpectedCounter, nextCounter } from '../emv/secure-channel';
import { MAX_WRONG_CODES, PASSING_CODE } from './challenge-flow';
import type { AuthenticationResponse } from './messages';
import { endChallenge } from './results';
import { scenarioFor } from './scenarios';
import type { AppChallengeRecord, TransactionRecord } from './transaction-record';

/**
 * The fake ACS's app challenge (docs/fake-3ds-server.md "The app channel"), as pure steps over the
 * transaction: a CReq that opened and belongs to the transaction is decided here on the record as
 * it stands; an Erro changes nothing. The flows are the browser's (the card's fourth digit): the
 * self-submitting ones end at the first CReq, every other one asks for the code (1234; three wrong
 * codes, or `challengeCancel`, fail). The SDK's `sdkMaxTimeout` ends a challenge still open then
 * (its RReq then arrives, N with challengeCancel 04: postauth.ts).
 */

/** The last counter there is: no CReq may follow it. */
const LAST_COUNTER = '999';

export type AppStep =
  | { kind: 'erro'; code: ErroCode; description: string }
  | { kind: 'cres'; record: TransactionRecord; acsCounter: string; state: CResState };

type AppChallenged = TransactionRecord & { ares: AuthenticationResponse; app: AppChallengeRecord };

/** When an app challenge still open ends, timed out: its ARes plus the SDK's maxTimeout. */
export function appChallengeEnds(tx: { aresAt?: number; app?: AppChallengeRecord }): number | undefined {
  return tx.app && tx.aresAt !== undefined ? tx.aresAt + tx.app.maxTimeoutMinutes * 60_000 : undefined;
}

/**
 * The transaction with its app challenge ended as timed out if its time ran out by `now` and no
 * result came first (the RReq then arrives at that time); otherwise as it was.
 */
export function appTimeoutArrival(tx: TransactionRecord, now: number, cavv: string): TransactionRecord {
  const ends = appChallengeEnds(tx);
  if (tx.rreq || ends === undefined || now < ends || tx.ares?.transStatus !== 'C') return tx;
  return endChallenge({ ...tx, ares: tx.ares }, 'timeout', tx.challenge?.interactions ?? 0, ends, cavv);
}

/**
 * One CReq on the transaction as it now stands: its challenge open and in time, the counter the
 * next one, then the code, the cancel or (no data) the screen.
 */
export function appChallengeStep(
  stored: TransactionRecord | undefined,
  creq: CReq,
  now: number,
  cavv: string,
): AppStep {
  const refuse = (code: ErroCode, description: string): AppStep => ({ kind: 'erro', code, description });
  if (!stored?.app || stored.ares?.transStatus !== 'C')
    return refuse(ERRO.transactionNotRecognised, 'No app challenge is known for this transaction.');
  const tx = stored as AppChallenged;
  const ends = appChallengeEnds(tx)!;
  if (tx.challenge?.endedAt !== undefined || now >= ends) {
    const timedOut = now >= ends && (tx.rreq === undefined || tx.rreq.challengeCancel === '04');
    return timedOut
      ? refuse(ERRO.timedOut, "The challenge's time (sdkMaxTimeout) ran out.")
      : refuse(ERRO.transactionNotRecognised, 'The challenge has ended.');
  }
  const { app } = tx;
  if (!isExpectedCounter(creq.sdkCounterStoA, app.nextSdkCounter))
    return refuse(
      ERRO.decryptionFailure,
      `sdkCounterStoA ${creq.sdkCounterStoA} does not follow (expected ${app.nextSdkCounter}).`,
    );
  if (app.nextSdkCounter === LAST_COUNTER || app.nextAcsCounter === LAST_COUNTER)
    return refuse(ERRO.formatInvalid, 'The challenge has no counter left.');

  const challenge = tx.challenge ?? { wrongCodes: 0, interactions: 0 };
  const counted: AppChallenged = {
    ...tx,
    app: { ...app, nextSdkCounter: nextCounter(app.nextSdkCounter), nextAcsCounter: nextCounter(app.nextAcsCounter) },
    challenge: { ...challenge, creqAt: challenge.creqAt ?? now },
  };
  const acsCounter = app.nextAcsCounter;
  const answered = counted.challenge!.interactions + (creq.challengeDataEntry !== undefined ? 1 : 0);
  const end = (ending: ChallengeEnding): AppStep => {
    const record = endChallenge(counted, ending, answered, now, cavv);
    return {
      kind: 'cres',
      record,
      acsCounter,
      state: { kind: 'done', transStatus: record.rreq!.transStatus === 'Y' ? 'Y' : 'N' },
    };
  };
  const ask = (record: TransactionRecord, text: string): AppStep => ({
    kind: 'cres',
    record,
    acsCounter,
    state: { kind: 'ask', text },
  });

  const flow = scenarioFor(tx.acctNumber)?.challenge;
  if (creq.challengeCancel !== undefined) return end('cancel');
  if (flow === 'autoPass') return end('pass');
  if (flow === 'autoFail') return end('fail');
  if (creq.challengeDataEntry === undefined)
    return ask(counted, `Enter the code sent to your phone (${PASSING_CODE} at the fake ACS).`);
  if (creq.challengeDataEntry.trim() === PASSING_CODE) return end('pass');
  const wrongCodes = challenge.wrongCodes + 1;
  if (wrongCodes >= MAX_WRONG_CODES) return end('tooManyAttempts');
  const left = MAX_WRONG_CODES - wrongCodes;
  return ask(
    { ...counted, challenge: { ...counted.challenge!, wrongCodes, interactions: answered } },
    `That code is not right: ${left} ${left === 1 ? 'try' : 'tries'} left.`,
  );
}
