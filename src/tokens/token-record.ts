import type { TokenRecord } from '../records/token-record';
import { readRecord, type KvAccess } from '../storage/kv';

/**
 * Tokens in KV (docs/storage.md): `token:<id>` is the projection of a token that its owning
 * object (src/tokens/token-group.ts) writes, and deletes when the token is deleted; no
 * Worker code writes it. One reader only, which tolerates staleness: `GET /tokens?tokenId=` with no
 * namespace, to find the token's object, which then answers (token-namespaces.ts). Every other
 * read of a token, panLookup and 3DS by token included, asks its object (the href names it). The
 * card number, cardholder name and billing address inside a record are sealed (AES-GCM); no key
 * holds the number. The record's shape is in src/records/token-record.ts, below both the cards and
 * the tokens that read it.
 */

export const TOKEN_PREFIX = 'token:';
export const tokenKey = (tokenId: string): string => `${TOKEN_PREFIX}${tokenId}`;

/** Reads the projections of tokens: a token's record as its object last wrote it (it may lag). */
export class TokenStore {
  constructor(private readonly kv: KvAccess) {}

  /** The token's record as KV has it, or undefined (unknown, deleted, expired, or not there yet). */
  get(tokenId: string, now: number): Promise<TokenRecord | undefined> {
    return readRecord<TokenRecord>(this.kv, tokenKey(tokenId), now);
  }
}
