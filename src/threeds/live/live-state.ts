import type { ExemptionAsked } from '../exemptions';
import type { AuthenticationResponse } from './emv-messages';
import { MAX_AUTHENTICATE_TIMEOUT_MS } from '../../config/settings';

/**
 * What a live 3-D Secure transaction's object keeps and answers (docs/threeds.md "Live"): the
 * types the object (src/threeds/transaction/live-transaction.ts) and the steps that call it share,
 * and the windows of its authentication. Imports no object and no step: both import this.
 */

/**
 * After its AReq went out, how long a run may go on without an answer recorded: the longest
 * provider deadline, and a margin. An AReq sent that long ago with no answer, or sent by an object
 * instance that is gone, has an unknown outcome: the object's alarm marks it lost.
 */
export const AREQ_ANSWER_WINDOW_MS = MAX_AUTHENTICATE_TIMEOUT_MS + 5_000;

/**
 * The longest authenticate's run in the object may take with a provider deadline of
 * `authenticateTimeoutMs`: preparing the card again (at most 5 s), the rest of the 3DS Method's
 * 10 s, then the AReq. The Worker's call to the object waits that long on top of its usual deadline.
 */
export function liveRunMs(authenticateTimeoutMs: number): number {
  return Math.min(5_000, authenticateTimeoutMs) + METHOD_WINDOW_MS + authenticateTimeoutMs;
}

/** Pauses between asks for an RReq while the provider has none yet: about 1.75 s in all. */
export const RESULT_PENDING_PAUSES_MS: readonly number[] = [250, 500, 1_000];

/**
 * The longest the object's fetch of an RReq may take with a provider deadline of
 * `authenticateTimeoutMs` (each ask within min(5 s, it), and the pauses between them): the wait
 * of the Worker's call that asks the object for a live result, on top of its usual deadline.
 */
export function resultFetchMs(authenticateTimeoutMs: number): number {
  const ask = Math.min(5_000, authenticateTimeoutMs);
  return (RESULT_PENDING_PAUSES_MS.length + 1) * ask + RESULT_PENDING_PAUSES_MS.reduce((a, b) => a + b, 0);
}

/** EMV gives the 3DS Method 10 s from its start to complete (the wait authenticate may do here). */
export const METHOD_WINDOW_MS = 10_000;

/**
 * A card prepared at the provider; or one no Directory Server knows (not enrolled); or one that
 * cannot be authenticated (the provider refused to prepare it, or its ACS and Directory Server
 * share no protocol version with this service: `why` says which).
 */
export type PreparedCard =
  | {
      kind: 'prepared';
      threeDSServerTransID: string;
      preparedAt: number;
      /** Keyed hash of the card number it was prepared for (never the number). */
      cardHash: string;
      version: string;
      methodUrl?: string;
    }
  | { kind: 'notEnrolled'; preparedAt: number; cardHash: string }
  | { kind: 'unsupported'; why: string; preparedAt: number; cardHash: string };

export interface MethodRecord {
  url?: string;
  startedAt?: number;
  completedAt?: number;
}

/** What a run needs to go on: what the card's preparation, the browser and its method left. */
export interface LiveRun {
  kind: 'run';
  prepared?: PreparedCard;
  method: MethodRecord;
  facts: Record<string, unknown>;
}

/** How authenticate's run starts in the object (`LiveTransaction.start`). */
export type LiveStart =
  | LiveRun
  /** This body's answer, decided before (byte for byte what the first request got). */
  | { kind: 'answered'; answer: Record<string, unknown>; decidedAt: number }
  /** Another body is authenticating (or authenticated) this transaction. */
  | { kind: 'conflict' }
  /** An AReq of this body may have reached the DS but its answer is unknown: it is never sent again. */
  | { kind: 'lost'; decidedAt: number }
  /** This body's run is under way in this object instance: wait for it. */
  | { kind: 'running' };

/**
 * A challenge the ARes asked for (or a decoupled authentication): what the relay, the
 * notification and verification need. Only a browser's has a page (`acsURL`, `creq`, `returnUrl`:
 * {@link challengePage}); an app's SDK and a decoupled issuer need none.
 */
export interface LiveChallenge {
  reference: string;
  /** The merchant's transactionReference, which the answers repeat. */
  transactionReference: string;
  /** A browser's: where the challenge page relays the CReq. */
  acsURL?: string;
  acsTransID: string;
  dsTransID: string;
  threeDSServerTransID: string;
  messageVersion: string;
  /** A browser's: base64url (no padding) of the CReq. */
  creq?: string;
  aresAt: number;
  /** A browser's: where the challenge page returns. */
  returnUrl?: string;
  brands: string[];
  /** The exemption the AReq carried (src/threeds/exemptions.ts): the result says what became of it. */
  exemption?: ExemptionAsked;
  /**
   * A decoupled authentication (ARes D, docs/threeds.md "Decoupled"): no page, no CReq; the
   * issuer's RReq may come until `expiresAt`.
   */
  decoupled?: { expiresAt: number };
  /**
   * An app's challenge (docs/threeds.md "The app channel"): its SDK talks to the ACS directly; the
   * challenge ends by `expiresAt` (the SDK's maxTimeout after the ARes) and its RReq says how.
   */
  app?: { expiresAt: number };
}

/**
 * What every live challenge keeps (a browser's, an app's, a decoupled one): its reference, the
 * merchant's transaction, the ids of the ARes that started it and when, and the card's brands.
 */
export function challengeBase(
  ares: Pick<AuthenticationResponse, 'acsTransID' | 'dsTransID' | 'threeDSServerTransID' | 'messageVersion'>,
  o: { reference: string; transactionReference: string; aresAt: number; brands: readonly string[] },
): LiveChallenge {
  const { acsTransID, dsTransID, threeDSServerTransID, messageVersion } = ares;
  return {
    reference: o.reference,
    transactionReference: o.transactionReference,
    acsTransID,
    dsTransID,
    threeDSServerTransID,
    messageVersion,
    aresAt: o.aresAt,
    brands: [...o.brands],
  };
}

/** A browser challenge's page: the CReq the challenge page relays to the ACS, and where it returns. */
export interface ChallengePage {
  acsURL: string;
  creq: string;
  returnUrl: string;
}

/**
 * The page of a browser's challenge; undefined for an app's or a decoupled authentication, which
 * have none (before 2026-11-29 a decoupled one was stored with empty `acsURL` and `creq`).
 */
export function challengePage(challenge: LiveChallenge): ChallengePage | undefined {
  const { acsURL, creq, returnUrl } = challenge;
  return acsURL && creq && returnUrl ? { acsURL, creq, returnUrl } : undefined;
}

/** The challenge page's relay: the page to relay, once shown; else why not. */
export type LiveShow = { kind: 'shown'; page: ChallengePage } | { kind: 'used' | 'ended' | 'unknown' };

/** A challenge's one result: the answer verification gives, decided once. */
export interface LiveResult {
  answer: Record<string, unknown>;
  decidedAt: number;
}

/** verification's live result: the one result, or a decoupled authentication still waiting for it. */
export type LiveVerified = LiveResult | { kind: 'pending'; answer: Record<string, unknown> };

/** What a fetch of a challenge's RReq gave: the recorded result, or why there is none yet. */
export type FetchedResult = { kind: 'decided'; result: LiveResult } | { kind: 'undecided'; why: 'pending' | 'gone' };
