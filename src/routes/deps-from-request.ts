import { tokenKeys } from '../cards/card-crypto';
import type { CardDeps } from '../cards/resolve-card';
import type { ThreeDsServerSettings } from '../config/settings';
import type { RequestContext } from '../http/endpoint';
import { namespaceGuard, threeDsGuard, threeDsGuardById, tokenGuard } from '../storage/guards/clients';
import type { KvAccess } from '../storage/kv';
import { TokenStore } from '../storage/token-store';
import { threeDsecureIo, type ThreeDsServer } from '../threeds/live/three-ds-server';
import type { ThreeDsDeps } from '../threeds/steps/step-deps';
import type { TokenDeps } from '../tokens/token-steps';
import { extendIfDue, extensionDue } from '../tokens/token-updates';

/**
 * Builds the domain steps' dependencies from a request: the settings parsed once, the injected
 * services, the stores and guard objects over this request's bindings (each call with the
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

export function cardDeps(rc: RequestContext, now = Date.now()): CardDeps {
  const settings = rc.settings;
  return {
    binIndex: rc.services.binIndex,
    baseUrl: publicBaseUrl(rc),
    now,
    tokens: new TokenStore(kvAccess(rc)),
    tokenKeys: () => tokenKeys(settings),
    // A token used past half its life is extended after the answer (a failure waits for the next use).
    tokenUsed: (record) => {
      if (extensionDue(record, now)) rc.ctx.waitUntil(extendIfDue(tokenDeps(rc), record)); // never throws
    },
  };
}

export function tokenDeps(rc: RequestContext): TokenDeps {
  const timeoutMs = rc.settings.storageTimeoutMs;
  return {
    ...cardDeps(rc),
    environment: rc.settings.environment,
    background: (work) => rc.ctx.waitUntil(work),
    guardFor: (username, fingerprint, namespace) =>
      tokenGuard(rc.env.TOKEN_GUARD, username, fingerprint, namespace, timeoutMs),
    namespaceFor: (username, namespace) => namespaceGuard(rc.env.NAMESPACE_GUARD, username, namespace, timeoutMs),
  };
}

export function threeDsDeps(rc: RequestContext): ThreeDsDeps {
  const now = Date.now();
  const timeoutMs = rc.settings.storageTimeoutMs;
  return {
    environment: rc.settings.environment,
    key: rc.settings.jwtKey,
    baseUrl: publicBaseUrl(rc),
    now,
    guardFor: (scope) => threeDsGuard(rc.env.THREEDS_GUARD, scope, timeoutMs),
    guardById: (id) => threeDsGuardById(rc.env.THREEDS_GUARD, id, timeoutMs),
    cards: cardDeps(rc, now),
    ...(rc.settings.environment === 'live' && rc.settings.threeDsServer
      ? { provider: threeDsServerOf(rc, rc.settings.threeDsServer) }
      : {}),
  };
}

/**
 * The live 3DS Server provider (docs/threeds.md "Live": "The 3DS Server"): 3dsecure.io's API at
 * THREEDS_SERVER_URL with the THREEDS_SERVER_API_KEY secret, reached over the THREEDS_SERVER
 * service binding when there is one (tests and local development bind the fake provider), else
 * over the Internet.
 */
function threeDsServerOf(rc: RequestContext, config: ThreeDsServerSettings): ThreeDsServer {
  const binding = rc.env.THREEDS_SERVER;
  const quick = Math.min(5_000, config.authenticateTimeoutMs);
  return threeDsecureIo({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    timeouts: { prepare: quick, authenticate: config.authenticateTimeoutMs, result: quick },
    transport: binding ? (request) => binding.fetch(request) : (request) => fetch(request),
  });
}
