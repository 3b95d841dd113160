import { FailureError, type Failure } from '../failures';
import { withDeadline } from './storage-error';
import type { SessionScope } from '../threeds/session-record';
import type { EventLog } from '../events/event-log';
import { LIVE_AUTH_LEASE_MS, LIVE_SENDING_LEASE_MS, METHOD_WINDOW_MS } from '../threeds/transaction/live-transaction';
import type { ThreeDsTransaction } from '../threeds/transaction/transaction-object';
import type { TokenGroup } from '../tokens/token-group';
import { parseReference } from '../tokens/token-ids';

/**
 * Typed handles on the guard objects for the domain steps. A call that fails (the object is
 * overloaded, reset, unreachable) or outlasts its deadline becomes a StorageError,
 * answered 503 with Retry-After like a KV failure: the step's state is then either unchanged or
 * the change its retry finds done (docs/storage.md "Deadlines and failures").
 */

/** The object's RPC methods, each answering a promise of its plain result. */
type Api<T, K extends keyof T> = {
  [M in K]: T[M] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

export type ThreeDsTransactionApi = Api<
  ThreeDsTransaction,
  | 'initialize'
  | 'collect'
  | 'authenticate'
  | 'showChallenge'
  | 'submitChallenge'
  | 'concludeChallenge'
  | 'completeChallenge'
  | 'transaction'
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

export type TokenGroupApi = Api<
  TokenGroup,
  'create' | 'read' | 'list' | 'update' | 'conflict' | 'acceptConflict' | 'remove'
>;

/** A merchant's event log (docs/events.md): what owners append to and the events routes read. */
export type EventLogApi = Api<EventLog, 'append' | 'list' | 'redeliver' | 'ping'>;

/**
 * Calls that may wait inside the object: for a live authentication's single flight (its lease
 * before and after the AReq goes out), for the 3DS Method (METHOD_WINDOW_MS). Their deadline is
 * that wait plus the usual one; every other call gets the usual deadline.
 */
const WAITS: Record<string, number> = {
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
export const threeDsTransactionName = (s: SessionScope): string => `${s.username}:${s.entity}:${s.transactionReference}`;

/**
 * The name of the object that owns a merchant's token for a card: the namespace's object when
 * there is a namespace (it holds the namespace's cards), else the card's own (the merchant and
 * the keyed hash of the card). A username holds no `:`.
 */
export const tokenGroupName = (username: string, of: { namespace: string } | { fingerprint: string }): string =>
  'namespace' in of ? `namespace:${username}:${of.namespace}` : `card:${username}:${of.fingerprint}`;

/** The name of a merchant's event log: its username (which holds no `:`). */
export const eventLogName = (username: string): string => username;

/**
 * The merchant's event log, each call with the deadline: an owner appending from its alarm gets a
 * StorageError on failure or timeout and appends again later (the append is idempotent by eventId).
 */
export function eventLog(ns: DurableObjectNamespace<EventLog>, username: string, timeoutMs: number): EventLogApi {
  return guarded<EventLogApi>(ns.get(ns.idFromName(eventLogName(username))), 'EventLog', timeoutMs);
}

/** A transaction's guard and its id (the JWTs of the browser pages carry the id). */
export function threeDsTransaction(
  ns: DurableObjectNamespace<ThreeDsTransaction>,
  scope: SessionScope,
  timeoutMs: number,
): { guard: ThreeDsTransactionApi; id: string } {
  const id = ns.idFromName(threeDsTransactionName(scope));
  return { guard: guarded<ThreeDsTransactionApi>(ns.get(id), 'ThreeDsTransaction', timeoutMs), id: id.toString() };
}

/** The guard named by an id from one of our signed JWTs; undefined if it is not an id. */
export function threeDsTransactionById(
  ns: DurableObjectNamespace<ThreeDsTransaction>,
  id: string,
  timeoutMs: number,
): ThreeDsTransactionApi | undefined {
  let objectId: DurableObjectId;
  try {
    objectId = ns.idFromString(id);
  } catch {
    return undefined;
  }
  return guarded<ThreeDsTransactionApi>(ns.get(objectId), 'ThreeDsTransaction', timeoutMs);
}

/** The object that owns (or will own) the merchant's token for a card, by its name. */
export function tokenGroup(
  ns: DurableObjectNamespace<TokenGroup>,
  username: string,
  of: { namespace: string } | { fingerprint: string },
  timeoutMs: number,
): TokenGroupApi {
  const name = tokenGroupName(username, of);
  return guarded<TokenGroupApi>(ns.get(ns.idFromName(name)), 'TokenGroup', timeoutMs);
}

/**
 * The object that owns a token and the token's id, from the token's reference (the last segment
 * of its href); undefined when the reference names none.
 */
export function tokenGroupOfReference(
  ns: DurableObjectNamespace<TokenGroup>,
  reference: string,
  timeoutMs: number,
): { owner: TokenGroupApi; tokenId: string } | undefined {
  const parsed = parseReference(reference);
  if (parsed === undefined) return undefined;
  let objectId: DurableObjectId;
  try {
    objectId = ns.idFromString(parsed.ownerId);
  } catch {
    return undefined;
  }
  return { owner: guarded<TokenGroupApi>(ns.get(objectId), 'TokenGroup', timeoutMs), tokenId: parsed.tokenId };
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
      return async (...args: unknown[]) => {
        const answer = await withDeadline(
          // Reflect.apply, not method.apply: on an RPC stub, `.apply` would name a remote property.
          Promise.resolve().then(() => Reflect.apply(method, target, args) as Promise<unknown>),
          deadline,
          `${what}.${property}`,
          // An exception thrown by the object's own code is a bug, not an outage: it stays a 500.
          isOwnException,
        );
        if (isFailed(answer)) throw new FailureError(answer[FAILED], `${what}.${property}: ${answer[FAILED].kind}`);
        return answer;
      };
    },
  }) as T;
}

/**
 * A domain failure an object met (a token sealed with a key no longer configured), sent back as
 * a value: an exception's class does not cross RPC, so the Worker could not tell it from a bug.
 * The client throws it again as the FailureError it was ({@link guarded}).
 */
export interface FailedCall {
  [FAILED]: Failure;
}

/** The key of a failure sent back as a value: a name no object's answer has (`~`, like the outage mark). */
const FAILED = '~failed';

/** The answer an object gives for a FailureError its code threw. */
export function failedCall(e: FailureError): FailedCall {
  return { [FAILED]: e.failure };
}

function isFailed(answer: unknown): answer is FailedCall {
  return typeof answer === 'object' && answer !== null && FAILED in answer;
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
 * Tells a transaction's object how a live authentication's lease ended (`liveLose`,
 * `liveAbandon`). Tried twice, since a transient fault is the likely reason for a failure; if
 * both fail, the lease simply runs out (live-transaction.ts). Never throws: the caller's answer
 * (or its original error) stands either way.
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
