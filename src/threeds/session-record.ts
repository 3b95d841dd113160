import type { Brand } from '../bin/model';
import type { ChallengeResult } from './challenge-rules';
import type { Stored } from '../storage/kv';

/**
 * The 3DS session record in KV (docs/storage.md lists every key, an example value and its TTL):
 * a projection of the transaction's Durable Object (`ThreeDsTransaction`), the only writer of the key,
 * which writes it after authenticate's answer and again when the challenge ends
 * (docs/storage.md "Projections"). It is for audit and for readers that tolerate staleness: no
 * step reads it, every step asks the object. No key or value holds a full card number: at most
 * the 6-digit BIN.
 */

export const SESSION_PREFIX = '3ds:session:';

/** Sessions live one hour (docs/threeds.md "State"). */
export const SESSION_TTL_MS = 60 * 60 * 1000;
/** A challenge must be completed within 10 minutes of authenticate. */
export const CHALLENGE_TTL_MS = 10 * 60 * 1000;

/** The part of a key that scopes a session to one merchant, entity and transaction reference. */
export interface SessionScope {
  username: string;
  entity: string;
  transactionReference: string;
}

export const sessionKey = (s: SessionScope): string =>
  `${SESSION_PREFIX}${s.username}:${s.entity}:${s.transactionReference}`;

/** What authenticate decided, as verification needs it. */
export interface SessionRecord extends Stored {
  /** When authenticate decided (the claim's time, the same for every identical retry). */
  decidedAt: number;
  brands: Brand[];
  version: string;
  /** The test scenario or risk decision that picked the outcome, for support. */
  scenario: string;
  /** authenticate's answer, as the merchant received it. */
  answer: Record<string, unknown>;
  /** Present when authenticate answered `challenged`. */
  challenge?: {
    reference: string;
    /** What verification answers when the challenge is passed with the right code. */
    onSuccess: string;
    expiresAt: number;
  };
  /** The challenge's one result, once it ended. */
  result?: ChallengeResult;
}
