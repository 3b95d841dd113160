import { DurableObject } from 'cloudflare:workers';
import type { EmvVersion } from '../emv/emv-rules';
import { newAuthenticationValue } from './acs-results';
import { authenticate, type AppAReqFacts, type AuthAnswer, type PriorAuthentication } from './authentication';
import { appChallengeStep } from './app-challenge-flow';
import { fakeAcsSignedContent, fakeChannelKey, sdkFieldFaults } from './app-keys';
import { isObject } from './base64url';
import { cresMessage, erroMessage, ERRO, readCReq, type ChallengeIds, type ErroCode } from '../emv/challenge-messages';
import {
  challengeMessageKid,
  decryptChallengeMessage,
  encryptChallengeMessage,
  isP256PublicJwk,
} from '../emv/secure-channel';
import { acsAppCReqUrl } from './urls';
import { cardRangeData } from './card-range';
import {
  MAX_WRONG_CODES,
  endChallengeByControl,
  startChallenge,
  submitChallenge,
  type ControlResult,
  type Refusal,
  type Submission,
} from './challenge-flow';
import type {
  AuthenticationResponse,
  CardRangeData,
  ChallengeRequest,
  ChallengeResponse,
  ResultsRequest,
} from './messages';
import { invokeMethod, type MethodOutcome } from './method-flow';
import { fetchResult, type PostauthAnswer } from './postauth';
import type { ChallengeFlow, Scenario } from './scenarios';
import { preparedTransaction, type AppChallengeRecord, type TransactionRecord } from './transaction-record';

/** What the browser carries to the requestor when a challenge ends, and the RReq behind it. */
export interface ChallengeEnd {
  rreq: ResultsRequest;
  /** A browser's challenge's final CRes (an app's SDK got its own over the secure channel). */
  cres?: ChallengeResponse;
  /** The AReq's notificationURL, where the final CRes goes. */
  notificationURL: string;
  threeDSSessionData?: string;
}

export type ChallengePage =
  | Refusal
  | { kind: 'tooLate' }
  | { kind: 'show'; flow: ChallengeFlow; threeDSServerTransID: string; acsTransID: string; attemptsLeft: number };

/**
 * One transaction of the fake (named by its threeDSServerTransID): all it knows, in one record,
 * changed only by the pure steps of the modules it calls, one call at a time. The clock comes
 * from the caller (the fake's clock); ids and CAVVs are drawn here.
 */
export class FakeTransaction extends DurableObject {
  private load(): Promise<TransactionRecord | undefined> {
    return this.ctx.storage.get<TransactionRecord>('transaction');
  }

  private async save(record: TransactionRecord | undefined): Promise<void> {
    if (record) await this.ctx.storage.put('transaction', record);
  }

  /** /preauth made this transaction: remember the card and its scenario; answer the CRD. */
  async prepare(p: {
    threeDSServerTransID: string;
    acctNumber: string;
    scenario: Scenario;
    now: number;
    origin: string;
  }): Promise<CardRangeData> {
    await this.save(preparedTransaction(p));
    return cardRangeData(p.scenario, p);
  }

  /** An /auth call that names this transaction. */
  async authenticate(body: unknown, now: number, origin: string, prior?: PriorAuthentication): Promise<AuthAnswer> {
    const ids = { acsTransID: crypto.randomUUID(), dsTransID: crypto.randomUUID() };
    // An app's AReq: the DS opens its encData and the ACS signs its content before the checks.
    const app = isAppAReq(body) ? await appAReqFacts(body, origin, ids.acsTransID) : undefined;
    const { record, answer } = authenticate(await this.load(), body, {
      now,
      origin,
      ...ids,
      cavv: newAuthenticationValue(),
      ...(prior ? { prior } : {}),
      ...(app ? { app } : {}),
    });
    await this.save(record);
    return answer;
  }

  /** The browser invoked a 3DS Method URL (of `version`, where each version has its own). */
  async invokeMethod(version: EmvVersion | undefined, now: number): Promise<MethodOutcome> {
    const { record, outcome } = invokeMethod(await this.load(), version, now);
    await this.save(record);
    return outcome;
  }

  /** A CReq arrived at the ACS. */
  async startChallenge(
    creq: ChallengeRequest,
    threeDSSessionData: string | undefined,
    now: number,
  ): Promise<ChallengePage> {
    const start = startChallenge(await this.load(), creq, threeDSSessionData, now, newAuthenticationValue());
    if (start.kind === 'refused') return start;
    await this.save(start.record);
    if (start.kind === 'tooLate') return { kind: 'tooLate' };
    return {
      kind: 'show',
      flow: start.flow,
      threeDSServerTransID: creq.threeDSServerTransID,
      acsTransID: creq.acsTransID,
      attemptsLeft: MAX_WRONG_CODES - start.wrongCodes,
    };
  }

