import type { ChallengeResult, CodeAttempt } from './challenge-rules';
import type { ClaimOutcome } from '../storage/claims';
import { objectClient, type ObjectNamespace, type Remote } from '../storage/object-client';
import type { ApiVersion } from '../media-types';
import type { LiveBegin, LiveChallenge, LiveResult, LiveShow, MethodRecord, PreparedCard } from './live/live-state';
import { LIVE_AUTH_LEASE_MS, LIVE_SENDING_LEASE_MS, METHOD_WINDOW_MS } from './live/live-state';
import type { SessionScope } from './session-record';

/**
 * The RPC interface of a 3DS transaction's Durable Object (src/threeds/transaction/): what the
 * object answers and what the 3DS steps call, in a file below both. The steps reach the object
 * only through {@link ThreeDsTransactionApi} (never its class), and the object implements
 * {@link ThreeDsTransactionMethods}: neither imports the other (docs/README.md "The layers").
 */

/**
 * What the transaction's event needs and the steps know only when they call: whose it is, and how
 * the merchant's answers are rendered (the API version and base URL of its authenticate).
 */
export interface EventScope {
  username: string;
  entity: string;
  transactionReference: string;
  baseUrl: string;
  apiVersion: ApiVersion;
}

/** A stored step answer plus what the object needs to know about it. */
export interface InitClaim {
  answer: Record<string, unknown>;
  ddcJti: string;
}

export interface AuthClaim {
  answer: Record<string, unknown>;
  version: string;
  brands: string[];
  scenario: string;
  /** Present when authenticate answered `challenged`: the challenge this object will decide. */
  challenge?: { reference: string; expiresAt: number; onSuccess: string };
}

export type CollectOutcome =
  /** The collection's SessionId: this post's, or the first post's of the same JWT. */
  | { kind: 'collected'; sessionId: string }
  /** No deviceDataInitialize issued this JWT for the transaction (or the session ended). */
  | { kind: 'unknown' };

/**
 * `shown`: the challenge is open (first showing, or the same JWT again); `used`: another JWT
 * already showed it; `ended`: it has its one result; `unknown`: no such challenge.
 */
export type ShowOutcome = { kind: 'shown'; attemptsLeft: number } | { kind: 'used' | 'ended' | 'unknown' };

export type SubmitOutcome =
  { kind: 'retry'; attemptsLeft: number } | { kind: 'ended'; result: ChallengeResult } | { kind: 'unknown' };

/** What authenticate decided that verification needs, with the challenge's one result. */
export type ConcludeOutcome =
  | { kind: 'ended'; result: ChallengeResult; session: { brands: string[]; version: string; onSuccess: string } }
  | { kind: 'unknown' };

/** What GET of a transaction is built from ({@link ThreeDsTransactionMethods.transaction}). */
export interface TransactionFacts {
  createdAt: number;
  updatedAt: number;
  /** Test: what authenticate decided. */
  auth?: AuthClaim;
  /** Test: the challenge's one result, once it ended. */
  challengeResult?: ChallengeResult;
  /** Live: the authentication's answer (or `lost`), and its challenge with its result, if any. */
  live?: {
    answer?: Record<string, unknown>;
    lost: boolean;
    decidedAt: number;
    challenge?: { challenge: LiveChallenge; md: string; result?: LiveResult };
  };
}

/** How the sandbox control ends a challenge (docs/threeds.md "Sandbox controls"). */
export type SandboxResult = 'passed' | 'failed' | 'cancelled' | 'timedOut';

