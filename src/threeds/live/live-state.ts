import { MAX_AUTHENTICATE_TIMEOUT_MS, MAX_STORAGE_TIMEOUT_MS } from '../../config/settings';

/**
 * What a live 3-D Secure transaction's object keeps and answers (docs/threeds.md "Live"): the
 * types the object (src/threeds/transaction/live-transaction.ts) and the steps that call it share,
 * and the windows of its authentication. Imports no object and no step: both import this.
 */
/** How long the holder of the authentication lease may take: prepare, the method's 10 s, the AReq. */
export const LIVE_AUTH_LEASE_MS = 40_000;

/**
 * The lease once the AReq goes out (`sending` renews it): the longest provider deadline, then
 * recording its answer (up to three tries, each within the longest storage deadline), and a margin.
 * Shorter, and an identical request could find the lease run out while the ARes is on its way,
 * and mark the authentication lost under an answer the holder then gives.
 */
export const LIVE_SENDING_LEASE_MS = MAX_AUTHENTICATE_TIMEOUT_MS + 3 * MAX_STORAGE_TIMEOUT_MS + 5_000;

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

/** What the lease holder needs to go on. */
export interface LiveRun {
  kind: 'run';
  prepared?: PreparedCard;
  method: MethodRecord;
  facts: Record<string, unknown>;
}

export type LiveBegin =
  | LiveRun
  /** This body's answer, decided before (byte for byte what the first request got). */
  | { kind: 'answered'; answer: Record<string, unknown>; decidedAt: number }
  /** Another body is authenticating (or authenticated) this transaction. */
  | { kind: 'conflict' }
  /** An AReq of this body may have reached the DS but its answer is unknown: it is never sent again. */
  | { kind: 'lost'; decidedAt: number }
  /** The caller gave up while it waited here (`abandon`): it takes nothing, and nobody hears this. */
  | { kind: 'abandoned' };

/** A challenge the ARes asked for: what the relay, the notification and verification need. */
export interface LiveChallenge {
  reference: string;
  /** The merchant's transactionReference, which the answers repeat. */
  transactionReference: string;
  acsURL: string;
  acsTransID: string;
  dsTransID: string;
  threeDSServerTransID: string;
  messageVersion: string;
  /** base64url (no padding) of the CReq. */
  creq: string;
  aresAt: number;
  returnUrl: string;
  brands: string[];
}

export type LiveShow = { kind: 'shown'; challenge: LiveChallenge } | { kind: 'used' | 'ended' | 'unknown' };

/** A challenge's one result: the answer verification gives, decided once. */
export interface LiveResult {
  answer: Record<string, unknown>;
  decidedAt: number;
}
