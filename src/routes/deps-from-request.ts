import { tokenKeys } from '../cards/card-crypto';
import type { CardDeps } from '../cards/resolve-card';
import type { RequestContext } from '../http/endpoint';
import { MAX_AUTHENTICATE_TIMEOUT_MS } from '../config/settings';
import { threeDsTransaction, threeDsTransactionById, transactionWaits } from '../threeds/transaction-api';
import { tokenGroup, tokenGroupOfReference } from '../tokens/token-group-api';
import type { KvAccess } from '../storage/kv';
import { TokenStore } from '../tokens/token-record';
import { threeDsServerOf } from '../threeds/live/three-ds-server';
import type { ThreeDsDeps } from '../threeds/steps/step-deps';
import type { TokenDeps } from '../tokens/token-steps';

/**
 * Builds the domain steps' dependencies from a request: the settings parsed once, the injected
 * services, the stores and Durable Objects over this request's bindings (each call with the
 * storage deadline), one clock reading.
 */

/**
 * The base URL of links, token hrefs and page URLs: PUBLIC_BASE_URL when set, otherwise the
 * origin of the incoming request (docs/configuration.md).
 */
export function publicBaseUrl(rc: RequestContext): string {
  return rc.settings.publicBaseUrl ?? rc.url.origin;
}

function kvAccess(rc: RequestContext): KvAccess {
  return { kv: rc.env.SESSIONS, timeoutMs: rc.settings.storageTimeoutMs };
}

/** The object that owns a token and the token's id, by its reference (undefined when it names none). */
function tokenOwner(rc: RequestContext, reference: string) {
  return tokenGroupOfReference(rc.env.TOKEN_GROUP, reference, rc.settings.storageTimeoutMs);
}

/**
 * What card resolution needs. A token is read from its object (docs/storage.md "Reads"), on every
 * path: a deleted token is `tokenNotFound` at once and a new one is known at once, everywhere. The
 * token's reference names its object, so the read costs one object call and no lookup.
 */
export function cardDeps(rc: RequestContext, now = Date.now()): CardDeps {
  return {
    binIndex: rc.services.binIndex,
    baseUrl: publicBaseUrl(rc),
    now,
    tokenCard: async (username: string, reference: string) => {
      const at = tokenOwner(rc, reference);
      return at?.owner.read(username, at.tokenId);
    },
  };
}

export function tokenDeps(rc: RequestContext): TokenDeps {
  const timeoutMs = rc.settings.storageTimeoutMs;
  return {
    ...cardDeps(rc),
    tokenKeys: () => tokenKeys(rc.settings),
    ownerFor: (username, of) => tokenGroup(rc.env.TOKEN_GROUP, username, of, timeoutMs),
    ownerOf: (reference) => tokenOwner(rc, reference),
    projectedToken: (tokenId) => new TokenStore(kvAccess(rc)).get(tokenId, Date.now()),
  };
}

export function threeDsDeps(rc: RequestContext): ThreeDsDeps {
  const now = Date.now();
  const timeoutMs = rc.settings.storageTimeoutMs;
  // A live authenticate's call waits for its run in the object (the provider's deadline and the
  // method's window); a 3RI's, for the prior's object and in live its run.
  const waits = transactionWaits(
    rc.settings.threeDsServer?.authenticateTimeoutMs ?? MAX_AUTHENTICATE_TIMEOUT_MS,
    rc.settings.environment,
  );
  return {
    environment: rc.settings.environment,
    key: rc.settings.jwtKey,
    baseUrl: publicBaseUrl(rc),
    now,
    transactionFor: (scope) => threeDsTransaction(rc.env.THREEDS_TRANSACTION, scope, timeoutMs, waits),
    transactionById: (id) => threeDsTransactionById(rc.env.THREEDS_TRANSACTION, id, timeoutMs, waits),
    cards: cardDeps(rc, now),
    ...(rc.settings.environment === 'live' && rc.settings.threeDsServer
      ? { provider: threeDsServerOf(rc.env, rc.settings.threeDsServer) }
      : {}),
    ...(rc.settings.environment === 'test' && rc.services.appIssuer ? { appIssuer: rc.services.appIssuer } : {}),
    ...(rc.settings.acsEphemeralKeySecret ? { acsEphemeralKeySecret: rc.settings.acsEphemeralKeySecret } : {}),
  };
}
