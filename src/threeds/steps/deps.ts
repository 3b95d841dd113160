import type { CardContext } from '../../cards/resolve-card';
import type { EntityConfig } from '../../config/merchants';
import type { Environment } from '../../config/settings';
import type { ThreeDsGuardApi } from '../../storage/guards/clients';
import type { SessionScope, SessionStore } from '../../storage/threeds-store';
import { hmacHex } from '../derived';

/**
 * What the 3DS steps are handed: typed stores and guards, the clock and the settings they use.
 * Routes build it from the request (`src/routes/context.ts`); tests may build it around
 * stores that fail on command.
 */
export interface ThreeDsDeps {
  environment: Environment;
  /** JWT_SIGNING_KEY: signs the JWTs, keys the request hashes and derived values. */
  key: Uint8Array<ArrayBuffer>;
  /** Base of the page URLs and links in answers. */
  baseUrl: string;
  now: number;
  /** Work to finish after the answer is sent (ExecutionContext.waitUntil). */
  background(work: Promise<unknown>): void;
  sessions: SessionStore;
  /** The transaction's guard object and its id (which the page JWTs carry). */
  guardFor(scope: SessionScope): { guard: ThreeDsGuardApi; id: string };
  /** The guard named in one of our signed JWTs; undefined for an id that is not one. */
  guardById(id: string): ThreeDsGuardApi | undefined;
  /** Card resolution's context, without the merchant's part. */
  cards: Omit<CardContext, 'username' | 'entity'>;
}

/** The merchant side of a step: who asks, for which entity and transaction. */
export interface Caller {
  scope: SessionScope;
  entity: EntityConfig;
}

/**
 * A keyed hash (HMAC-SHA256, hex) of a validated request, to recognise an identical retry
 * without storing the request: it may hold a card number, and an unkeyed hash of a card number
 * can be brute-forced.
 */
export function requestHash(key: Uint8Array<ArrayBuffer>, request: unknown): Promise<string> {
  return hmacHex(key, JSON.stringify(request));
}

/** A stable, opaque organisation unit id per merchant entity, for the JWTs' OrgUnitId. */
export async function orgUnitId(key: Uint8Array<ArrayBuffer>, scope: SessionScope): Promise<string> {
  return (await hmacHex(key, `org-unit:${scope.username}:${scope.entity}`)).slice(0, 24);
}

export const THREEDS_PATH = '/verifications/customers/3ds';