/** The object's RPC methods as the object implements them (a method may answer synchronously). */
export interface ThreeDsTransactionMethods {
  initialize(
    requestHash: string,
    candidate: InitClaim,
    now: number,
    sessionEnd: number,
  ): Promise<ClaimOutcome<InitClaim>>;
  collect(ddcJti: string, sessionId: string, now: number): CollectOutcome;
  authenticate(
    requestHash: string,
    candidate: AuthClaim,
    now: number,
    sessionEnd: number,
    projectionKey: string,
    scope: EventScope,
    collection?: { reference: string | null; assumed: boolean },
  ): Promise<ClaimOutcome<AuthClaim> | { kind: 'stale'; collected: boolean }>;
  showChallenge(reference: string, jti: string, now: number): Promise<ShowOutcome>;
  submitChallenge(reference: string, attempt: CodeAttempt, now: number): Promise<SubmitOutcome>;
  concludeChallenge(reference: string, now: number): Promise<ConcludeOutcome>;
  completeChallenge(reference: string, result: SandboxResult, now: number): Promise<ConcludeOutcome>;
  transaction(now: number): Promise<TransactionFacts | undefined>;
  livePrepared(card: PreparedCard, replace: boolean, now: number): PreparedCard;
  liveCollect(
    ddcJti: string,
    sessionId: string,
    now: number,
    facts: Record<string, unknown>,
  ): CollectOutcome & { prepared?: PreparedCard; method?: MethodRecord };
  liveAddFacts(facts: Record<string, unknown>, now: number): void;
  liveMethodCompleted(now: number): boolean;
  liveAwaitMethod(until: number): Promise<MethodRecord>;
  liveBegin(
    requestHash: string,
    leaseId: string,
    now: number,
    sessionEnd: number,
    scope: EventScope,
  ): Promise<LiveBegin>;
  liveSending(leaseId: string, now: number): Promise<boolean>;
  liveComplete(
    leaseId: string,
    answer: Record<string, unknown>,
    now: number,
    challenge?: LiveChallenge,
  ): Promise<Record<string, unknown> | undefined>;
  liveLose(leaseId: string, now: number): Promise<void>;
  liveAbandon(leaseId: string): void;
  liveShow(reference: string, jti: string, md: string, now: number): LiveShow;
  liveChallenge(now: number): { challenge: LiveChallenge; md: string; result?: LiveResult } | undefined;
  liveDecide(reference: string, answer: Record<string, unknown>, now: number): Promise<LiveResult | undefined>;
}

/** A transaction's object as the steps call it: every method answers a promise. */
export type ThreeDsTransactionApi = Remote<ThreeDsTransactionMethods>;

/**
 * Calls that may wait inside the object: for a live authentication's single flight (its lease
 * before and after the AReq goes out), for the 3DS Method (METHOD_WINDOW_MS). Their deadline is
 * that wait plus the usual one; every other call gets the usual deadline.
 */
export const TRANSACTION_WAITS: Readonly<Record<string, number>> = {
  // The holder's lease before the AReq, then renewed for the AReq and its answer: a caller
  // waiting for that answer must not give up just before it lands.
  liveBegin: LIVE_AUTH_LEASE_MS + LIVE_SENDING_LEASE_MS,
  liveAwaitMethod: METHOD_WINDOW_MS,
};

/** The name of a transaction's object: the session scope, which holds no card data. */
export const threeDsTransactionName = (s: SessionScope): string =>
  `${s.username}:${s.entity}:${s.transactionReference}`;

/** A transaction's object and its id (the JWTs of the browser pages carry the id). */
export function threeDsTransaction(
  ns: ObjectNamespace,
  scope: SessionScope,
  timeoutMs: number,
): { owner: ThreeDsTransactionApi; id: string } {
  const id = ns.idFromName(threeDsTransactionName(scope));
  return {
    owner: objectClient<ThreeDsTransactionApi>(() => ns.get(id), 'ThreeDsTransaction', timeoutMs, TRANSACTION_WAITS),
    id: id.toString(),
  };
}

/** The transaction's object named by an id from one of our signed JWTs; undefined if it is not an id. */
export function threeDsTransactionById(
  ns: ObjectNamespace,
  id: string,
  timeoutMs: number,
): ThreeDsTransactionApi | undefined {
  let objectId: DurableObjectId;
  try {
    objectId = ns.idFromString(id);
  } catch {
    return undefined;
  }
  return objectClient<ThreeDsTransactionApi>(
    () => ns.get(objectId),
    'ThreeDsTransaction',
    timeoutMs,
    TRANSACTION_WAITS,
  );
}
