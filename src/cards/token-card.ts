import type { FieldError } from '../failures';
import type { SealedValue } from '../records/sealed-value';
import type { TokenRecord } from '../records/token-record';
import { open, seal, type TokenKeys } from './card-crypto';

/**
 * The card behind a token (docs/tokens.md): the token href, sealing and opening the card, the
 * card's expiry, and finding a merchant's live token. Card resolution (resolve-card.ts) and the
 * token steps (src/tokens/) both build on it.
 */

/** A billing address as Worldpay's tokens document has it. */
export interface BillingAddress {
  address1: string;
  address2?: string;
  address3?: string;
  postalCode: string;
  city: string;
  state?: string;
  countryCode: string;
}

export interface CardDetails {
  cardNumber: string;
  cardExpiryDate: { month: number; year: number };
  cardHolderName?: string;
  billingAddress?: BillingAddress;
}

/**
 * What a token id in a path or href may look like. Ours are 80 characters of Worldpay's alphabet
 * (src/tokens/token-ids.ts); the pattern is wider, so that an id of another shape answers
 * 404, not 400.
 */
export const TOKEN_ID = /^[A-Za-z0-9_-]{1,256}$/;

/** The token id of an href of this service's token resource, or undefined if it is not one. */
export function tokenIdFromHref(href: string, baseUrl: string): string | undefined {
  const prefix = `${baseUrl}/tokens/`;
  if (!href.startsWith(prefix)) return undefined;
  const id = href.slice(prefix.length);
  return TOKEN_ID.test(id) ? id : undefined;
}

/** The field error for a token href that is not this service's token resource. */
export function foreignHrefError(baseUrl: string, jsonPath: string): FieldError {
  return {
    errorName: 'fieldHasInvalidValue',
    message: `Expected a token href of this service (${baseUrl}/tokens/<id>).`,
    jsonPath,
  };
}

/** The end of the card's expiry month (UTC): a card is valid through its whole expiry month. */
export function cardValidUntil(expiry: { month: number; year: number }): number {
  return Date.UTC(expiry.year, expiry.month, 1) - 1;
}

export function cardHasExpired(expiry: { month: number; year: number }, now: number): boolean {
  return now > cardValidUntil(expiry);
}

/** The record's own additional data for AES-GCM: a sealed card opens only in its own record. */
const aadOf = (r: Pick<TokenRecord, 'tokenId' | 'username'>): string => `${r.username}\u0000${r.tokenId}`;

export function sealCard(
  keys: TokenKeys,
  card: CardDetails,
  r: Pick<TokenRecord, 'tokenId' | 'username'>,
): Promise<SealedValue> {
  const { cardNumber, cardHolderName, billingAddress } = card;
  return seal(keys, JSON.stringify({ cardNumber, cardHolderName, billingAddress }), aadOf(r));
}

/** The card behind a token, decrypted. */
export async function openCard(keys: TokenKeys, record: TokenRecord): Promise<CardDetails> {
  const opened = JSON.parse(await open(keys, record.sealed, aadOf(record))) as Omit<CardDetails, 'cardExpiryDate'>;
  return {
    cardNumber: opened.cardNumber,
    cardExpiryDate: record.cardExpiryDate,
    ...(opened.cardHolderName !== undefined ? { cardHolderName: opened.cardHolderName } : {}),
    ...(opened.billingAddress !== undefined ? { billingAddress: opened.billingAddress } : {}),
  };
}
