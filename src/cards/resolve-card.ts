import type { BinMatch } from '../bin/bin-index';
import { BIN_INDEX } from '../bin/default-index';
import type { Brand } from '../bin/model';
import { brandAllowed, type EntityConfig } from '../config/merchants';
import { failed, ok, type Result } from '../failures';
import type { TokenStore } from '../storage/token-store';
import { cardHasExpired, findToken, foreignHrefError, openCard, tokenIdFromHref } from '../tokens/token-card';
import type { TokenKeys } from '../tokens/token-crypto';
import { maskPan } from './mask';

/**
 * Card resolution, once for the BIN lookup, tokens and 3DS: a card number or a token href in,
 * the card out (number, BIN match, brands, masked number), with the rules every caller shares:
 * a token must be ours, the merchant's, live, and its card unexpired; a card number needs a
 * PCI-compliant entity where the caller says so; the entity's brand rule applies.
 */

export type CardInput =
  | {
      type: 'card/front';
      cardNumber: string;
      cardExpiryDate?: { month: number; year: number };
      cardHolderName?: string;
    }
  | { type: 'card/tokenized'; href: string };

export interface ResolvedCard {
  /** The full number: for the BIN index and sealing only, never for logs or answers. */
  cardNumber: string;
  /** First 6 and last 4 digits: what logs may carry. */
  masked: string;
  /** The first 6 digits. */
  bin: string;
  match: BinMatch | undefined;
  brands: readonly Brand[];
  cardHolderName?: string;
  cardExpiryDate?: { month: number; year: number };
  /** Set when the card came from a token. */
  tokenId?: string;
}

export interface CardContext {
  username: string;
  entity: EntityConfig;
  baseUrl: string;
  now: number;
  tokens: TokenStore;
  tokenKeys: () => Promise<TokenKeys>;
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
 * Resolves the card and applies the entity's rules, in CONTRACT.md §2 order (feature, then brand).
 *
 * @example
 * ```ts
 * const card = await resolveCard(ctx, { type: 'card/front', cardNumber }, { hrefPath: '$.token' });
 * if (card.ok) card.value.brands; // ['visa']
 * ```
 */
export async function resolveCard(ctx: CardContext, input: CardInput, rules: CardRules): Promise<Result<ResolvedCard>> {
  let card: {
    cardNumber: string;
    cardHolderName?: string;
    cardExpiryDate?: { month: number; year: number };
    tokenId?: string;
  };
  if (input.type === 'card/tokenized') {
    const tokenId = tokenIdFromHref(input.href, ctx.baseUrl);
    if (tokenId === undefined)
      return failed({ kind: 'bodyDoesNotMatchSchema', errors: [foreignHrefError(ctx.baseUrl, rules.hrefPath)] });
    const record = await findToken(ctx.tokens, ctx.username, tokenId, ctx.now);
    if (!record) return failed({ kind: 'tokenNotFound' });
    if (cardHasExpired(record.cardExpiryDate, ctx.now)) return failed({ kind: 'underlyingPaymentInstrumentExpired' });
    card = { ...(await openCard(await ctx.tokenKeys(), record)), tokenId };
  } else {
    if (rules.pciFeature !== undefined && !ctx.entity.pciCompliant) {
      return failed({ kind: 'merchantNotConfigured', feature: rules.pciFeature });
    }
    card = input;
  }
  const match = BIN_INDEX.find(card.cardNumber);
  if (rules.requireMatch && !match) return failed({ kind: 'binNotFound' });
  const brands = match?.record.brands ?? [];
  if (!brandAllowed(ctx.entity, brands)) return failed({ kind: 'paymentInstrumentNotSupported' });
  return ok({
    cardNumber: card.cardNumber,
    masked: maskPan(card.cardNumber),
    bin: card.cardNumber.slice(0, 6),
    match,
    brands,
    ...(card.cardHolderName !== undefined ? { cardHolderName: card.cardHolderName } : {}),
    ...(card.cardExpiryDate !== undefined ? { cardExpiryDate: card.cardExpiryDate } : {}),
    ...(card.tokenId !== undefined ? { tokenId: card.tokenId } : {}),
  });
}
