import { DurableObject } from 'cloudflare:workers';
import type { CodeAttempt } from '../challenge-rules';
import type { ClaimOutcome } from '../../storage/claims';
import { AlarmRunner } from '../../storage/alarm-runner';
import { failureAsValue, type FailedCall } from '../../storage/object-client';
import { SchemaVersion } from '../../storage/schema-version';
import { settingsOf } from '../../config/settings';
import { objectProvider } from '../live/challenge-watch';
import type {
  FetchedResult,
  LiveChallenge,
  LiveResult,
  LiveShow,
  LiveVerified,
  MethodRecord,
  PreparedCard,
} from '../live/live-state';
import type {
  AppMessageAnswer,
  AuthClaim,
  CollectOutcome,
  ConcludeOutcome,
  EventScope,
  InitClaim,
  LiveAuthenticated,
  LiveAuthenticateInput,
  SandboxResult,
  ThreeRiInput,
  ShowOutcome,
  SubmitOutcome,
  ThreeDsTransactionMethods,
  TransactionFacts,
} from '../transaction-api';
import { LiveRuns } from './live-authentication';
import { LiveResults } from './live-results';
import type { SeriesUseOutcome, ThreeRiUse } from '../series-rules';
import { priorLinks, runLiveThreeRi, runTestThreeRi, type ThreeRiHost } from './three-ri-run';
import { lostAnswer } from './live-authentication';
import { concludeChallenge, NOT_COMPLETED, sandboxEnding, type ChallengeEnding } from './challenge-conclusion';
import {
  closeAndWipe,
  createTables,
  nextAlarm,
  nothingLeft,
  TABLES_VERSION,
  transactionFacts,
  alarmRound,
  type TransactionParts,
} from './session-end';
import { claimAuthentication, claimInit, staleCollection } from './transaction-claims';
import { transactionParts } from './transaction-parts';
import { unknownAppChallenge } from './app-challenge';

/**
 * One Durable Object per 3DS transaction (merchant, entity, transactionReference): the place
 * where every decision about the transaction that must be strongly consistent is made once,
 * whichever Cloudflare location the merchant's server or the cardholder's browser reaches.
 * It implements the transaction's RPC interface (src/threeds/transaction-api.ts), which the 3DS
 * steps call, and is split by what it decides: the session and its device data collection
 * (session.ts); the first bodies (transaction-claims.ts); the test issuer's challenge
 * (test-challenge.ts, challenge-conclusion.ts); a 3RI (three-ri-run.ts); live: the one
 * authentication, run here (live-authentication.ts), its state (live-transaction.ts), its
 * challenge's result fetched here (live-results.ts) and the watch of an open challenge
 * (live-watch.ts); the final outcome's event, series and hold
 * (final-outcome.ts, transaction-events.ts); what a call leaves to do after it commits
 * (call-effects.ts); the session's end, the alarm and the storage freed (session-end.ts); the
 * parts wired to each other (transaction-parts.ts). This
 * object is the truth for all of it and the only writer of its KV projection (docs/storage.md);
 * every step asks it, never KV. The session lives an hour from its first step, and an hour from
 * authenticate once that comes; every call takes the caller's clock.
 */

