import type { BinIndex, BinMatch } from '../bin/bin-index';
import type { Brand } from '../bin/model';
import { failed, ok, type Result } from '../failures';
import { brandRule, cardNumberRule } from '../merchants/entity-rules';
import type { EntityConfig } from '../merchants/merchant-config';
import type { TokenRecord } from '../records/token-record';
import { maskPan } from '../mask';
import { cardHasExpired, foreignHrefError, tokenIdFromHref, type BillingAddress, type CardDetails } from './token-card';

/**
 * Card resolution, once for the BIN lookup, tokens and 3DS: a card number, a network token number
 * (3DS v3) or a token href in, the card out (number, BIN match, brands, masked number), with the
 * rules every caller shares (docs/pipeline.md step 6): a token must be ours, the merchant's, live,
 * and its card unexpired; a card number (or network token number) needs a PCI-compliant entity
 * where the caller says so; the entity's brand rule applies.
 */

export type CardInput =
  | {
      type: 'card/front';
      cardNumber: string;
      cardExpiryDate?: { month: number; year: number };
      cardHolderName?: string;
      billingAddress?: BillingAddress;
    }
  | { type: 'card/tokenized'; href: string }
  /**
   * A network token (3DS v3): a number the card schemes issue in place of the card number. 3-D
   * Secure runs on it as on a card number, so it is resolved as one, and kept as one: never in
   * clear in storage or logs (docs/storage.md).
   */
  | {
      type: 'card/networkToken';
      tokenNumber: string;
      cardExpiryDate?: { month: number; year: number };
      cardHolderName?: string;
      billingAddress?: BillingAddress;
    };

export interface ResolvedCard {
  /**
   * The full number (a network token's number for `card/networkToken`): for the BIN index,
   * sealing and the 3DS Server only, never for logs or answers.
   */
  cardNumber: string;
  /** First 6 and last 4 digits: what logs may carry. */
  masked: string;
  /** The first 6 digits. */
  bin: string;
  match: BinMatch | undefined;
  brands: readonly Brand[];
  cardHolderName?: string;
  cardExpiryDate?: { month: number; year: number };
  billingAddress?: BillingAddress;
  /** Set when the card came from a token. */
  tokenId?: string;
  /** Set when the number is a network token's (`card/networkToken`), for field errors and the log. */
  networkToken?: true;
}

/** What card resolution needs: the BIN index, the merchant's tokens, the clock. */
export interface CardDeps {
  binIndex: BinIndex;
  baseUrl: string;
  now: number;
  /**
   * The merchant's live token and its card, or undefined (unknown, deleted, expired, another
   * merchant's): from the token's object, or from KV's projection where the caller tolerates a
   * stale answer (docs/storage.md "Reads"). Using a token may extend it (docs/tokens.md "Lifetime").
   */
  tokenCard: (
    username: string,
    reference: string,
  ) => Promise<{ token: Pick<TokenRecord, 'tokenId' | 'cardExpiryDate'>; card: CardDetails } | undefined>;
}

/** Who asks: the merchant and its entity. */
export interface CardOwner {
  username: string;
  entity: EntityConfig;
}

export interface CardRules {
  /** JSONPath of the token href in the request, for the error on an href that is not ours. */
  hrefPath: string;
  /** A card number (not a token) needs a pciCompliant entity; the feature named in the error. */
  pciFeature?: string;
  /** Answer binNotFound before the brand rule when nothing in the index matches. */
  requireMatch?: boolean;
}

/**
 * Resolves the card and applies the entity's rules, in the order of docs/pipeline.md step 6
 * (feature, then brand).
 *
 * @example
 * ```ts
 * const card = await resolveCard(deps, owner, { type: 'card/front', cardNumber }, { hrefPath: '$.token' });
 * if (card.ok) card.value.brands; // ['visa']
 * ```
 */
export async function resolveCard(
  deps: CardDeps,
  owner: CardOwner,
  input: CardInput,
  rules: CardRules,
): Promise<Result<ResolvedCard>> {
  let card: Omit<ResolvedCard, 'masked' | 'bin' | 'match' | 'brands'>;
  if (input.type === 'card/tokenized') {
    const reference = tokenIdFromHref(input.href, deps.baseUrl);
    if (reference === undefined)
      return failed({ kind: 'bodyDoesNotMatchSchema', errors: [foreignHrefError(deps.baseUrl, rules.hrefPath)] });
    const found = await deps.tokenCard(owner.username, reference);
    if (!found) return failed({ kind: 'tokenNotFound' });
    if (cardHasExpired(found.token.cardExpiryDate, deps.now))
      return failed({ kind: 'underlyingPaymentInstrumentExpired' });
    card = { ...found.card, tokenId: found.token.tokenId };
  } else {
    if (rules.pciFeature !== undefined) {
      const pci = cardNumberRule(owner.entity, rules.pciFeature);
      if (!pci.ok) return pci;
    }
    if (input.type === 'card/networkToken') {
      const { type: _type, tokenNumber, ...details } = input;
      card = { cardNumber: tokenNumber, ...details, networkToken: true };
    } else {
      const { type: _type, ...front } = input;
      card = front;
    }
  }
  const match = deps.binIndex.find(card.cardNumber);
  if (rules.requireMatch && !match) return failed({ kind: 'binNotFound' });
  const brands = match?.record.brands ?? [];
  const brand = brandRule(owner.entity, brands);
  if (!brand.ok) return brand;
  return ok({
    ...card,
    masked: maskPan(card.cardNumber),
    bin: card.cardNumber.slice(0, 6),
    match,
    brands,
  });
}
