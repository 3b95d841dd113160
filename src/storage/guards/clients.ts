import { withDeadline } from '../storage-error';
import type { SessionScope } from '../threeds-store';
import { LEASE_MS } from './claims';
import { LIVE_AUTH_LEASE_MS, LIVE_SENDING_LEASE_MS, METHOD_WINDOW_MS } from './live-transaction';
import type { ThreeDsGuard } from './threeds-guard';
import type { NamespaceGuard } from './namespace-guard';
import type { TokenGuard } from './token-guard';

/**
 * Typed handles on the guard objects for the domain steps. A call that fails (the object is
 * overloaded, reset, unreachable) or outlasts its deadline becomes a StorageError,
 * answered 503 with Retry-After like a KV failure: the step's state is then either unchanged or
 * the claim its retry completes (docs/storage.md "Deadlines").
 */

/** The object's RPC methods, each answering a promise of its plain result. */
type Api<T, K extends keyof T> = {
  [M in K]: T[M] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

export type ThreeDsGuardApi = Api<
  ThreeDsGuard,
  | 'initialize'
  | 'collect'
  | 'authenticate'
  | 'showChallenge'
  | 'submitChallenge'
  | 'concludeChallenge'
  | 'completeChallenge'
  | 'livePrepared'
  | 'liveCollect'
  | 'liveAddFacts'
  | 'liveMethodCompleted'
  | 'liveAwaitMethod'
  | 'liveBegin'
  | 'liveSending'
  | 'liveComplete'
  | 'liveLose'
  | 'liveAbandon'
  | 'liveShow'
  | 'liveChallenge'
  | 'liveDecide'
>;

export type TokenGuardApi = Api<
  TokenGuard,
  | 'claim'
  | 'recorded'
  | 'released'
  | 'retire'
  | 'retirementRecorded'
  | 'current'
  | 'unwritten'
  | 'update'
  | 'conflict'
  | 'getConflict'
  | 'liveToken'
>;

/**
 * Calls that may wait inside the object: for another caller's write lease (up to LEASE_MS: the
 * token claims, and a token's `current` and `update`, which wait for a write in flight), for a
 * live authentication's single flight (its lease before and after the AReq goes out), for the 3DS
 * Method (METHOD_WINDOW_MS).
 * Their deadline is that wait plus the usual one; every other call gets the usual deadline.
 */
const WAITS: Record<string, number> = {
  claim: LEASE_MS,
  retire: LEASE_MS,
  current: LEASE_MS,
  unwritten: LEASE_MS,
  update: LEASE_MS,
  // The holder's lease before the AReq, then renewed for the AReq and its answer: a caller
  // waiting for that answer must not give up just before it lands.
  liveBegin: LIVE_AUTH_LEASE_MS + LIVE_SENDING_LEASE_MS,
  liveAwaitMethod: METHOD_WINDOW_MS,
};

/** The deadline of a call to an object's method: the wait it may do inside the object, plus the storage deadline. */
export function callDeadlineMs(method: string, timeoutMs: number): number {
  return (WAITS[method] ?? 0) + timeoutMs;
}

/** The name of a transaction's object: the session scope, which holds no card data. */
export const threeDsGuardName = (s: SessionScope): string => `${s.username}:${s.entity}:${s.transactionReference}`;

/**
 * The name of a merchant card's object: the merchant, the keyed hash of the card, and the
 * namespace when there is one (a card has one token per namespace, and one outside any).
 */
export const tokenGuardName = (username: string, fingerprint: string, namespace?: string): string =>
  namespace === undefined ? `${username}:${fingerprint}` : `${username}:${fingerprint}:ns:${namespace}`;

/** The name of a merchant namespace's object (a username holds no `:`). */
export const namespaceGuardName = (username: string, namespace: string): string => `${username}:${namespace}`;

export type NamespaceGuardApi = Api<NamespaceGuard, 'reserve' | 'confirm' | 'remove' | 'list'>;

/** A transaction's guard and its id (the JWTs of the browser pages carry the id). */
export function threeDsGuard(
  ns: DurableObjectNamespace<ThreeDsGuard>,
  scope: SessionScope,
  timeoutMs: number,
): { guard: ThreeDsGuardApi; id: string } {
  const id = ns.idFromName(threeDsGuardName(scope));
  return { guard: guarded<ThreeDsGuardApi>(ns.get(id), 'ThreeDsGuard', timeoutMs), id: id.toString() };
}

/** The guard named by an id from one of our signed JWTs; undefined if it is not an id. */
export function threeDsGuardById(
  ns: DurableObjectNamespace<ThreeDsGuard>,
  id: string,
  timeoutMs: number,
): ThreeDsGuardApi | undefined {
  let objectId: DurableObjectId;
  try {
    objectId = ns.idFromString(id);
  } catch {
    return undefined;
  }
  return guarded<ThreeDsGuardApi>(ns.get(objectId), 'ThreeDsGuard', timeoutMs);
}

export function tokenGuard(
  ns: DurableObjectNamespace<TokenGuard>,
  username: string,
  fingerprint: string,
  namespace: string | undefined,
  timeoutMs: number,
): TokenGuardApi {
  const name = tokenGuardName(username, fingerprint, namespace);
  return guarded<TokenGuardApi>(ns.get(ns.idFromName(name)), 'TokenGuard', timeoutMs);
}

export function namespaceGuard(
  ns: DurableObjectNamespace<NamespaceGuard>,
  username: string,
  namespace: string,
  timeoutMs: number,
): NamespaceGuardApi {
  const name = namespaceGuardName(username, namespace);
  return guarded<NamespaceGuardApi>(ns.get(ns.idFromName(name)), 'NamespaceGuard', timeoutMs);
}

/**
 * Wraps every method call of a stub: a deadline, and a failure as a StorageError naming the call.
 */
function guarded<T extends object>(stub: object, what: string, timeoutMs: number): T {
  return new Proxy(stub, {
    get(target, property) {
      // Never thenable: an RPC stub answers any property name, `then` included.
      if (property === 'then') return undefined;
      const method = Reflect.get(target, property) as unknown;
      if (typeof property !== 'string' || typeof method !== 'function') return method;
      const deadline = callDeadlineMs(property, timeoutMs);
      return (...args: unknown[]) =>
        withDeadline(
          // Reflect.apply, not method.apply: on an RPC stub, `.apply` would name a remote property.
          Promise.resolve().then(() => Reflect.apply(method, target, args) as Promise<unknown>),
          deadline,
          `${what}.${property}`,
          // An exception thrown by the object's own code is a bug, not an outage: it stays a 500.
          isOwnException,
        );
    },
  }) as T;
}

/**
 * Whether an error is an exception the object's own code threw (the runtime marks those
 * `remote`), rather than the platform failing to reach or run the object (`retryable`,
 * `overloaded`, or no mark).
 */
function isOwnException(e: unknown): boolean {
  const flags = e as { remote?: boolean; retryable?: boolean; overloaded?: boolean } | null;
  return flags?.remote === true && flags.retryable !== true && flags.overloaded !== true;
}

/**
 * Tells a guard how a write lease ended (`recorded` / `released`). Tried twice, since a transient
 * fault is the likely reason for a failure; if both fail, the lease simply runs out
 * (`LEASE_MS`) and the next identical request writes the same record again. Never throws:
 * the caller's answer (or its original error) stands either way.
 */
export async function settleLease(settle: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await settle();
      return;
    } catch {
      // tried again, then left to the lease's expiry
    }
  }
}