export class ThreeDsTransaction extends DurableObject<Env> implements ThreeDsTransactionMethods {
  /** The parts, as what decides across them takes them (session-end.ts). */
  private readonly parts: TransactionParts;
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  /**
   * Whether the object has its tables: none until a call that records something needs them (a GET
   * of an unknown reference creates nothing), and none again once its storage is freed.
   */
  private hasTables: boolean;
  /** Which version of its tables the object has: one row, read at the start (src/storage/schema-version.ts). */
  private readonly tables: SchemaVersion;
  /** Live authenticate's runs under way in this instance (live-authentication.ts). */
  private readonly runs: LiveRuns;
  /** The live challenge's result, fetched here (live-results.ts). */
  private readonly results: LiveResults;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'ThreeDsTransaction');
    this.parts = transactionParts(ctx, env, {
      alarms: this.alarms,
      scheduleAlarm: () => this.scheduleAlarm(),
      hasTables: () => this.hasTables,
    });
    this.runs = new LiveRuns(this.parts.live, () => this.threeRiHost());
    this.results = new LiveResults(this.parts.live, () => objectProvider.of(env));
    this.tables = new SchemaVersion(ctx.storage.sql, TABLES_VERSION, 'session');
    const found = this.tables.found();
    this.hasTables = found !== 'none';
    // An object made by an earlier version gets the tables and columns added since, once.
    if (found === 'older') this.createTables(true);
  }

  /** deviceDataInitialize: the first body's answer, for it and every retry. */
  async initialize(
    requestHash: string,
    candidate: InitClaim,
    now: number,
    sessionEnd: number,
  ): Promise<ClaimOutcome<InitClaim>> {
    this.createTables();
    this.expire(now);
    const { outcome, started } = claimInit(this.parts, requestHash, candidate, now, sessionEnd);
    if (started) await this.scheduleAlarm();
    return outcome;
  }

  /** The DDC page: records the collection for this transaction's DDC JWT, once. */
  collect(ddcJti: string, sessionId: string, now: number): CollectOutcome {
    if (!this.hasTables) return { kind: 'unknown' };
    this.expire(now);
    return this.parts.session.collect(ddcJti, sessionId);
  }

  /**
   * authenticate: the first body's answer; opens its challenge, extends the session to an hour
   * from now and stages the session record's projection to KV (under `projectionKey`) in the same
   * atomic step, so every identical request gets the answer at once and nobody waits for KV. When
   * the candidate's risk decision depends on the device data collection, `collection` says what
   * the caller assumed (collected when it has a collectionReference): a wrong assumption claims
   * nothing and answers `stale` with the truth, so the usual case costs one call, not two.
   */
  async authenticate(
    requestHash: string,
    candidate: AuthClaim,
    now: number,
    sessionEnd: number,
    projectionKey: string,
    scope: EventScope,
    collection?: { reference: string | null; assumed: boolean },
  ): Promise<ClaimOutcome<AuthClaim> | { kind: 'stale'; collected: boolean }> {
    this.createTables();
    return this.parts.effects.around((): ClaimOutcome<AuthClaim> | { kind: 'stale'; collected: boolean } => {
      this.expire(now);
      const stale = collection && staleCollection(this.parts, collection, now);
      if (stale) return stale;
      return claimAuthentication(this.parts, candidate, { requestHash, now, sessionEnd, projectionKey, scope });
    });
  }

  /** The challenge page: shows the challenge from its JWT while it is open (test-challenge.ts). */
  showChallenge(reference: string, jti: string, now: number): Promise<ShowOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    // A challenge past its 10 minutes ends here, and its result is projected.
    return this.decided(now, () => this.parts.challenges.show(reference, jti, now));
  }

  /** One form post (`post`: its id, so that a repost is not counted again): see test-challenge.ts. */
  submitChallenge(reference: string, attempt: CodeAttempt, now: number, post?: string): Promise<SubmitOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    return this.decided(now, () => this.parts.challenges.submit(reference, attempt, now, post));
  }

  /** An app's CReq to the test issuer's ACS: a CRes or an Erro (app-challenge.ts). */
  appChallengeMessage(jwe: string, now: number): Promise<AppMessageAnswer> {
    if (!this.hasTables) return Promise.resolve(unknownAppChallenge());
    return this.parts.effects.around(() => {
      this.expire(now);
      return this.parts.app.exchange(jwe, now);
    });
  }

  /**
   * verification: the challenge's one result, with what authenticate decided, when `reference` is
   * the challenge authenticate opened; a challenge still open ends here as not completed.
   */
  concludeChallenge(reference: string, now: number): Promise<ConcludeOutcome> {
    return this.conclude(reference, now, NOT_COMPLETED);
  }

  /**
   * The sandbox control (test only): ends an open challenge as the caller says, as if the
   * cardholder had; a challenge already ended keeps its one result, which is answered instead.
   */
  completeChallenge(reference: string, result: SandboxResult, now: number): Promise<ConcludeOutcome> {
    return this.conclude(reference, now, sandboxEnding(result));
  }

  /**
   * What the transaction is now, for GET of the transaction (docs/threeds.md "Retrieve a
   * transaction"): when it started and last changed, what authenticate decided, and the
   * challenge's one result once there is one (test), or the live authentication's answer and its
   * challenge's result (live). Undefined when there is no session. Reads only: an open challenge
   * stays open (one past its 10 minutes ends as expired, as at any call).
   */
  transaction(now: number): Promise<TransactionFacts | undefined> {
    if (!this.hasTables) return Promise.resolve(undefined);
    return this.parts.effects.around((): TransactionFacts | undefined => {
      this.expire(now);
      return transactionFacts(this.parts, now);
    });
  }

  // --- live (docs/threeds.md "Live"): the state of a real authentication (live-transaction.ts) ---

  /** A card prepared at the 3DS Server provider (kept unless `replace`). */
  livePrepared(card: PreparedCard, replace: boolean, now: number): PreparedCard {
    this.createTables();
    this.expire(now);
    return this.parts.live.storePrepared(card, replace);
  }

  /**
   * The live DDC page: records the collection for this transaction's DDC JWT (as `collect`), the
   * browser's facts, and starts the 3DS Method when the prepared card's ACS has one.
   */
  liveCollect(
    ddcJti: string,
    sessionId: string,
    now: number,
    facts: Record<string, unknown>,
  ): CollectOutcome & { prepared?: PreparedCard; method?: MethodRecord } {
    if (!this.hasTables) return { kind: 'unknown' };
    const collected = this.collect(ddcJti, sessionId, now);
    if (collected.kind === 'unknown') return collected;
    return { ...collected, ...this.parts.live.collect(facts, now) };
  }

  /** What the DDC page's script learned of the browser after the page loaded. */
  liveAddFacts(facts: Record<string, unknown>, now: number): void {
    if (!this.hasTables) return;
    this.expire(now);
    this.parts.live.addFacts(facts);
  }

  /** The ACS's 3DS Method notification reached the service. */
  liveMethodCompleted(now: number): boolean {
    if (!this.hasTables) return false;
    this.expire(now);
    return this.parts.live.methodCompleted(now);
  }

  /**
   * authenticate in `live` (live-authentication.ts): the first body runs it here, in one run
   * (prepare, the 3DS Method, the AReq, the answer); an identical body waits on that run; the
   * session lives an hour from now. Nothing waits on a lease: a run lost with its instance is
   * taken over (never sent) or lost (sent) by the next call.
   */
  liveAuthenticate(input: LiveAuthenticateInput): Promise<LiveAuthenticated | FailedCall> {
    this.createTables();
    return this.runs.authenticate(input, (work) => this.liveRunning(input, work));
  }

  /**
   * merchantInitiated (three-ri-run.ts): the 3RI, run here. In `live`, one run as authenticate's
   * (one AReq, ever; identical bodies wait on it); in `test`, the built-in issuer decides here.
   * Either way the prior's object counts the use first, and this object's hold on it is settled
   * with the outcome.
   */
  merchantInitiated(input: ThreeRiInput): Promise<LiveAuthenticated | FailedCall> {
    this.createTables();
    const issuer = input.issuer;
    // The prior's object failing is a 503 for the caller: a domain failure goes back as a value.
    if (issuer.kind === 'test')
      return failureAsValue(
        this.parts.effects.around(() => {
          this.expire(input.now);
          return runTestThreeRi(this.threeRiHost(), this.parts, input, issuer.outcome);
        }),
      );
    return this.runs.run(
      input,
      lostAnswer(input),
      (work) => this.liveRunning(input, work),
      (begun) => runLiveThreeRi(this.threeRiHost(), input, issuer.requestor, begun),
    );
  }

  /** The object's side of a live run: the session and event scope at its start, the alarm after. */
  private liveRunning(
    input: { now: number; scope: EventScope; sessionEnd: number },
    work: (onStart: () => void) => Promise<LiveAuthenticated | FailedCall>,
  ): Promise<LiveAuthenticated | FailedCall> {
    return this.parts.effects.around(async () => {
      this.expire(input.now);
      const done = await work(() => {
        // A run starts: the transaction's event scope, and the session an hour from now.
        this.parts.completion.keepScope(input.scope, input.now);
        this.parts.session.startOrExtend(input.sessionEnd);
      });
      // The AReq's answer settles it (or the run started the session): the alarm is set again.
      this.parts.effects.keepAlarm();
      return done;
    });
  }

  /** The challenge page's relay: the challenge to post to the ACS, once its JWT is checked. */
  liveShow(reference: string, jti: string, md: string, now: number): LiveShow {
    if (!this.hasTables) return { kind: 'unknown' };
    this.expire(now);
    return this.parts.live.show(reference, jti, md);
  }

  /** The transaction's live challenge, its MD and its result if decided. */
  liveChallenge(now: number): { challenge: LiveChallenge; md: string; result?: LiveResult } | undefined {
    if (!this.hasTables) return undefined;
    this.expire(now);
    return this.parts.live.challenge();
  }

  /** The notification page: the live challenge's result, the RReq fetched here if none is recorded (live-results.ts). */
  liveFetched(reference: string, now: number, baseUrl: string): Promise<FetchedResult | undefined | FailedCall> {
    return this.liveResult(now, () => this.results.fetched(reference, baseUrl));
  }

  /** verification: the live challenge's one result, fetched here, or not completed once none can come. */
  liveVerified(reference: string, now: number, baseUrl: string): Promise<LiveVerified | undefined | FailedCall> {
    return this.liveResult(now, () => this.results.verified(reference, now, baseUrl));
  }

  /**
   * The alarm: ends a challenge left open past its deadline (its result, projection and event
   * staged as at any call), writes the projections that are due (projection-outbox.ts), sends the
   * staged events (event-outbox.ts), and wipes the session a minute after its end (staged events
   * stay). It re-arms itself while anything is pending, so a write or an append that failed, hung
   * or timed out is tried again until it lands.
   */
  override async alarm(): Promise<void> {
    await this.alarms.run(
      async () => {
        if (!this.hasTables) return;
        const now = Date.now();
        this.runs.loseIfOrphaned(now);
        await alarmRound(this.parts, now);
        await this.freeIfDone();
      },
      () => this.scheduleAlarm(),
    );
  }

  /**
   * Creates the object's tables and records their version, the first time a call records
   * something (or `again`, for an object of an older layout).
   */
  private createTables(again = false): void {
    if (this.hasTables && !again) return;
    createTables(this.parts, !this.hasTables);
    this.tables.record();
    this.hasTables = true;
  }

  /**
   * Frees the object's storage once nothing is left to do (session-end.ts): no tables, no alarm,
   * no bytes stored; the reference may start a new session.
   */
  private async freeIfDone(): Promise<void> {
    if (!nothingLeft(this.parts, this.runs.running)) return;
    await this.ctx.storage.deleteAll();
    this.alarms.cleared();
    this.hasTables = false;
  }

  /** What a live run (live-authentication.ts) and a 3RI's (three-ri-run.ts) reach outside storage. */
  private threeRiHost(): ThreeRiHost {
    return {
      live: this.parts.live,
      provider: () => objectProvider.of(this.env),
      key: settingsOf(this.env).jwtKey,
      objectId: this.ctx.id.toString(),
      sent: () => this.scheduleAlarm(),
      hold: this.parts.hold,
      prior: (scope) => priorLinks.prior(this.env, scope),
    };
  }

  /** A live result's call: undefined without tables; a provider that cannot be asked is a value. */
  private liveResult<T>(now: number, work: () => Promise<T | undefined>): Promise<T | undefined | FailedCall> {
    if (!this.hasTables) return Promise.resolve(undefined);
    return failureAsValue(
      this.parts.effects.around(() => {
        this.expire(now);
        return work();
      }),
    );
  }

  /** The transaction's answer of verification and of the sandbox (challenge-conclusion.ts). */
  private conclude(reference: string, now: number, ending: ChallengeEnding): Promise<ConcludeOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    return this.decided(now, () => concludeChallenge(this.parts, reference, now, ending));
  }

  /**
   * A 3RI's use of this transaction's series (docs/threeds.md "Series and 3RI"): checked and
   * recorded at once; an object with nothing stored (unknown, or freed) has no series.
   */
  seriesUse(reference: string, requestHash: string, use: ThreeRiUse, holder: string, now: number): SeriesUseOutcome {
    return this.parts.series.use(reference, requestHash, use, holder, now);
  }

  /** Forgets a 3RI's use that its own object released (series-hold.ts): while `holder` holds it. */
  seriesRelease(reference: string, holder: string): void {
    this.parts.series.release(reference, holder);
  }

  /**
   * A decision on the test challenge: its writes (the challenge's row, its post, the projection and
   * event it stages) land all together or not at all (`transactionSync`), then its effects go.
   */
  private decided<T>(now: number, decide: () => T): Promise<T> {
    return this.parts.effects.around((): T => {
      this.expire(now);
      return this.ctx.storage.transactionSync(decide);
    });
  }

  /** Sets the alarm to when it is next due (session-end.ts). */
  private async scheduleAlarm(): Promise<void> {
    if (!this.hasTables) return;
    const at = nextAlarm(this.parts);
    if (at !== undefined) await this.alarms.setAlarm(at);
  }

  /** A session past its end is gone: the reference may start a new one. */
  private expire(now: number): void {
    const end = this.parts.session.end();
    if (end === undefined || end > now) return;
    closeAndWipe(this.parts, now);
    // An event it staged leaves from the alarm; this call may not be one that sets it (the storage
    // write is held by the output gate like any other).
    if (this.parts.events.nextDue() !== undefined) void this.scheduleAlarm();
  }
}
