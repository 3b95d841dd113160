import type { P256PublicJwk } from '../emv/secure-channel';
import type { ChallengeResult, CodeAttempt } from './challenge-rules';
import type { ClaimOutcome } from '../storage/claims';
import { objectClient, type FailedCall, type ObjectNamespace, type Remote } from '../storage/object-client';
import { objectStorage } from '../storage/object-storage';
import type { ApiVersion } from '../media-types';
import type { FieldError } from '../failures';
import type { RequestorBlock } from '../merchants/requestor';
import type { AuthenticateRequest } from '../schemas/threeds-requests-v3';
import type { MerchantInitiatedRequest } from '../schemas/threeds-requests';
import type { AReqCard } from './live/areq-builder';
import type {
  FetchedResult,
  LiveChallenge,
  LiveResult,
  LiveShow,
  LiveVerified,
  MethodRecord,
  PreparedCard,
} from './live/live-state';
import { liveRunMs, resultFetchMs } from './live/live-state';
import type { SessionScope } from './session-record';
import type { ExemptionResult } from './exemptions';
import type { SeriesSetup, SeriesUseOutcome, ThreeRiUse } from './series-rules';
import type { DecoupledIssuer } from './challenge-rules';

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
  /** `recurring`: the series to keep if the final outcome is Y or A (series-rules.ts). */
  series?: SeriesSetup;
  /** The exemption asked for and its result (docs/threeds.md "Exemptions"): on every answer of the transaction. */
  exemption?: ExemptionResult;
  /**
   * Present when authenticate answered `challenged`: the challenge this object will decide; or
   * `decoupled`: the authentication the test issuer decides out of band (`decoupled`: what it will
   * do), `expiresAt` being the decoupled time's end.
   */
  challenge?: {
    reference: string;
    expiresAt: number;
    onSuccess: string;
    decoupled?: DecoupledIssuer;
    /** An app's challenge (CONTRACT.md §12): what the test issuer's ACS keeps of the SDK and the ids. */
    app?: AppChallengeFacts;
  };
}

/** The test issuer's ACS's answer to an app's CReq: a CRes (a compact JWE), or an Erro (plain JSON). */
export type AppMessageAnswer = { kind: 'cres'; jwe: string } | { kind: 'erro'; erro: Record<string, unknown> };

/** What an app challenge's ACS knows of it (src/threeds/transaction/app-challenge.ts): no key, only public facts. */
export interface AppChallengeFacts {
  acsTransID: string;
  threeDSServerTransID: string;
  sdkTransID: string;
  sdkEphemPubKey: P256PublicJwk;
  sdkReferenceNumber: string;
  messageVersion: string;
  /** What verification answers when the code is right (the scenario's): the final CRes says the same. */
  onSuccess: string;
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
  | {
      kind: 'ended';
      result: ChallengeResult;
      session: { brands: string[]; version: string; onSuccess: string; exemption?: ExemptionResult };
    }
  /** A decoupled authentication whose issuer has not answered yet, and until when it may. */
  | {
      kind: 'pending';
      session: { brands: string[]; version: string; onSuccess: string; exemption?: ExemptionResult };
      expiresAt: number;
    }
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
    /** The series authenticate set up, kept if the final outcome is Y or A. */
    series?: SeriesSetup;
    challenge?: { challenge: LiveChallenge; md: string; result?: LiveResult };
  };
}

/** How the sandbox control ends a challenge (docs/threeds.md "Sandbox controls"). */
export type SandboxResult = 'passed' | 'failed' | 'cancelled' | 'timedOut';

/**
 * The object's RPC methods as the object implements them (a method may answer synchronously). A
 * domain failure the object meets (the provider unavailable) goes back as a value the client
 * throws again (src/storage/object-client.ts `failedCall`): the methods that may answer one say
 * `| FailedCall`, which their callers ({@link ThreeDsTransactionApi}) never see.
 */
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
  submitChallenge(reference: string, attempt: CodeAttempt, now: number, post?: string): Promise<SubmitOutcome>;
  /** An app's CReq to the test issuer's ACS (src/threeds/transaction/app-challenge.ts). */
  appChallengeMessage(jwe: string, now: number): Promise<AppMessageAnswer>;
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
  liveAuthenticate(input: LiveAuthenticateInput): Promise<LiveAuthenticated | FailedCall>;
  liveShow(reference: string, jti: string, md: string, now: number): LiveShow;
  liveChallenge(now: number): { challenge: LiveChallenge; md: string; result?: LiveResult } | undefined;
  liveFetched(reference: string, now: number, baseUrl: string): Promise<FetchedResult | undefined | FailedCall>;
  liveVerified(reference: string, now: number, baseUrl: string): Promise<LiveVerified | undefined | FailedCall>;
  /**
   * merchantInitiated (docs/threeds.md "Series and 3RI"): the 3RI, run in its own transaction's
   * object, which holds its use of the prior's series until its outcome.
   */
  merchantInitiated(input: ThreeRiInput): Promise<LiveAuthenticated | FailedCall>;
  /** The prior transaction of a 3RI: checks and counts the use of its series for `holder`. */
  seriesUse(reference: string, requestHash: string, use: ThreeRiUse, holder: string, now: number): SeriesUseOutcome;
  /** The prior: forgets the use of a 3RI that ended not authenticated, while `holder` holds it. */
  seriesRelease(reference: string, holder: string): void;
}

