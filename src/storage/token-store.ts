import type { Brand, FundingType } from '../bin/model';
import type { SealedValue } from '../tokens/token-crypto';
import { readRecord, writeRecord, type Stored } from './kv';

/**
 * Tokens in KV (see storage-schema.md). A token record is written once by POST /tokens, under
 * the single-flight lease of the card's Durable Object (`TokenGuard`), which also decides which
 * token stands for a card. DELETE replaces the record by a tombstone, so that a retried DELETE
 * still ends in success. The card number and cardholder name inside a record are sealed
 * (AES-GCM); no key holds the number.
 */

export const TOKEN_PREFIX = 'token:';

export const tokenKey = (tokenId: string): string => `${TOKEN_PREFIX}${tokenId}`;

/** A deleted token is remembered this long, so a retried DELETE answers 204 rather than 404. */
export const TOMBSTONE_TTL_MS = 24 * 60 * 60 * 1000;

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
}

/** What is left of a deleted token: no card data at all. */
export interface TokenTombstone extends Stored {
  tokenId: string;
  username: string;
  deletedAt: number;
}

export function isTombstone(r: TokenRecord | TokenTombstone): r is TokenTombstone {
  return 'deletedAt' in r;
}

export class TokenStore {
  constructor(private readonly kv: KVNamespace) {}

  get = (tokenId: string, now: number): Promise<TokenRecord | TokenTombstone | undefined> =>
    readRecord(this.kv, tokenKey(tokenId), now);
  put = (record: TokenRecord | TokenTombstone, now: number): Promise<void> =>
    writeRecord(this.kv, tokenKey(record.tokenId), record, now);
}
