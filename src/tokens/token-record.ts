import type { Brand, FundingType } from '../bin/model';
import { readRecord, type KvAccess, type Stored } from '../storage/kv';

/**
 * Tokens in KV (docs/storage.md): `token:<id>` is the projection of a token that its owning
 * object (src/tokens/token-group.ts) writes, and deletes when the token is deleted; no
 * Worker code writes it. Only readers that tolerate staleness read it (panLookup by token). The
 * card number, cardholder name and billing address inside a record are sealed (AES-GCM); no key
 * holds the number.
 */

export const TOKEN_PREFIX = 'token:';
export const tokenKey = (tokenId: string): string => `${TOKEN_PREFIX}${tokenId}`;

/** A value sealed with AES-256-GCM under a named key (src/cards/card-crypto.ts). */
export interface SealedValue {
  /** Key id. */
  kid: string;
  /** base64 of the 12-byte IV. */
  iv: string;
  /** base64 of ciphertext and tag. */
  ct: string;
}

export interface TokenRecord extends Stored {
  tokenId: string;
  /** The merchant that created it: nobody else sees it. */
  username: string;
  /** Sealed JSON `{cardNumber, cardHolderName?, billingAddress?}`. */
  sealed: SealedValue;
  /** Keyed hash of the card number: one live token per card (and namespace). */
  fingerprint: string;
  /** First 6 (fewer for a short number) and last 4 digits, the rest masked. */
  maskedCardNumber: string;
  cardExpiryDate: { month: number; year: number };
  /** The first 6 digits, for a number of 15 digits or more (shorter ones would give too much away). */
  bin?: string;
  brands: readonly Brand[];
  fundingType?: FundingType;
  countryCode?: string;
  description: string;
  namespace?: string;
  schemeTransactionReference?: string;
  /** ISO 8601, whole seconds; the same instant as expiresAt. */
  tokenExpiryDateTime: string;
  createdAt: number;
  /**
   * The record's version: 1 when created, one more at each update or extension (absent in
   * records written before updates existed: 1).
   */
  version?: number;
  /** When the token was last updated (ms). */
  updatedAt?: number;
  /**
   * When the token's lifetime last started: its creation, or its last extension; it is extended
   * once used past half of it (docs/tokens.md "Lifetime").
   */
  lifeStartedAt?: number;
  /** The merchant chose the expiry (`tokenExpiryDateTime`): it is never extended. */
  expiryChosen?: boolean;
  /** The entity that made it: its events name it (`merchant.entity`, docs/events.md). */
  entity?: string;
  /** The base of its href when it was made (PUBLIC_BASE_URL or the request's origin), for its events. */
  hrefBase?: string;
}

/** Reads the projections of tokens: a token's record as its object last wrote it (it may lag). */
export class TokenStore {
  constructor(private readonly kv: KvAccess) {}

  /** The token's record as KV has it, or undefined (unknown, deleted, expired, or not there yet). */
  get(tokenId: string, now: number): Promise<TokenRecord | undefined> {
    return readRecord<TokenRecord>(this.kv, tokenKey(tokenId), now);
  }
}
