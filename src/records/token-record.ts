import type { Brand, FundingType } from '../bin/model';
import type { Stored } from '../storage/kv';
import type { SealedValue } from './sealed-value';

/**
 * A token as its owning object (src/tokens/token-group.ts) stores it and projects it to KV
 * (`token:<id>`, src/tokens/token-record.ts): its card sealed, the rest in clear. Below both the
 * cards (src/cards/: they seal, open and resolve the card behind it) and the tokens (src/tokens/:
 * they make and change it), so that neither imports the other for it (docs/README.md "The layers").
 */
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
