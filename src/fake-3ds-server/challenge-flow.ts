import type { ChallengeEnding } from './acs-results';
import type { AuthenticationResponse, ChallengeRequest } from './messages';
import { endChallenge } from './results';
import { scenarioFor, type ChallengeFlow } from './scenarios';
import { creqTooLate } from './time-rules';
import type { TransactionRecord } from './transaction-record';

/**
 * The ACS's challenge, as pure steps over the transaction: the CReq arrives (in time or not), the
 * cardholder submits (a code, Cancel, or the page submits itself), or a test ends it through the
 * control route. Each step answers the transaction as it now stands and what to show.
 */

/** The one-time code that passes a manual challenge. */
export const PASSING_CODE = '1234';

/** Wrong codes after which a manual challenge fails. */
export const MAX_WRONG_CODES = 3;

type Challenged = TransactionRecord & { ares: AuthenticationResponse };

/** A refusal, with the HTTP status of the page (or control answer) that says why. */
export interface Refusal {
  kind: 'refused';
  status: 400 | 404 | 409;
  why: string;
}

/** A browser's CReq or form for an app's challenge: its SDK talks to the ACS over the secure channel. */
const APP_ONLY: Refusal = {
  kind: 'refused',
  status: 404,
  why: "This challenge is an app's: its SDK posts CReqs to the acsURL of acsSignedContent",
};

/** The transaction's challenge, or why there is none to act on. */
function challengeOf(
  tx: TransactionRecord | undefined,
  acsTransID: string,
): { ok: true; tx: Challenged; flow: ChallengeFlow } | { ok: false; refusal: Refusal } {
  const flow = tx && scenarioFor(tx.acctNumber)?.challenge;
  if (!tx?.ares || (tx.ares.transStatus !== 'C' && tx.ares.transStatus !== 'D') || flow === undefined) {
    return { ok: false, refusal: { kind: 'refused', status: 404, why: 'No challenge is known for this transaction' } };
  }
  if (tx.ares.acsTransID !== acsTransID) {
    return { ok: false, refusal: { kind: 'refused', status: 400, why: "acsTransID is not the ARes's" } };
  }
  if (tx.challenge?.endedAt !== undefined) {
    return { ok: false, refusal: { kind: 'refused', status: 409, why: 'The challenge has already ended' } };
  }
  return { ok: true, tx: tx as Challenged, flow };
}

export type ChallengeStart =
  | Refusal
  /** Later than 30 s after the ARes: the ACS ended the challenge (N, challengeCancel 05). */
  | { kind: 'tooLate'; record: TransactionRecord }
  | { kind: 'show'; record: TransactionRecord; flow: ChallengeFlow; wrongCodes: number };

/**
 * A CReq (already checked against its field rules) arriving at the ACS.
 *
 * @example
 * ```ts
 * const start = startChallenge(tx, creq, threeDSSessionData, now, cavv);
 * ```
 */
export function startChallenge(
  stored: TransactionRecord | undefined,
  creq: ChallengeRequest,
  threeDSSessionData: string | undefined,
  now: number,
  cavv: string,
): ChallengeStart {
  const found = challengeOf(stored, creq.acsTransID);
  if (!found.ok) return found.refusal;
  if (found.tx.app) return APP_ONLY;
  const { tx, flow } = found;
  if (creq.messageVersion !== tx.ares.messageVersion) {
    return { kind: 'refused', status: 400, why: `messageVersion is not the ARes's (${tx.ares.messageVersion})` };
  }
  const challenge = tx.challenge ?? { wrongCodes: 0, interactions: 0 };
  if (challenge.creqAt === undefined && creqTooLate(tx.aresAt ?? now, now)) {
    return { kind: 'tooLate', record: endChallenge(tx, 'creqLate', challenge.interactions, now, cavv) };
  }
  const record: TransactionRecord = {
    ...tx,
    challenge: {
      ...challenge,
      creqAt: challenge.creqAt ?? now,
      ...(threeDSSessionData !== undefined ? { threeDSSessionData } : {}),
    },
  };
  return { kind: 'show', record, flow, wrongCodes: challenge.wrongCodes };
}

export interface Submission {
  acsTransID: string;
  /** `auto` from the pages that submit themselves; `submit` or `cancel` from the cardholder. */
  action: string;
  code?: string;
}

export type SubmitOutcome =
  | Refusal
  | { kind: 'retry'; record: TransactionRecord; attemptsLeft: number }
  | { kind: 'ended'; record: TransactionRecord };

/** A submission of the challenge page. */
export function submitChallenge(
  stored: TransactionRecord | undefined,
  submission: Submission,
  now: number,
  cavv: string,
): SubmitOutcome {
  const found = challengeOf(stored, submission.acsTransID);
  if (!found.ok) return found.refusal;
  if (found.tx.app) return APP_ONLY;
  const { tx, flow } = found;
  const challenge = tx.challenge ?? { wrongCodes: 0, interactions: 0 };
  if (challenge.creqAt === undefined) {
    return { kind: 'refused', status: 409, why: 'No CReq has started this challenge' };
  }
  const interactions = challenge.interactions + 1;
  const end = (ending: ChallengeEnding): SubmitOutcome => ({
    kind: 'ended',
    record: endChallenge(tx, ending, interactions, now, cavv),
  });
  const automatic = flow === 'autoPass' || flow === 'autoFail';
  if (automatic !== (submission.action === 'auto')) {
    return { kind: 'refused', status: 400, why: `This challenge takes no "${submission.action}"` };
  }
  if (flow === 'autoPass') return end('pass');
  if (flow === 'autoFail') return end('fail');
  if (submission.action === 'cancel') return end('cancel');
  if (submission.action !== 'submit') {
    return { kind: 'refused', status: 400, why: `Unknown action "${submission.action}"` };
  }
  if (submission.code?.trim() === PASSING_CODE) return end('pass');
  const wrongCodes = challenge.wrongCodes + 1;
  if (wrongCodes >= MAX_WRONG_CODES) return end('tooManyAttempts');
  return {
    kind: 'retry',
    record: { ...tx, challenge: { ...challenge, wrongCodes, interactions } },
    attemptsLeft: MAX_WRONG_CODES - wrongCodes,
  };
}

/** What the control route can make of a pending challenge. */
export type ControlResult = 'Y' | 'N' | 'cancel' | 'timeout';

const CONTROL_ENDINGS: Readonly<Record<ControlResult, ChallengeEnding>> = {
  Y: 'pass',
  N: 'fail',
  cancel: 'cancel',
  timeout: 'timeout',
};

/** A test ends a pending challenge without a browser (`POST /_fake/challenge/{acsTransID}`). */
export function endChallengeByControl(
  stored: TransactionRecord | undefined,
  acsTransID: string,
  result: ControlResult,
  now: number,
  cavv: string,
): Refusal | { kind: 'ended'; record: TransactionRecord } {
  const found = challengeOf(stored, acsTransID);
  if (!found.ok) return found.refusal;
  const { tx } = found;
  const interactions = (tx.challenge?.interactions ?? 0) + (result === 'timeout' ? 0 : 1);
  return { kind: 'ended', record: endChallenge(tx, CONTROL_ENDINGS[result], interactions, now, cavv) };
}
