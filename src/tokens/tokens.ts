import type { BinRecord } from '../bin/model';
import { TokenStore, type TokenRecord } from '../storage/token-store';
import { cardFingerprint, open, seal, type TokenKeys } from './token-crypto';

/**
 * The token resource (CONTRACT.md §4): tokens stand for a card of one merchant. Pure rules plus
 * the store; no Request or Response here.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
/** Default token lifetime: 7 days in `test`, 4 years in `live`. */
export const DEFAULT_TOKEN_TTL_MS = { test: 7 * DAY_MS, live: Math.round(4 * 365.25 * DAY_MS) } as const;
/** Tokens may not be asked to live longer than this. */
export const MAX_TOKEN_TTL_MS = DEFAULT_TOKEN_TTL_MS.live;

export interface TokenContext {
  store: TokenStore;
  keys: TokenKeys;
  environment: string;
  now: number;
}

export interface CardDetails {
  cardNumber: string;
  cardExpiryDate: { month: number; year: number };
  cardHolderName?: string;
}

export interface NewToken {
  card: CardDetails;
  /** What the BIN index says of the card. */
  binRecord: BinRecord | undefined;
  description?: string;
  /** Requested expiry (already checked to be in the future and within the maximum). */
  tokenExpiry?: Date;
}

/** The end of the card's expiry month (UTC): a card is valid through its whole expiry month. */
export function cardValidUntil(expiry: { month: number; year: number }): number {
  return Date.UTC(expiry.year, expiry.month, 1) - 1;
}

export function cardHasExpired(expiry: { month: number; year: number }, now: number): boolean {
  return now > cardValidUntil(expiry);
}

/** A token id: 24 characters of base64url (144 random bits). */
function newTokenId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_');
}

/** The record's own additional data for AES-GCM: a sealed card opens only in its own record. */
const aadOf = (r: Pick<TokenRecord, 'tokenId' | 'username'>): string => `${r.username}\u0000${r.tokenId}`;

/**
 * Creates a token, or finds the merchant's live token for the same card (number and expiry
 * date). `created` tells which, for 201 versus 200.
 */
export async function createToken(ctx: TokenContext, username: string, input: NewToken): Promise<{ record: TokenRecord; created: boolean }> {
  const fingerprint = await cardFingerprint(ctx.keys, username, input.card.cardNumber, input.card.cardExpiryDate);
  // Read-then-write without compare-and-set (KV has none): two identical requests racing in
  // different locations may both create a token; both work, and later requests find one of them.
  const existing = await ctx.store.getCard(username, fingerprint);
  if (existing) {
    const record = await findToken(ctx, username, existing.tokenId);
    if (record) return { record, created: false };
  }
  const tokenId = newTokenId();
  const expiresAt = input.tokenExpiry?.getTime() ?? ctx.now + (ctx.environment === 'live' ? DEFAULT_TOKEN_TTL_MS.live : DEFAULT_TOKEN_TTL_MS.test);
  const { cardNumber, cardHolderName } = input.card;
  const r = input.binRecord;
  const record: TokenRecord = {
    tokenId,
    username,
    sealed: await seal(ctx.keys, JSON.stringify({ cardNumber, cardHolderName }), aadOf({ tokenId, username })),
    fingerprint,
    maskedCardNumber: `${cardNumber.slice(0, 6)}${'*'.repeat(cardNumber.length - 10)}${cardNumber.slice(-4)}`,
    cardExpiryDate: input.card.cardExpiryDate,
    bin: cardNumber.slice(0, 6),
    brands: r?.brands ?? [],
    ...(r?.fundingType ? { fundingType: r.fundingType } : {}),
    ...(r?.countryCode ? { countryCode: r.countryCode } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    tokenExpiryDateTime: new Date(expiresAt).toISOString(),
    createdAt: ctx.now,
    expiresAt,
  };
  await ctx.store.put(record);
  await ctx.store.putCard(username, fingerprint, { tokenId, expiresAt });
  return { record, created: true };
}

/** The merchant's live token, or undefined (unknown, deleted, expired or another merchant's). */
export async function findToken(ctx: TokenContext, username: string, tokenId: string): Promise<TokenRecord | undefined> {
  const record = await ctx.store.get(tokenId);
  return record && record.username === username ? record : undefined;
}

/** Deletes the merchant's token; false when there was none to delete. */
export async function deleteToken(ctx: TokenContext, username: string, tokenId: string): Promise<boolean> {
  const record = await findToken(ctx, username, tokenId);
  if (!record) return false;
  await ctx.store.delete(tokenId);
  await ctx.store.deleteCard(username, record.fingerprint);
  return true;
}

/** The card behind a token, decrypted. */
export async function openCard(ctx: TokenContext, record: TokenRecord): Promise<CardDetails> {
  const { cardNumber, cardHolderName } = JSON.parse(await open(ctx.keys, record.sealed, aadOf(record))) as { cardNumber: string; cardHolderName?: string };
  return { cardNumber, cardExpiryDate: record.cardExpiryDate, ...(cardHolderName !== undefined ? { cardHolderName } : {}) };
}

/** The token resource on the wire (CONTRACT.md §4). */
export function tokenResource(record: TokenRecord, cardHolderName: string | undefined, href: string): Record<string, unknown> {
  return {
    tokenPaymentInstrument: { type: 'card/tokenized', href },
    tokenId: record.tokenId,
    tokenExpiryDateTime: record.tokenExpiryDateTime,
    ...(record.description !== undefined ? { description: record.description } : {}),
    paymentInstrument: {
      type: 'card/masked',
      cardNumber: record.maskedCardNumber,
      cardExpiryDate: record.cardExpiryDate,
      ...(cardHolderName !== undefined ? { cardHolderName } : {}),
      bin: record.bin,
      ...(record.brands[0] ? { brand: record.brands[0] } : {}),
      ...(record.fundingType ? { fundingType: record.fundingType } : {}),
      ...(record.countryCode ? { countryCode: record.countryCode } : {}),
    },
    _links: { self: { href } },
  };
}
