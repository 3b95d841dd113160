import { DurableObject } from 'cloudflare:workers';
import type { ChallengeResult, CodeAttempt } from '../challenge-rules';
import type { SessionRecord } from '../session-record';
import { ClaimTable, type ClaimOutcome } from '../../storage/claims';
import { AlarmRunner } from '../../storage/alarm-runner';
import { failedCall, type FailedCall } from '../../storage/object-client';
import { FailureError } from '../../failures';
import { Outbox } from '../../storage/projection-outbox';
import { EventOutbox } from '../../storage/event-outbox';
import { SchemaVersion } from '../../storage/schema-version';
import { eventSink } from '../../events/event-log-api';
import type { EventType } from '../../events/event-types';
import { settingsOf } from '../../config/settings';
import { objectProvider } from '../live/challenge-watch';
import type { LiveChallenge, LiveResult, LiveShow, MethodRecord, PreparedCard } from '../live/live-state';
import type {
  AuthClaim,
  CollectOutcome,
  ConcludeOutcome,
  EventScope,
  InitClaim,
  LiveAuthenticated,
  LiveAuthenticateInput,
  SandboxResult,
  ThreeRiInput,
  ThreeRiOutcome,
  ShowOutcome,
  SubmitOutcome,
  ThreeDsTransactionMethods,
  TransactionFacts,
} from '../transaction-api';
import { LiveRuns, type LiveHost } from './live-authentication';
import { LiveTransaction } from './live-transaction';
import { LiveWatch } from './live-watch';
import { Session } from './session';
import { TestChallenge } from './test-challenge';
import { TransactionEvents } from './transaction-events';
import { Series } from './series';
import { SeriesHold } from './series-hold';
import type { SeriesUseOutcome, ThreeRiUse } from '../series-rules';
import { countUse, notAllowed, priorLinks, runLiveThreeRi, testThreeRiClaim, type ThreeRiHost } from './three-ri-run';
import { lostAnswer } from './live-authentication';
import { concludeChallenge, NOT_COMPLETED, sandboxEnding, type ChallengeEnding } from './challenge-conclusion';
import {
  authenticatedOutcome,
  closeAndWipe,
  createTables,
  nextAlarm,
  nothingLeft,
  seriesFrom,
  TABLES_VERSION,
  transactionFacts,
  WIPE_DELAY_MS,
  type TransactionParts,
} from './session-end';

/**
 * One Durable Object per 3DS transaction (merchant, entity, transactionReference): the place
 * where every decision about the transaction that must be strongly consistent is made once,
 * whichever Cloudflare location the merchant's server or the cardholder's browser reaches.
 * It implements the transaction's RPC interface (src/threeds/transaction-api.ts), which the 3DS
 * steps call, and is split by what it decides: the session and its device data collection
 * (session.ts); the first bodies (claims); the test issuer's challenge (test-challenge.ts); live:
 * the one authentication, run here (live-authentication.ts), its state (live-transaction.ts) and
 * the watch of an open challenge (live-watch.ts); its event (transaction-events.ts); and the
 * session's end, the alarm and the storage freed (session-end.ts). This object is the truth for
 * all of it and the only writer of its KV projection (docs/storage.md); every step asks it, never
 * KV. The session lives an hour from its first step, and an hour from authenticate once that
 * comes; every call takes the caller's clock. The final outcome stages its
 * `threeDS.authentication.completed` event in the same synchronous block (docs/events.md).
 */

/** Claims of this object end with the session, which the wipe ends. */
const UNTIL_WIPED = Number.MAX_SAFE_INTEGER;

