import type { EmvVersion } from '../emv/emv-rules';
import type { P256PublicJwk } from '../emv/secure-channel';
import type { AuthenticationResponse, ChallengeResponse, ErrorMessage, ResultsRequest } from './messages';
import type { Scenario } from './scenarios';

/**
 * What the fake remembers of one transaction (one Durable Object, keyed by threeDSServerTransID),
 * and what the control route shows of it. Every time is on the fake's clock.
 */

export interface MethodRecord {
  /** Whether the card range named a 3DS Method URL. */
  offered: boolean;
  invokedAt?: number;
  /** The version whose method URL was invoked, where each version has its own. */
  invokedVersion?: EmvVersion;
  /** When the ACS served the page that notifies the requestor. */
  completedAt?: number;
}

export interface ChallengeRecord {
  /** When the (first) CReq arrived. */
  creqAt?: number;
  threeDSSessionData?: string;
  /** Wrong one-time codes so far. */
  wrongCodes: number;
  /** Submissions of the challenge form (the RReq's interactionCounter). */
  interactions: number;
  endedAt?: number;
  /** The final CRes, which the browser carries to the requestor. */
  cres?: ChallengeResponse;
}

/**
 * An app challenge (AReq deviceChannel 01, ARes C): what the ACS keeps of the SDK (its public key
 * and reference number: the channel's key is derived again for each CReq, never stored) and the
 * next counter each way.
 */
export interface AppChallengeRecord {
  sdkTransID: string;
  sdkEphemPubKey: P256PublicJwk;
  sdkReferenceNumber: string;
  /** The AReq's sdkMaxTimeout: the challenge ends this many minutes after the ARes. */
  maxTimeoutMinutes: number;
  nextSdkCounter: string;
  nextAcsCounter: string;
}

export interface TransactionRecord {
  threeDSServerTransID: string;
  /** The card number of /preauth: a fake may keep it, a real provider's sandbox never sees a real one. */
  acctNumber: string;
  /** The card number's last four digits, which chose the scenario. */
  scenario: Scenario['code'];
  preparedAt: number;
  method: MethodRecord;
  authCalls: number;
  /** The AReq the DS accepted (answered with an ARes, or with its timeout). */
  areq?: Record<string, unknown>;
  ares?: AuthenticationResponse;
  aresAt?: number;
  /** The last Erro /auth answered for this transaction. */
  lastErro?: ErrorMessage;
  challenge?: ChallengeRecord;
  /** An app challenge's secure channel (app-challenge-flow.ts). */
  app?: AppChallengeRecord;
  rreq?: ResultsRequest;
  rreqAt?: number;
  postauthCalls: number;
  /** /postauth calls after the challenge ended (a late RReq counts them). */
  postauthCallsAfterEnd: number;
}

/** A transaction just prepared. */
export function preparedTransaction(p: {
  threeDSServerTransID: string;
  acctNumber: string;
  scenario: Scenario;
  now: number;
}): TransactionRecord {
  return {
    threeDSServerTransID: p.threeDSServerTransID,
    acctNumber: p.acctNumber,
    scenario: p.scenario.code,
    preparedAt: p.now,
    method: { offered: p.scenario.method !== 'none' },
    authCalls: 0,
    postauthCalls: 0,
    postauthCallsAfterEnd: 0,
  };
}
