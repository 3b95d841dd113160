import type { AppIssuer } from '../app-issuer';
import { resolveCard, type CardDeps, type ResolvedCard } from '../../cards/resolve-card';
import type { Environment } from '../../config/settings';
import { failed, ok, type Result } from '../../failures';
import { THREEDS_PATH } from '../api-paths';
import { duplicateIsAnError } from '../api-versions';
import { unavailableFor } from '../outcomes';
import { currencyRule, threeDsEntityRule } from '../../merchants/entity-rules';
import type { EntityConfig, MerchantConfig } from '../../merchants/merchant-config';
import type { ApiVersion } from '../../media-types';
import type { ThreeDsTransactionApi } from '../transaction-api';
import type { EventScope } from '../transaction-api';
import type { SessionScope } from '../session-record';
import { hmacHex } from '../hmac-derived-values';
import type { ThreeDsServer } from '../live/three-ds-server';

/**
 * What the 3DS steps are handed: typed stores and owners, the clock and the settings they use.
 * Routes build it from the request (`src/routes/deps-from-request.ts`); tests may build it around
 * stores that fail on command.
 */
export interface ThreeDsDeps {
  environment: Environment;
  /** JWT_SIGNING_KEY: signs the JWTs, keys the request hashes and derived values. */
  key: Uint8Array<ArrayBuffer>;
  /** Base of the page URLs and links in answers. */
  baseUrl: string;
  now: number;
  /** The transaction's owner object and its id (which the page JWTs carry). */
  transactionFor(scope: SessionScope): { owner: ThreeDsTransactionApi; id: string };
  /** The owner named in one of our signed JWTs; undefined for an id that is not one. */
  transactionById(id: string): ThreeDsTransactionApi | undefined;
  /** Card resolution's dependencies. */
  cards: CardDeps;
  /** The licensed 3DS Server provider of `live` (docs/threeds.md "Live"); absent in `test`. */
  provider?: ThreeDsServer;
  /** `test`: the test issuer's app-channel keys (src/threeds/app-issuer.ts), and its ACS's ephemeral key secret. */
  appIssuer?: AppIssuer;
  acsEphemeralKeySecret?: Uint8Array<ArrayBuffer>;
}

/** The merchant side of a step: who asks, for which entity and transaction. */
export interface Caller {
  scope: SessionScope;
  entity: EntityConfig;
}

/**
 * The caller of a 3DS step, once the business rules allow it (docs/pipeline.md step 6): the
 * entity must be this merchant's and have 3-D Secure enabled. The session is scoped by merchant,
 * entity and transaction reference.
 */
export function threeDsCaller(
  merchant: MerchantConfig,
  entityId: string,
  transactionReference: string,
): Result<Caller> {
  const entity = threeDsEntityRule(merchant, entityId);
  if (!entity.ok) return entity;
  return ok({ entity: entity.value, scope: { username: merchant.username, entity: entityId, transactionReference } });
}

/**
 * A keyed hash (HMAC-SHA256, hex) of a validated request, to recognise an identical retry
 * without storing the request: it may hold a card number, and an unkeyed hash of a card number
 * can be brute-forced.
 */
export function requestHash(key: Uint8Array<ArrayBuffer>, request: unknown): Promise<string> {
  return hmacHex(key, JSON.stringify(request));
}

/** What the transaction's object keeps for its event: whose it is, and how its answers render. */
export function eventScope(deps: ThreeDsDeps, scope: SessionScope, apiVersion: ApiVersion): EventScope {
  return { ...scope, baseUrl: deps.baseUrl, apiVersion };
}

/** authenticate's answer, test or live (steps/authenticate.ts, steps/live-authenticate.ts). */
export interface Authenticated {
  answer: Record<string, unknown>;
  card: string;
  scenario: string;
  /** A different body met a transaction already authenticated: answered `unavailable` (version 1). */
  conflict: boolean;
}

/**
 * The business rules of a step that authenticates a card, in order (docs/pipeline.md step 6):
 * the entity and its 3-D Secure, the card (a token's checks) and its brand, then the currency.
 */
export async function callerAndCard(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: {
    transactionReference: string;
    merchant: { entity: string };
    instruction: { value: { currency: string }; paymentInstrument: Parameters<typeof resolveCard>[2] };
  },
): Promise<Result<{ caller: Caller; card: ResolvedCard }>> {
  const called = threeDsCaller(merchant, request.merchant.entity, request.transactionReference);
  if (!called.ok) return called;
  const caller = called.value;
  const resolved = await resolveCard(
    deps.cards,
    { username: caller.scope.username, entity: caller.entity },
    request.instruction.paymentInstrument,
    { hrefPath: '$.instruction.paymentInstrument.href' },
  );
  if (!resolved.ok) return resolved;
  const currency = currencyRule(caller.entity, request.instruction.value.currency);
  if (!currency.ok) return currency;
  return ok({ caller, card: resolved.value });
}

/**
 * Another body under a transaction reference in use (authenticate, merchantInitiated, test or
 * live; docs/compatibility.md "Versions"): versions 2 and 3 get the error
 * `transactionReferenceIsADuplicate`, version 1 `unavailable`, which changes nothing stored.
 */
export function duplicateAnswer(
  deps: Pick<ThreeDsDeps, 'baseUrl'>,
  transactionReference: string,
  card: string,
  version: ApiVersion,
): Result<Authenticated> {
  if (duplicateIsAnError(version)) return failed({ kind: 'transactionReferenceDuplicate' });
  const apiBase = `${deps.baseUrl}${THREEDS_PATH}`;
  const answer = unavailableFor({ transactionReference, step: 'authenticate', apiBase });
  return ok({ answer: { ...answer }, card, scenario: 'conflict', conflict: true });
}
