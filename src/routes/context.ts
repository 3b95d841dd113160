import type { CardContext } from '../cards/resolve-card';
import type { EntityConfig, MerchantConfig } from '../config/merchants';
import { fail } from '../http/errors';
import type { RequestContext } from '../http/pipeline';
import { threeDsGuard, threeDsGuardById, tokenGuard } from '../storage/guards/clients';
import { SessionStore } from '../storage/threeds-store';
import { TokenStore } from '../storage/token-store';
import type { ThreeDsDeps } from '../threeds/steps/deps';
import { tokenKeys } from '../tokens/token-crypto';
import type { TokenDeps } from '../tokens/tokens';

/**
 * Builds the domain steps' dependencies from a request: the settings parsed once, the stores and
 * guard objects over this request's bindings, one clock reading.
 */

/**
 * The base URL of links, token hrefs and page URLs: PUBLIC_BASE_URL when set, otherwise the
 * origin of the incoming request (CONTRACT.md §1).
 */
export function publicBaseUrl(rc: RequestContext): string {
  return rc.settings.publicBaseUrl ?? rc.url.origin;
}

/**
 * The merchant's entity configuration, or entityIsNotConfigured, also for an entity that belongs
 * to another merchant: the answer never reveals that it exists (CONTRACT.md §2 step 6).
 */
export function entityOf(merchant: MerchantConfig, entity: string, rc: RequestContext): EntityConfig {
  const config = merchant.entities.get(entity);
  if (!config) fail({ kind: 'entityNotConfigured' });
  rc.log.entity = entity;
  return config;
}

export function cardContext(rc: RequestContext, now: number): Omit<CardContext, 'username' | 'entity'> {
  const settings = rc.settings;
  return {
    baseUrl: publicBaseUrl(rc),
    now,
    tokens: new TokenStore(rc.env.SESSIONS),
    tokenKeys: () => tokenKeys(settings),
  };
}

export function tokenDeps(rc: RequestContext): TokenDeps {
  const now = Date.now();
  return {
    ...cardContext(rc, now),
    environment: rc.settings.environment,
    background: (work) => rc.ctx.waitUntil(work),
    guardFor: (username, fingerprint) => tokenGuard(rc.env.TOKEN_GUARD, username, fingerprint),
  };
}

export function threeDsDeps(rc: RequestContext): ThreeDsDeps {
  const now = Date.now();
  return {
    environment: rc.settings.environment,
    key: rc.settings.jwtKey,
    baseUrl: publicBaseUrl(rc),
    now,
    background: (work) => rc.ctx.waitUntil(work),
    sessions: new SessionStore(rc.env.SESSIONS),
    guardFor: (scope) => threeDsGuard(rc.env.THREEDS_GUARD, scope),
    guardById: (id) => threeDsGuardById(rc.env.THREEDS_GUARD, id),
    cards: cardContext(rc, now),
  };
}
