import type { Brand, FundingType } from '../bin/model';
import { deleteRecord, readRecords, writeRecord, type KvAccess, type Stored } from './kv';

/**
 * Tokens in KV (docs/storage.md). A token record is written by POST /tokens under the
 * single-flight lease of the card's Durable Object (`TokenGuard`), which also decides which token
 * stands for a card. DELETE writes a tombstone under a key of its own, then deletes the record.
 * No token write ever touches the tombstone's key: KV has no compare-and-set, so a record write
 * that lands late (after its request timed out, a retry and a DELETE) can bring the record back,
 * but a token with a tombstone is gone whatever its record says, and the tombstone lives as long
 * as the record could (the token's own end). Both keys are read in one bulk get. The card number,
 * cardholder name and billing address inside a record are sealed (AES-GCM); no key holds the
 * number.
 */

export const TOKEN_PREFIX = 'token:';
export const TOMBSTONE_PREFIX = 'token-deleted:';

export const tokenKey = (tokenId: string): string => `${TOKEN_PREFIX}${tokenId}`;
export const tombstoneKey = (tokenId: string): string => `${TOMBSTONE_PREFIX}${tokenId}`;

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
  /** Keyed hash of the card number: names the card's TokenGuard. */
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
   * records written before updates existed: 1). The card's TokenGuard only accepts the next one.
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
}

/** What is left of a deleted token: no card data at all. */
export interface TokenTombstone extends Stored {
  tokenId: string;
  username: string;
  deletedAt: number;
  /** The namespace the token was in: a retried DELETE frees its place there again. */
  namespace?: string;
}

export function isTombstone(r: TokenRecord | TokenTombstone): r is TokenTombstone {
  return 'deletedAt' in r;
}

export class TokenStore {
  constructor(private readonly kv: KvAccess) {}

  /** The token's tombstone if it was deleted, else its record, else undefined. */
  async get(tokenId: string, now: number): Promise<TokenRecord | TokenTombstone | undefined> {
    const { tombstone, record } = await this.keys(tokenId, now);
    return tombstone ?? record;
  }

  /** Both of the token's keys as they are: a deletion left unfinished has its tombstone and its record. */
  async keys(tokenId: string, now: number): Promise<{ tombstone?: TokenTombstone; record?: TokenRecord }> {
    const [tombstone, record] = await readRecords<TokenRecord | TokenTombstone>(
      this.kv,
      [tombstoneKey(tokenId), tokenKey(tokenId)],
      now,
    );
    return {
      ...(tombstone !== undefined ? { tombstone: tombstone as TokenTombstone } : {}),
      ...(record !== undefined ? { record: record as TokenRecord } : {}),
    };
  }

  /** Several tokens in one bulk get (tombstones and records): each its tombstone, record or undefined. */
  async getMany(tokenIds: readonly string[], now: number): Promise<(TokenRecord | TokenTombstone | undefined)[]> {
    if (tokenIds.length === 0) return [];
    const keys = tokenIds.flatMap((id) => [tombstoneKey(id), tokenKey(id)]);
    const found = await readRecords<TokenRecord | TokenTombstone>(this.kv, keys, now);
    return tokenIds.map((_, i) => found[2 * i] ?? found[2 * i + 1]);
  }

  put(record: TokenRecord, now: number): Promise<void> {
    return writeRecord(this.kv, tokenKey(record.tokenId), record, now);
  }

  /**
   * Deletes a token: its tombstone first (from then on the token is gone), then its record (the
   * card data). Both steps are idempotent, so a retry after either failure completes it.
   */
  async retire(tombstone: TokenTombstone, now: number): Promise<void> {
    await writeRecord(this.kv, tombstoneKey(tombstone.tokenId), tombstone, now);
    await deleteRecord(this.kv, tokenKey(tombstone.tokenId));
  }

  /** Deletes what is left of a record of a token already gone (its tombstone stays). */
  forgetRecord(tokenId: string): Promise<void> {
    return deleteRecord(this.kv, tokenKey(tokenId));
  }
}
