/**
 * The app channel's challenge messages as an ACS reads and writes them (CONTRACT.md §12, EMV 3DS
 * Protocol and Core Functions: CReq, CRes, Erro): which CReq is well formed and belongs to the
 * transaction, the CRes that answers it, and the Erro for what EMV refuses. Protocol only: whether
 * a counter follows and what a code does are decided by the challenge's owner.
 */

/** The ids every message of one challenge carries. */
export interface ChallengeIds {
  threeDSServerTransID: string;
  acsTransID: string;
  sdkTransID: string;
}

/** EMV's error codes this ACS sends (EMV 3DS Protocol and Core Functions, Table A.4). */
export const ERRO = {
  /** Message received invalid: not a CReq. */
  messageInvalid: '101',
  /** The message version is not the transaction's. */
  versionNotSupported: '102',
  /** A required element is missing. */
  requiredMissing: '201',
  /** An element's format or value is invalid. */
  formatInvalid: '203',
  /** The transaction id is not recognised (none, another transaction's, or one whose challenge is over). */
  transactionNotRecognised: '301',
  /** Data decryption failure: the JWE does not open, or its counter does not follow. */
  decryptionFailure: '302',
  /** The challenge's time ran out (the SDK's maxTimeout). */
  timedOut: '402',
} as const;
export type ErroCode = (typeof ERRO)[keyof typeof ERRO];

/**
 * An Erro from the ACS: plain JSON (an SDK may not be able to decrypt anything), with the ids it
 * could tell.
 */
export function erroMessage(
  errorCode: ErroCode,
  errorDescription: string,
  known: Partial<ChallengeIds> & { messageVersion?: string } = {},
): Record<string, unknown> {
  return {
    ...known,
    messageType: 'Erro',
    errorCode,
    errorComponent: 'A',
    errorDescription,
    errorMessageType: 'CReq',
  };
}

/** A CReq that belongs to the transaction: its counter, and what the cardholder did. */
export interface CReq {
  sdkCounterStoA: string;
  /** The code entered (text UI), if any. */
  challengeDataEntry?: string;
  /** The cardholder or the app cancelled (EMV `challengeCancel`, 01–08). */
  challengeCancel?: string;
}

export type CReqReading = { ok: true; creq: CReq } | { ok: false; code: ErroCode; description: string };

/**
 * Reads a decrypted message as the transaction's CReq: its type, ids and version, and the fields
 * the text challenge uses. Whether its counter is the next one is the owner's to say.
 */
export function readCReq(message: Record<string, unknown>, ids: ChallengeIds, messageVersion: string): CReqReading {
  const refuse = (code: ErroCode, description: string): CReqReading => ({ ok: false, code, description });
  if (message.messageType !== 'CReq') return refuse(ERRO.messageInvalid, 'The message is not a CReq.');
  for (const id of ['threeDSServerTransID', 'acsTransID', 'sdkTransID'] as const) {
    if (message[id] === undefined) return refuse(ERRO.requiredMissing, `The CReq has no ${id}.`);
    if (message[id] !== ids[id])
      return refuse(ERRO.transactionNotRecognised, `The CReq's ${id} is not this transaction's.`);
  }
  if (message.messageVersion === undefined) return refuse(ERRO.requiredMissing, 'The CReq has no messageVersion.');
  if (message.messageVersion !== messageVersion)
    return refuse(ERRO.versionNotSupported, `The transaction's message version is ${messageVersion}.`);
  if (message.sdkCounterStoA === undefined) return refuse(ERRO.requiredMissing, 'The CReq has no sdkCounterStoA.');
  if (typeof message.sdkCounterStoA !== 'string' || !/^\d{3}$/.test(message.sdkCounterStoA))
    return refuse(ERRO.formatInvalid, 'sdkCounterStoA is three digits.');
  const entry = message.challengeDataEntry;
  if (entry !== undefined && (typeof entry !== 'string' || entry.length < 1 || entry.length > 45))
    return refuse(ERRO.formatInvalid, 'challengeDataEntry is 1 to 45 characters.');
  const cancel = message.challengeCancel;
  if (cancel !== undefined && (typeof cancel !== 'string' || !/^0[1-8]$/.test(cancel)))
    return refuse(ERRO.formatInvalid, 'challengeCancel is 01 to 08.');
  return {
    ok: true,
    creq: {
      sdkCounterStoA: message.sdkCounterStoA,
      ...(entry !== undefined ? { challengeDataEntry: entry } : {}),
      ...(cancel !== undefined ? { challengeCancel: cancel } : {}),
    },
  };
}

/** What a CRes says: the text challenge again (with its line of text), or the challenge's end. */
export type CResState = { kind: 'ask'; text: string } | { kind: 'done'; transStatus: 'Y' | 'N' };

/** The CRes (before encryption) answering a CReq, `acsCounterAtoS` this answer's counter. */
export function cresMessage(
  ids: ChallengeIds,
  messageVersion: string,
  acsCounterAtoS: string,
  state: CResState,
): Record<string, unknown> {
  return {
    ...ids,
    messageType: 'CRes',
    messageVersion,
    acsCounterAtoS,
    ...(state.kind === 'done'
      ? { challengeCompletionInd: 'Y', transStatus: state.transStatus }
      : {
          challengeCompletionInd: 'N',
          acsUiType: '01',
          challengeInfoHeader: 'Confirm your payment',
          challengeInfoText: state.text,
          challengeInfoLabel: 'Code',
          submitAuthenticationLabel: 'Confirm',
        }),
  };
}
