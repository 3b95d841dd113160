import type { Brand, FundingType } from '../bin/model';
import type { SealedValue } from '../tokens/token-crypto';
import { deleteRecord, readRecord, writeRecord, type Stored } from './kv';

/**
 * Tokens in KV (see storage-schema.md). A token record is written once by POST /tokens and
 * deleted by DELETE; the card number and cardholder name inside it are sealed (AES-GCM), and the
 * de-duplication key holds an HMAC of the card, never the number.
 */

export const TOKEN_PREFIX = 'token:';
export const TOKEN_CARD_PREFIX = 'token-card:';

export const tokenKey = (tokenId: string): string => `${TOKEN_PREFIX}${tokenId}`;
export const tokenCardKey = (username: string, fingerprint: string): string => `${TOKEN_CARD_PREFIX}${username}:${fingerprint}`;

export interface TokenRecord extends Stored {
  tokenId: string;
  /** The merchant that created it: nobody else sees it. */
  username: string;
  /** Sealed JSON `{cardNumber, cardHolderName?}`. */
  sealed: SealedValue;
  fingerprint: string;
  /** First 6 and last 4 digits, the rest masked. */
  maskedCardNumber: string;
  cardExpiryDate: { month: number; year: number };
  bin: string;
  brands: readonly Brand[];
  fundingType?: FundingType;
  countryCode?: string;
  description?: string;
  /** ISO 8601; the same instant as expiresAt. */
  tokenExpiryDateTime: string;
  createdAt: number;
}

export interface TokenCardRecord extends Stored {
  tokenId: string;
}

export class TokenStore {
  constructor(private readonly kv: KVNamespace) {}

  get = (tokenId: string): Promise<TokenRecord | undefined> => readRecord(this.kv, tokenKey(tokenId));
  put = (record: TokenRecord): Promise<void> => writeRecord(this.kv, tokenKey(record.tokenId), record);
  delete = (tokenId: string): Promise<void> => deleteRecord(this.kv, tokenKey(tokenId));

  getCard = (username: string, fingerprint: string): Promise<TokenCardRecord | undefined> =>
    readRecord(this.kv, tokenCardKey(username, fingerprint));
  putCard = (username: string, fingerprint: string, r: TokenCardRecord): Promise<void> =>
    writeRecord(this.kv, tokenCardKey(username, fingerprint), r);
  deleteCard = (username: string, fingerprint: string): Promise<void> => deleteRecord(this.kv, tokenCardKey(username, fingerprint));
}
