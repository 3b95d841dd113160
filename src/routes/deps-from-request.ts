import { tokenKeys } from '../cards/card-crypto';
import type { CardDeps } from '../cards/resolve-card';
import { openCard } from '../cards/token-card';
import type { RequestContext } from '../http/endpoint';
import { threeDsTransaction, threeDsTransactionById } from '../threeds/transaction-api';
import { tokenGroup, tokenGroupName, tokenGroupOfReference } from '../tokens/token-group-api';
import { parseReference } from '../tokens/token-ids';
import type { KvAccess } from '../storage/kv';
import { TokenStore } from '../tokens/token-record';
import { threeDsServerOf } from '../threeds/live/three-ds-server';
import type { ThreeDsDeps } from '../threeds/steps/step-deps';
import type { TokenDeps } from '../tokens/token-steps';
import { extensionDue } from '../tokens/token-updates';

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
 * The token's record as KV's projection has it, when `reference` names the token's own object
 * (the one its record names: a reference made up of another object's id and this token's id
 * finds nothing, as its object would answer).
 */
async function projectedToken(rc: RequestContext, reference: string, now: number) {
  const parsed = parseReference(reference);
  const record = parsed && (await new TokenStore(kvAccess(rc)).get(parsed.tokenId, now));
  if (!record) return undefined;
  const { username, namespace, fingerprint } = record;
  const name = tokenGroupName(username, namespace !== undefined ? { namespace } : { fingerprint });
  return rc.env.TOKEN_GROUP.idFromName(name).toString() === parsed.ownerId ? record : undefined;
}

/**
 * What card resolution needs. `tokens`: how a token is read (docs/storage.md "Reads"): `exact`
 * asks the token's object (3DS, tokens); `projection` reads KV's copy, which may lag the object
 * by KV's propagation (panLookup: a token's BIN data never changes), and asks the object to
 * extend a token used past half its life after the answer.
 */
export function cardDeps(rc: RequestContext, tokens: 'exact' | 'projection', now = Date.now()): CardDeps {
  const settings = rc.settings;
  const exact = async (username: string, reference: string) => {
    const at = tokenOwner(rc, reference);
    return at?.owner.read(username, at.tokenId);
  };
  const projected = async (username: string, reference: string) => {
    const record = await projectedToken(rc, reference, now);
    if (record?.username !== username) return undefined;
    if (extensionDue(record, now)) rc.ctx.waitUntil(exact(username, reference).catch(() => undefined));
    return { token: record, card: await openCard(await tokenKeys(settings), record) };
  };
  return {
    binIndex: rc.services.binIndex,
    baseUrl: publicBaseUrl(rc),
    now,
    tokenCard: tokens === 'exact' ? exact : projected,
  };
}

export function tokenDeps(rc: RequestContext): TokenDeps {
  const timeoutMs = rc.settings.storageTimeoutMs;
  return {
    ...cardDeps(rc, 'exact'),
    tokenKeys: () => tokenKeys(rc.settings),
    ownerFor: (username, of) => tokenGroup(rc.env.TOKEN_GROUP, username, of, timeoutMs),
    ownerOf: (reference) => tokenOwner(rc, reference),
    projectedToken: (tokenId) => new TokenStore(kvAccess(rc)).get(tokenId, Date.now()),
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
    transactionFor: (scope) => threeDsTransaction(rc.env.THREEDS_TRANSACTION, scope, timeoutMs),
    transactionById: (id) => threeDsTransactionById(rc.env.THREEDS_TRANSACTION, id, timeoutMs),
    cards: cardDeps(rc, 'exact', now),
    ...(rc.settings.environment === 'live' && rc.settings.threeDsServer
      ? { provider: threeDsServerOf(rc.env, rc.settings.threeDsServer) }
      : {}),
  };
}