  /** The challenge page was submitted. */
  async submitChallenge(
    submission: Submission,
    now: number,
  ): Promise<Refusal | { kind: 'retry'; attemptsLeft: number } | { kind: 'ended'; end: ChallengeEnd }> {
    const outcome = submitChallenge(await this.load(), submission, now, newAuthenticationValue());
    if (outcome.kind === 'refused') return outcome;
    await this.save(outcome.record);
    if (outcome.kind === 'retry') return { kind: 'retry', attemptsLeft: outcome.attemptsLeft };
    return { kind: 'ended', end: challengeEnd(outcome.record) };
  }

  /** A test ends the pending challenge. */
  async endChallenge(
    acsTransID: string,
    result: ControlResult,
    now: number,
  ): Promise<Refusal | { kind: 'ended'; end: ChallengeEnd }> {
    const outcome = endChallengeByControl(await this.load(), acsTransID, result, now, newAuthenticationValue());
    if (outcome.kind === 'refused') return outcome;
    await this.save(outcome.record);
    return { kind: 'ended', end: challengeEnd(outcome.record) };
  }

  /**
   * A CReq of an app's SDK (a compact JWE): the CRes JWE, or an Erro (plain JSON). The key is
   * derived again each time; the decision is made on the record as it stands after the decryption.
   */
  async appCReq(jwe: string, now: number): Promise<{ kind: 'cres'; jwe: string } | { kind: 'erro'; erro: object }> {
    const before = await this.load();
    const ids = before?.ares && before.app ? appIds(before.ares, before.app) : undefined;
    const refuse = (code: ErroCode, description: string) => ({
      kind: 'erro' as const,
      erro: erroMessage(code, description, ids ? { ...ids, messageVersion: before!.ares!.messageVersion } : {}),
    });
    if (!before?.ares || !before.app || !ids) return refuse(ERRO.transactionNotRecognised, 'No app challenge here.');
    if (challengeMessageKid(jwe) !== ids.acsTransID)
      return refuse(ERRO.transactionNotRecognised, "The CReq's kid is not this transaction's acsTransID.");
    const key = await fakeChannelKey(ids.acsTransID, before.app.sdkEphemPubKey, before.app.sdkReferenceNumber);
    const opened = await decryptChallengeMessage(jwe, key);
    if (!opened.ok) return refuse(ERRO.decryptionFailure, `The CReq does not open (${opened.problem}).`);
    const read = readCReq(opened.message, ids, before.ares.messageVersion);
    if (!read.ok) return refuse(read.code, read.description);
    const step = appChallengeStep(await this.load(), read.creq, now, newAuthenticationValue());
    if (step.kind === 'erro') return refuse(step.code, step.description);
    await this.save(step.record);
    const cres = cresMessage(ids, before.ares.messageVersion, step.acsCounter, step.state);
    return { kind: 'cres', jwe: await encryptChallengeMessage(cres, key, ids.acsTransID) };
  }

  /** A /postauth call for this transaction. */
  async postauth(threeDSServerTransID: string, now: number): Promise<PostauthAnswer> {
    const { record, answer } = fetchResult(await this.load(), threeDSServerTransID, now, newAuthenticationValue());
    await this.save(record);
    return answer;
  }

  /** All the fake knows of the transaction, for tests. */
  async snapshot(): Promise<TransactionRecord | undefined> {
    return this.load();
  }
}

function isAppAReq(body: unknown): body is Record<string, unknown> {
  return isObject(body) && body['deviceChannel'] === '01';
}

/** What the DS and ACS make of an app AReq before the checks: its SDK fields, and a challenge's signed content. */
async function appAReqFacts(areq: Record<string, unknown>, origin: string, acsTransID: string): Promise<AppAReqFacts> {
  const faults = await sdkFieldFaults(areq);
  const id = areq['threeDSServerTransID'];
  const key = areq['sdkEphemPubKey'];
  if (faults.invalid.length > 0 || typeof id !== 'string' || !isP256PublicJwk(key)) return faults;
  return { ...faults, acsSignedContent: await fakeAcsSignedContent(acsAppCReqUrl(origin, id), acsTransID, key) };
}

function appIds(ares: AuthenticationResponse, app: AppChallengeRecord): ChallengeIds {
  return { threeDSServerTransID: ares.threeDSServerTransID, acsTransID: ares.acsTransID, sdkTransID: app.sdkTransID };
}

/** The end of a challenge as the browser (or the control route) carries it on. */
function challengeEnd(record: TransactionRecord): ChallengeEnd {
  const notificationURL = record.areq?.['notificationURL'];
  const sessionData = record.challenge?.threeDSSessionData;
  if (!record.rreq || record.challenge?.endedAt === undefined) throw new Error('the challenge has not ended');
  return {
    rreq: record.rreq,
    ...(record.challenge.cres ? { cres: record.challenge.cres } : {}),
    notificationURL: typeof notificationURL === 'string' ? notificationURL : '',
    ...(sessionData !== undefined ? { threeDSSessionData: sessionData } : {}),
  };
}
