import type { TokenRecord } from '../records/token-record';
import { UPDATE_PATHS } from './update-paths';
import type { BillingAddress, CardDetails } from '../cards/token-card';

/**
 * The token resource on the wire, in the shape of Worldpay's tokens document: the card masked,
 * `tokenId` in Worldpay's alphabet, a `description` always, and the `tokens:token` link. A 409
 * adds `conflicts`: the details this request sent that differ from the token's.
 */

/** A token as answers show it: the record without the sealed card. */
export type TokenView = Omit<TokenRecord, 'sealed'>;

/** The funding types Worldpay's token answer has room for (at most 7 characters). */
const TOKEN_FUNDING_TYPES = new Set(['credit', 'debit', 'prepaid']);

export function tokenResource(
  token: TokenView,
  card: Pick<CardDetails, 'cardHolderName' | 'billingAddress'>,
  href: string,
): Record<string, unknown> {
  return {
    tokenPaymentInstrument: { type: 'card/tokenized', href },
    tokenId: token.tokenId,
    description: token.description,
    tokenExpiryDateTime: token.tokenExpiryDateTime,
    ...(token.namespace !== undefined ? { namespace: token.namespace } : {}),
    paymentInstrument: {
      type: 'card/masked',
      cardNumber: token.maskedCardNumber,
      cardExpiryDate: token.cardExpiryDate,
      ...(card.cardHolderName !== undefined ? { cardHolderName: card.cardHolderName } : {}),
      ...(token.bin !== undefined ? { bin: token.bin } : {}),
      ...(token.brands[0] ? { brand: token.brands[0] } : {}),
      ...(token.fundingType && TOKEN_FUNDING_TYPES.has(token.fundingType) ? { fundingType: token.fundingType } : {}),
      ...(token.countryCode && token.countryCode !== 'unknown' ? { countryCode: token.countryCode } : {}),
      ...(card.billingAddress !== undefined ? { billingAddress: card.billingAddress } : {}),
    },
    ...(token.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: token.schemeTransactionReference }
      : {}),
    _links: tokenLinks(href),
  };
}

/** A token's links: itself, and the link of each attribute a PUT updates (Worldpay's relations). */
export function tokenLinks(href: string): Record<string, { href: string }> {
  return {
    'tokens:token': { href },
    ...Object.fromEntries(
      Object.entries(UPDATE_PATHS).map(([attribute, path]) => [`tokens:${attribute}`, { href: `${href}/${path}` }]),
    ),
  };
}

/**
 * The token with a conflict (a 409, and `GET` on its `tokens:conflicts` link): the token as it
 * stands, `conflicts` (when they end, then what was sent differently) and the link that reads
 * and accepts them.
 */
export function conflictResource(
  resource: Record<string, unknown>,
  conflicts: Record<string, unknown>,
  conflict: { href: string; expiresAt: number } | undefined,
): Record<string, unknown> {
  const links = resource._links as Record<string, { href: string }>;
  return {
    ...resource,
    conflicts: {
      ...(conflict ? { conflictsExpiryDateTime: isoSeconds(conflict.expiresAt) } : {}),
      ...conflicts,
    },
    _links: { ...links, ...(conflict ? { 'tokens:conflicts': { href: conflict.href } } : {}) },
  };
}

/** The details that make a second tokenization of a card conflict with its token (Worldpay's list). */
export interface ConflictingDetails {
  cardHolderName?: string;
  cardExpiryDate: { month: number; year: number };
  billingAddress?: BillingAddress;
  schemeTransactionReference?: string;
}

/**
 * What this request sent that differs from the token: the `conflicts` of a 409, or undefined when
 * nothing does. A detail the request leaves out never conflicts; the expiry date is always sent.
 */
export function conflictsOf(stored: ConflictingDetails, sent: ConflictingDetails): Record<string, unknown> | undefined {
  const differs = <T>(value: T | undefined, was: T | undefined): value is T =>
    value !== undefined && JSON.stringify(value) !== JSON.stringify(was ?? null);
  const instrument = {
    ...(differs(sent.cardHolderName, stored.cardHolderName) ? { cardHolderName: sent.cardHolderName } : {}),
    ...(differs(sent.cardExpiryDate, stored.cardExpiryDate) ? { cardExpiryDate: sent.cardExpiryDate } : {}),
    ...(differs(sent.billingAddress, stored.billingAddress) ? { billingAddress: sent.billingAddress } : {}),
  };
  const conflicts = {
    ...(Object.keys(instrument).length > 0 ? { paymentInstrument: instrument } : {}),
    ...(differs(sent.schemeTransactionReference, stored.schemeTransactionReference)
      ? { schemeTransactionReference: sent.schemeTransactionReference }
      : {}),
  };
  return Object.keys(conflicts).length > 0 ? conflicts : undefined;
}

/** A time in whole seconds (rounded down), as Worldpay writes token date-times. */
export function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/** A time as Worldpay writes it: ISO 8601 in UTC, whole seconds (`2026-11-29T16:02:04Z`). */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
