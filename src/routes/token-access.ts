import type { MerchantConfig } from '../config/merchants';
import { fail } from '../http/errors';
import { maskPan } from '../http/log';
import type { RequestContext } from '../http/pipeline';
import { TokenStore } from '../storage/token-store';
import { tokenKeys, TokenKeysMisconfigured } from '../tokens/token-crypto';
import { cardHasExpired, findToken, openCard, type CardDetails, type TokenContext } from '../tokens/tokens';
import { tokenIdFromHref } from './links';

/** The token domain's context for this request; 503 when the token keys are not configured. */
export async function tokenContext(rc: RequestContext): Promise<TokenContext> {
  try {
    return {
      store: new TokenStore(rc.env.SESSIONS),
      keys: await tokenKeys(rc.env.TOKEN_ENCRYPTION_KEYS, rc.env.TOKEN_HMAC_KEY),
      environment: rc.env.ENVIRONMENT,
      now: Date.now(),
    };
  } catch (e) {
    if (e instanceof TokenKeysMisconfigured) fail({ kind: 'misconfigured', what: e.message });
    throw e;
  }
}

/**
 * The card behind a token href that the caller has checked is ours: 404 tokenNotFound when the
 * token is unknown, deleted, expired or another merchant's; 400
 * underlyingPaymentInstrumentHasExpired when the card's expiry date has passed.
 */
export async function cardBehindToken(rc: RequestContext, merchant: MerchantConfig, href: string, baseUrl: string): Promise<CardDetails> {
  const tokenId = tokenIdFromHref(href, baseUrl);
  if (tokenId === undefined) return fail({ kind: 'tokenNotFound' });
  const ctx = await tokenContext(rc);
  const record = await findToken(ctx, merchant.username, tokenId);
  if (!record) fail({ kind: 'tokenNotFound' });
  rc.log.token = tokenId;
  if (cardHasExpired(record.cardExpiryDate, ctx.now)) fail({ kind: 'underlyingPaymentInstrumentExpired' });
  const card = await openCard(ctx, record);
  rc.log.card = maskPan(card.cardNumber);
  return card;
}
