import type { Brand } from '../bin/model';
import { readRecord, writeRecord, type Stored } from './kv';

/**
 * 3DS session state in KV (storage-schema.md lists every key, an example value and its TTL).
 *
 * Deployed, the merchant's server and the cardholder's browser reach different Cloudflare
 * locations, and KV is only eventually consistent between them. So each step writes its own
 * write-once key instead of rewriting one shared record from two places:
 *
 * - deviceDataInitialize (merchant server) writes INIT;
 * - the DDC page (browser) writes DDC under the SessionId it hands the browser;
 * - authenticate (merchant server) writes AUTH;
 * - the challenge page (browser) writes CHALLENGE_JWT when it first shows a challenge,
 *   CHALLENGE_STATE once per submitted form (so an earlier form cannot be replayed to reset the
 *   attempt count, which travels in the signed form field, never in KV), then CHALLENGE_RESULT
 *   once, when the challenge ends;
 * - verification (merchant server) writes VERIFICATION once it has a final answer.
 *
 * No key or value holds a full card number: at most the 6-digit BIN.
 */

export const INIT_PREFIX = '3ds:init:';
export const DDC_PREFIX = '3ds:ddc:';
export const AUTH_PREFIX = '3ds:auth:';
export const CHALLENGE_JWT_PREFIX = '3ds:challenge-jwt:';
export const CHALLENGE_STATE_PREFIX = '3ds:challenge-state:';
export const CHALLENGE_RESULT_PREFIX = '3ds:challenge-result:';
export const VERIFICATION_PREFIX = '3ds:verification:';

/** Sessions live one hour (CONTRACT.md §5). */
export const SESSION_TTL_MS = 60 * 60 * 1000;
/** A challenge must be completed within 10 minutes of authenticate. */
export const CHALLENGE_TTL_MS = 10 * 60 * 1000;

/** The part of a key that scopes a session to one merchant, entity and transaction reference. */
export interface SessionScope {
  username: string;
  entity: string;
  transactionReference: string;
}

// Usernames cannot contain ":" and entities are letters, digits and spaces, so the scope is
// unambiguous even though the transaction reference (last) may contain ":".
const scoped = (prefix: string, s: SessionScope): string => `${prefix}${s.username}:${s.entity}:${s.transactionReference}`;
export const initKey = (s: SessionScope): string => scoped(INIT_PREFIX, s);
export const authKey = (s: SessionScope): string => scoped(AUTH_PREFIX, s);
export const verificationKey = (s: SessionScope): string => scoped(VERIFICATION_PREFIX, s);
export const ddcKey = (sessionId: string): string => `${DDC_PREFIX}${sessionId}`;
export const challengeJwtKey = (jti: string): string => `${CHALLENGE_JWT_PREFIX}${jti}`;
export const challengeStateKey = (jti: string): string => `${CHALLENGE_STATE_PREFIX}${jti}`;
export const challengeResultKey = (reference: string): string => `${CHALLENGE_RESULT_PREFIX}${reference}`;

/** A stored answer, replayed for an identical retry (same keyed hash of the request). */
export interface StoredAnswer extends Stored {
  requestHash: string;
  response: Record<string, unknown>;
}

export interface InitRecord extends StoredAnswer {
  /** jti of the DDC JWT handed out, to tie a device data collection to this session. */
  ddcJti: string;
}

export interface DdcRecord extends Stored {
  ddcJti: string;
  bin?: string;
  collectedAt: number;
}

export interface AuthRecord extends StoredAnswer {
  brands: Brand[];
  version: string;
  /** Present when authenticate answered `challenged`. */
  challenge?: {
    reference: string;
    /** What verification answers when the challenge is completed with the right code. */
    onSuccess: string;
    expiresAt: number;
  };
}

export interface ChallengeJwtRecord extends Stored {
  usedAt: number;
}

export interface ChallengeResultRecord extends Stored {
  result: 'passed' | 'failed';
  reason: 'code' | 'cancelled' | 'attempts' | 'expired';
  completedAt: number;
}

export type VerificationRecord = StoredAnswer;

/** The 3DS store over one KV namespace. */
export class ThreeDsStore {
  constructor(private readonly kv: KVNamespace) {}

  getInit = (s: SessionScope): Promise<InitRecord | undefined> => readRecord(this.kv, initKey(s));
  putInit = (s: SessionScope, r: InitRecord): Promise<void> => writeRecord(this.kv, initKey(s), r);

  getDdc = (sessionId: string): Promise<DdcRecord | undefined> => readRecord(this.kv, ddcKey(sessionId));
  putDdc = (sessionId: string, r: DdcRecord): Promise<void> => writeRecord(this.kv, ddcKey(sessionId), r);

  getAuth = (s: SessionScope): Promise<AuthRecord | undefined> => readRecord(this.kv, authKey(s));
  putAuth = (s: SessionScope, r: AuthRecord): Promise<void> => writeRecord(this.kv, authKey(s), r);

  getChallengeJwt = (jti: string): Promise<ChallengeJwtRecord | undefined> => readRecord(this.kv, challengeJwtKey(jti));
  putChallengeJwt = (jti: string, r: ChallengeJwtRecord): Promise<void> => writeRecord(this.kv, challengeJwtKey(jti), r);

  getChallengeState = (jti: string): Promise<ChallengeJwtRecord | undefined> => readRecord(this.kv, challengeStateKey(jti));
  putChallengeState = (jti: string, r: ChallengeJwtRecord): Promise<void> => writeRecord(this.kv, challengeStateKey(jti), r);

  getChallengeResult = (reference: string): Promise<ChallengeResultRecord | undefined> =>
    readRecord(this.kv, challengeResultKey(reference));
  putChallengeResult = (reference: string, r: ChallengeResultRecord): Promise<void> =>
    writeRecord(this.kv, challengeResultKey(reference), r);

  getVerification = (s: SessionScope): Promise<VerificationRecord | undefined> => readRecord(this.kv, verificationKey(s));
  putVerification = (s: SessionScope, r: VerificationRecord): Promise<void> => writeRecord(this.kv, verificationKey(s), r);
}
