import { fail } from '../failures';
import type { MerchantConfig, MerchantDirectory } from '../merchants/merchant-config';
import { originListed } from '../merchants/origins';
import type { EndpointResult } from './endpoint';

/**
 * Publishable keys and CORS for the one operation a web page may call directly, the lookup by
 * BIN prefix (docs/card-bin.md "Publishable keys").
 *
 * A publishable key is not a secret: it sits in the page. What it may do is bounded instead: it
 * authenticates only POST /api/cardBin/binLookup, which never sees a card number; only from the
 * origins listed for it (browsers send Origin and cannot forge it); and at most
 * PREFIX_LOOKUPS_BY_KEY lookups a minute per key and client address, so a copied key cannot be
 * used to pull the BIN table out of the service.
 */

const BEARER = /^Bearer[ ]+(pk_[A-Za-z0-9_]+)[ ]*$/i;

/** Seconds a client waits once over the lookup limit: the limiter's window. */
export const LOOKUP_LIMIT_WINDOW_SECONDS = 60;

/** The publishable key in an `Authorization: Bearer pk_…` header, or undefined. */
export function publishableKeyOf(authorization: string | null): string | undefined {
  if (authorization === null) return undefined;
  return BEARER.exec(authorization)?.[1];
}

/**
 * The merchant a publishable key belongs to, once the key, the page's origin and the lookup limit
 * allow the request; otherwise the request ends (401 accessDenied, 403 originIsNotAllowed, 429).
 */
export async function signInPublishable(
  merchants: MerchantDirectory,
  key: string,
  origin: string | null,
  limiter: RateLimit | undefined,
  address: string,
  note: (what: string) => void,
): Promise<MerchantConfig> {
  const found = merchants.publishableKey(key);
  if (!found) fail({ kind: 'accessDenied' });
  if (origin === null || !originListed(found.key.origins, origin)) fail({ kind: 'originNotAllowed' });
  if (limiter) {
    let success = true;
    try {
      ({ success } = await limiter.limit({ key: `${key}\u0000${address}` }));
    } catch {
      note('rate limiter unavailable');
    }
    if (!success) {
      note('limited');
      fail({ kind: 'tooManyRequests', retryAfter: LOOKUP_LIMIT_WINDOW_SECONDS, what: 'lookups' });
    }
  }
  return found.merchant;
}

const ALLOW_HEADERS = 'Authorization, Content-Type, WP-Api-Version, WP-CorrelationId';
const EXPOSE_HEADERS = 'WP-CorrelationId, WP-Api-Version, Bin-Data-Version, Retry-After';

/**
 * The CORS headers of an answer on the lookup-by-prefix path: the page's origin echoed when some
 * publishable key lists it (so the page can read errors too, 401 and 429 included), and
 * `Vary: Origin` always.
 */
export function corsHeaders(merchants: MerchantDirectory, origin: string | null): Record<string, string> {
  if (origin === null || !merchants.isPublishableOrigin(origin)) return { Vary: 'Origin' };
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSE_HEADERS, Vary: 'Origin' };
}

/** The answer to a CORS preflight: 204 for a listed origin, 403 originIsNotAllowed otherwise. */
export function preflight(merchants: MerchantDirectory, origin: string | null): EndpointResult {
  if (origin === null || !merchants.isPublishableOrigin(origin)) fail({ kind: 'originNotAllowed' });
  return {
    status: 204,
    headers: {
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': ALLOW_HEADERS,
      'Access-Control-Max-Age': '600',
    },
  };
}