export class ThreeDsTransaction extends DurableObject<Env> implements ThreeDsTransactionMethods {
  private readonly session: Session;
  private readonly claims: ClaimTable;
  private readonly challenges: TestChallenge;
  private readonly live: LiveTransaction;
  private readonly watch: LiveWatch;
  private readonly outbox: Outbox;
  private readonly completion: TransactionEvents;
  /** Its event, on its way to the merchant's event log (docs/events.md). */
  private readonly events: EventOutbox<EventType>;
  /** This call staged a projection or an event: tried when the call ends ({@link changing}). */
  private staged = false;
  /** The parts, as what decides across them takes them (session-end.ts). */
  private readonly parts: TransactionParts;
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  /** This call moved a time the alarm must keep (a challenge's watch, an AReq's answer): set it again. */
  private rearm = false;
  /**
   * Whether the object has its tables: none until a call that records something needs them (a GET
   * of an unknown reference creates nothing), and none again once its storage is freed.
   */
  private hasTables: boolean;
  /** Which version of its tables the object has: one row, read at the start (src/storage/schema-version.ts). */
  private readonly tables: SchemaVersion;
  /** Live authenticate's runs under way in this instance (live-authentication.ts). */
  private readonly runs: LiveRuns;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'ThreeDsTransaction');
    const sql = ctx.storage.sql;
    this.session = new Session(sql);
    this.claims = new ClaimTable(sql, (writes) => ctx.storage.transactionSync(writes));
    this.challenges = new TestChallenge(sql, (reference, result) => this.challengeEnded(reference, result));
    this.live = new LiveTransaction(sql, () => this.noticeOutcome());
    this.watch = new LiveWatch(sql, env, this.live);
    this.runs = new LiveRuns(this.live, () => this.liveHost());
    this.outbox = new Outbox({ ctx, env, reschedule: () => this.scheduleAlarm(), alarm: this.alarms });
    this.completion = new TransactionEvents(sql, env, ctx.id.toString(), () => this.events);
    this.events = new EventOutbox<EventType>(
      { ctx, reschedule: () => this.scheduleAlarm() },
      (event) => this.completion.render(event),
      (username, events) => eventSink.append(env, username, events),
    );
    this.parts = {
      session: this.session,
      claims: this.claims,
      challenges: this.challenges,
      live: this.live,
      watch: this.watch,
      completion: this.completion,
      outbox: this.outbox,
      events: this.events,
      series: new Series(sql, () => this.hasTables),
      hold: new SeriesHold(sql, (prior, reference, holder) =>
        priorLinks.prior(env, prior).seriesRelease(reference, holder),
      ),
    };
    this.tables = new SchemaVersion(sql, TABLES_VERSION, 'session');
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
    let first = false;
    const outcome = this.claims.claim('init', requestHash, candidate, now, UNTIL_WIPED, () => {
      first = this.session.start(sessionEnd);
      this.session.issueDdc(candidate.ddcJti);
    });
    if (first) await this.scheduleAlarm();
    return outcome;
  }

  /** The DDC page: records the collection for this transaction's DDC JWT, once. */
  collect(ddcJti: string, sessionId: string, now: number): CollectOutcome {
    if (!this.hasTables) return { kind: 'unknown' };
    this.expire(now);
    return this.session.collect(ddcJti, sessionId);
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
    return this.changing((): ClaimOutcome<AuthClaim> | { kind: 'stale'; collected: boolean } => {
      this.expire(now);
      if (collection && this.claims.answerOf('auth', now) === undefined) {
        const collected = collection.reference !== null && collection.reference === this.session.collection();
        if (collected !== collection.assumed) return { kind: 'stale', collected };
      }
      return this.claims.claim('auth', requestHash, candidate, now, UNTIL_WIPED, () => {
        this.session.startOrExtend(sessionEnd);
        if (candidate.challenge) this.challenges.open(candidate.challenge.reference, candidate.challenge.expiresAt);
        // The projection also carries the session's (possibly moved) end: the alarm's wipe follows it.
        this.project(projectionKey, {
          decidedAt: now,
          brands: candidate.brands as SessionRecord['brands'],
          version: candidate.version,
          scenario: candidate.scenario,
          answer: candidate.answer,
          ...(candidate.challenge ? { challenge: candidate.challenge } : {}),
          expiresAt: this.session.end()!,
        });
        this.completion.keepScope(scope, now);
        this.noticeOutcome();
      });
    });
  }

  /** The challenge page: shows the challenge from its JWT while it is open (test-challenge.ts). */
  showChallenge(reference: string, jti: string, now: number): Promise<ShowOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    // A challenge past its 10 minutes ends here, and its result is projected.
    return this.changing((): ShowOutcome => {
      this.expire(now);
      return this.challenges.show(reference, jti, now);
    });
  }

  /** One form post (`post`: its id, so that a repost is not counted again): see test-challenge.ts. */
  submitChallenge(reference: string, attempt: CodeAttempt, now: number, post?: string): Promise<SubmitOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    return this.changing((): SubmitOutcome => {
      this.expire(now);
      return this.challenges.submit(reference, attempt, now, post);
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
    return this.changing((): TransactionFacts | undefined => {
      this.expire(now);
      return transactionFacts(this.parts, now);
    });
  }

  // --- live (docs/threeds.md "Live"): the state of a real authentication (live-transaction.ts) ---

  /** A card prepared at the 3DS Server provider (kept unless `replace`). */
  livePrepared(card: PreparedCard, replace: boolean, now: number): PreparedCard {
    this.createTables();
    this.expire(now);
    return this.live.storePrepared(card, replace);
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
    return { ...collected, ...this.live.collect(facts, now) };
  }

  /** What the DDC page's script learned of the browser after the page loaded. */
  liveAddFacts(facts: Record<string, unknown>, now: number): void {
    if (!this.hasTables) return;
    this.expire(now);
    this.live.addFacts(facts);
  }

  /** The ACS's 3DS Method notification reached the service. */
  liveMethodCompleted(now: number): boolean {
    if (!this.hasTables) return false;
    this.expire(now);
    return this.live.methodCompleted(now);
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
    if (issuer.kind === 'test')
      return this.changing(() => this.testThreeRi(input, issuer.outcome)).catch((e: unknown) => {
        // The prior's object failed (a 503 for the caller): a domain failure goes back as a value.
        if (e instanceof FailureError) return failedCall(e);
        throw e;
      });
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
    return this.changing(async () => {
      this.expire(input.now);
      const done = await work(() => {
        // A run starts: the transaction's event scope, and the session an hour from now.
        this.completion.keepScope(input.scope, input.now);
        this.session.startOrExtend(input.sessionEnd);
      });
      // The AReq's answer settles it (or the run started the session): the alarm is set again.
      this.rearm = true;
      return done;
    });
  }

  /**
   * A 3RI decided by the test issuer (its outcome by the cardholder name): an answer already
   * claimed is answered (this body's) or a conflict (another's) without asking the prior; else the
   * prior counts the use, and the claim records the answer with its event, settling the hold in
   * the same block. A claim lost to another body (an authenticate under the same reference)
   * releases the use: this 3RI never happened.
   */
  private async testThreeRi(input: ThreeRiInput, outcome: ThreeRiOutcome): Promise<LiveAuthenticated> {
    const { requestHash: hash, now } = input;
    this.expire(now);
    const known = this.claims.entry<AuthClaim>('auth', now);
    if (known) {
      if (this.claims.hashOf('auth', now) !== hash) return { kind: 'conflict' };
      return { kind: 'answered', answer: known.answer.answer, scenario: known.answer.scenario };
    }
    // The hold's own time is an alarm time: a hold that never comes to an outcome is released then.
    this.rearm = true;
    const use = await countUse(this.threeRiHost(), input);
    if (use.kind !== 'allowed') return notAllowed(use);
    const candidate = testThreeRiClaim(input, outcome, use.series.version);
    const claim = this.claims.claim('auth', hash, candidate, now, UNTIL_WIPED, () => {
      this.session.startOrExtend(input.sessionEnd);
      this.project(input.projectionKey, {
        decidedAt: now,
        brands: candidate.brands as SessionRecord['brands'],
        version: candidate.version,
        scenario: candidate.scenario,
        answer: candidate.answer,
        expiresAt: this.session.end()!,
      });
      this.completion.keepScope(input.scope, now);
      this.noticeOutcome();
    });
    // Another body claimed the reference first (between the count and the claim): this 3RI never happened.
    if (claim.conflict) this.parts.hold.settle(hash, false, now);
    await this.parts.hold.flush(Date.now());
    return claim.conflict
      ? { kind: 'conflict' }
      : { kind: 'answered', answer: claim.answer.answer, scenario: claim.answer.scenario };
  }

  /** The challenge page's relay: the challenge to post to the ACS, once its JWT is checked. */
  liveShow(reference: string, jti: string, md: string, now: number): LiveShow {
    if (!this.hasTables) return { kind: 'unknown' };
    this.expire(now);
    return this.live.show(reference, jti, md);
  }

  /** The transaction's live challenge, its MD and its result if decided. */
  liveChallenge(now: number): { challenge: LiveChallenge; md: string; result?: LiveResult } | undefined {
    if (!this.hasTables) return undefined;
    this.expire(now);
    return this.live.challenge();
  }

  /** Records the challenge's one result (the first decided stays) and returns it. */
  liveDecide(reference: string, answer: Record<string, unknown>, now: number): Promise<LiveResult | undefined> {
    if (!this.hasTables) return Promise.resolve(undefined);
    return this.changing(() => {
      this.expire(now);
      return this.live.decide(reference, answer, now);
    });
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
        const end = this.session.end();
        this.runs.loseIfOrphaned(now);
        this.parts.series.dropIfEnded(now);
        if (end !== undefined && end + WIPE_DELAY_MS <= now) closeAndWipe(this.parts, now);
        else {
          this.challenges.endOverdue(now);
          await this.watch.watch(now, this.completion.scope()?.baseUrl ?? '');
        }
        this.staged = false;
        this.rearm = false;
        await this.outbox.flush();
        await this.events.flush();
        await this.parts.hold.flush(now);
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

  /** What a 3RI's run reaches (three-ri-run.ts): a live run's host, its hold and the prior's object. */
  private threeRiHost(): ThreeRiHost {
    return {
      ...this.liveHost(),
      hold: this.parts.hold,
      prior: (scope) => priorLinks.prior(this.env, scope),
    };
  }

  /** What a live run reaches outside storage (live-authentication.ts). */
  private liveHost(): LiveHost {
    return {
      live: this.live,
      provider: () => objectProvider.of(this.env),
      key: settingsOf(this.env).jwtKey,
      objectId: this.ctx.id.toString(),
      sent: () => this.scheduleAlarm(),
    };
  }

  /** The transaction's answer of verification and of the sandbox (challenge-conclusion.ts). */
  private conclude(reference: string, now: number, ending: ChallengeEnding): Promise<ConcludeOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    return this.changing((): ConcludeOutcome => {
      this.expire(now);
      return concludeChallenge(this.parts, reference, now, ending);
    });
  }

  /**
   * Runs a call that may change the state; a projection it staged is then tried at once, after
   * the state committed (each call that changes a projected fact goes through here, so none is
   * left waiting for the wipe).
   */
  private async changing<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      // Also after a call that failed midway: what it changed before (a 3RI's open hold) keeps its alarm.
      if (this.staged) {
        this.staged = this.rearm = false;
        await this.outbox.writeSoon(); // which sets the alarm again once it has written
        void this.events.flush(); // after the answer; the alarm set just now retries it
      } else if (this.rearm) {
        this.rearm = false;
        await this.scheduleAlarm();
      }
    }
  }

  /** A test challenge ended: its result is projected with the session record, and the outcome noticed. */
  private challengeEnded(reference: string, result: ChallengeResult): void {
    // The session record is this object's one projection: amend its newest value.
    const projected = this.outbox.latest<SessionRecord>();
    if (projected?.value?.challenge?.reference === reference)
      this.project(projected.key, { ...projected.value, result });
    this.noticeOutcome();
  }

  /**
   * Stages the transaction's event once its final outcome is recorded: called in the same
   * synchronous block as every write that may record it, so the outcome and its event commit
   * together; once per session.
   */
  private noticeOutcome(): void {
    // Read once (six statements), when first asked: nothing below changes them.
    let read: TransactionFacts | undefined;
    const facts = () => (read ??= transactionFacts(this.parts, Number.NEGATIVE_INFINITY));
    if (!this.completion.notice(facts)) return;
    this.staged = true;
    // A 3RI's final outcome settles its hold on the prior's series: kept only when authenticated.
    const hash = this.claims.hashOf('auth', Number.NEGATIVE_INFINITY) ?? this.live.requestHash();
    if (hash !== undefined) {
      this.parts.hold.settle(hash, authenticatedOutcome(facts()!), Date.now());
      this.rearm = true;
    }
    // The final outcome, once: a series set up by a Y or an A is kept from now until its expiry.
    const series = seriesFrom(facts()!);
    if (series) {
      this.parts.series.record(series);
      this.rearm = true;
    }
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

  /** Stages the session record as the next projection of its key. */
  private project(key: string, record: SessionRecord): void {
    this.outbox.stage(key, record, record.expiresAt);
    this.staged = true;
  }

  /** Sets the alarm to when it is next due (session-end.ts). */
  private async scheduleAlarm(): Promise<void> {
    if (!this.hasTables) return;
    const at = nextAlarm(this.parts);
    if (at !== undefined) await this.alarms.setAlarm(at);
  }

  /** A session past its end is gone: the reference may start a new one. */
  private expire(now: number): void {
    const end = this.session.end();
    if (end === undefined || end > now) return;
    closeAndWipe(this.parts, now);
    // An event it staged leaves from the alarm; this call may not be one that sets it (the storage
    // write is held by the output gate like any other).
    if (this.events.nextDue() !== undefined) void this.scheduleAlarm();
  }
}