/** A transaction's object as the steps call it: every method answers a promise. */
export type ThreeDsTransactionApi = Remote<ThreeDsTransactionMethods>;

/**
 * What authenticate in `live` hands the transaction's object (docs/threeds.md "Live"): the
 * validated request and the card, in memory only (the object never stores the card number), and
 * what the object's answer and event need.
 */
export interface LiveAuthenticateInput {
  /** The keyed hash of the validated request: an identical retry gets the same answer. */
  requestHash: string;
  now: number;
  /** The session lives until then (an hour from now). */
  sessionEnd: number;
  scope: EventScope;
  baseUrl: string;
  request: AuthenticateRequest;
  card: AReqCard;
  requestor: RequestorBlock;
  /** `recurring`: the series to keep if the final outcome is Y or A (series-rules.ts). */
  series?: SeriesSetup;
}

/** What a 3RI can answer: never `challenged` (docs/threeds.md "Series and 3RI"). */
export type ThreeRiOutcome = 'authenticated' | 'authenticationFailed' | 'unavailable';

/**
 * What merchantInitiated hands the 3RI's object: the validated request and the card (in memory
 * only), its use of the prior's series, and who decides it: the test issuer (its outcome, by the
 * cardholder name) or, in `live`, the 3DS Server provider with the entity's requestor block.
 */
export interface ThreeRiInput {
  requestHash: string;
  now: number;
  sessionEnd: number;
  scope: EventScope;
  /** The KV key of the session record (test: the claim projects it, as authenticate's). */
  projectionKey: string;
  baseUrl: string;
  request: MerchantInitiatedRequest;
  card: AReqCard;
  /** The prior transaction (same merchant and entity). */
  prior: SessionScope;
  use: ThreeRiUse;
  issuer: { kind: 'test'; outcome: ThreeRiOutcome } | { kind: 'live'; requestor: RequestorBlock };
}

export type LiveAuthenticated =
  /** The answer every identical request gets (stored without a version: the Worker renders it). */
  | { kind: 'answered'; answer: Record<string, unknown>; scenario: string }
  /** Another body is authenticating (or authenticated) this transaction. */
  | { kind: 'conflict' }
  /** The request cannot make a valid AReq (nothing was sent): 400 with these errors. */
  | { kind: 'invalid'; errors: FieldError[] };

/**
 * The waits a call may do inside the object, on top of the usual deadline: authenticate's run in
 * `live` (preparing, the 3DS Method, the AReq: `authenticateTimeoutMs` is the provider's
 * deadline); the fetch of a challenge's RReq (the notification page's, verification's); merchantInitiated's calls to the prior's object (its count, and a release; each
 * with its own deadline), and in `live` its run (preparing and the AReq).
 */
export function transactionWaits(
  authenticateTimeoutMs: number,
  environment: 'test' | 'live' = 'live',
): Readonly<Record<string, number>> {
  const run = liveRunMs(authenticateTimeoutMs);
  // merchantInitiated: the prior's count, and a release before the answer when not authenticated.
  const prior = 2 * objectStorage.timeoutMs;
  // The notification page's and verification's fetch of the RReq, in live.
  const fetch = resultFetchMs(authenticateTimeoutMs);
  return {
    liveAuthenticate: run,
    merchantInitiated: prior + (environment === 'live' ? run : 0),
    liveFetched: fetch,
    liveVerified: fetch,
  };
}

/** The name of a transaction's object: the session scope, which holds no card data. */
export const threeDsTransactionName = (s: SessionScope): string =>
  `${s.username}:${s.entity}:${s.transactionReference}`;

/** A transaction's object and its id (the JWTs of the browser pages carry the id). */
export function threeDsTransaction(
  ns: ObjectNamespace,
  scope: SessionScope,
  timeoutMs: number,
  waits: Readonly<Record<string, number>> = {},
): { owner: ThreeDsTransactionApi; id: string } {
  const id = ns.idFromName(threeDsTransactionName(scope));
  return {
    owner: objectClient<ThreeDsTransactionApi>(() => ns.get(id), 'ThreeDsTransaction', timeoutMs, waits),
    id: id.toString(),
  };
}

/** The transaction's object named by an id from one of our signed JWTs; undefined if it is not an id. */
export function threeDsTransactionById(
  ns: ObjectNamespace,
  id: string,
  timeoutMs: number,
  waits: Readonly<Record<string, number>> = {},
): ThreeDsTransactionApi | undefined {
  let objectId: DurableObjectId;
  try {
    objectId = ns.idFromString(id);
  } catch {
    return undefined;
  }
  return objectClient<ThreeDsTransactionApi>(() => ns.get(objectId), 'ThreeDsTransaction', timeoutMs, waits);
}
