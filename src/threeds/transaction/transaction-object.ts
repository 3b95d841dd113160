import { DurableObject } from 'cloudflare:workers';
import type { ChallengeResult, CodeAttempt } from '../challenge-rules';
import type { SessionRecord } from '../session-record';
import { ClaimTable, type ClaimOutcome } from '../../storage/claims';
import { AlarmRunner } from '../../storage/alarm-runner';
import { Outbox } from '../../storage/projection-outbox';
import { EventOutbox } from '../../storage/event-outbox';
import { eventSink } from '../../events/event-log-api';
import type { EventType } from '../../events/event-types';
import { settingsOf } from '../../config/settings';
import { FailureError } from '../../failures';
import { failedCall } from '../../storage/object-client';
import { THREEDS_PATH } from '../api-paths';
import { objectProvider } from '../live/challenge-watch';
import { unavailableAnswer } from '../live/emv-outcomes';
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
  ShowOutcome,
  SubmitOutcome,
  ThreeDsTransactionMethods,
  TransactionFacts,
} from '../transaction-api';
import { runLiveAuthentication, type LiveHost } from './live-authentication';
import { LiveTransaction } from './live-transaction';
import { LiveWatch } from './live-watch';
import { Session } from './session';
import { TestChallenge } from './test-challenge';
import { TransactionEvents } from './transaction-events';

/**
 * One Durable Object per 3DS transaction (merchant, entity, transactionReference): the place
 * where every decision about the transaction that must be strongly consistent is made once,
 * whichever Cloudflare location the merchant's server or the cardholder's browser reaches.
 * It implements the transaction's RPC interface (src/threeds/transaction-api.ts), which the 3DS
 * steps call, and is split by what it decides:
 *
 * - the session and its device data collection (session.ts);
 * - the first body of deviceDataInitialize and of authenticate (claims, with their answers);
 * - the test issuer's challenge (test-challenge.ts);
 * - live: the provider's preparation, the browser, the one authentication and the challenge's one
 *   result (live-transaction.ts), and the watch of an open challenge (live-watch.ts);
 * - its event (transaction-events.ts), and the session's end (here: the alarm and the wipe).
 *
 * This object is the truth for all of it, and every step asks it, never KV. Its session record
 * (what authenticate decided, and the challenge's result once there is one) is projected to KV
 * for audit and for readers that tolerate staleness (docs/storage.md "Projections"): this object
 * is the only writer of that key, through its outbox and alarm, after the answer. The session
 * lives an hour from its first step, and an hour from authenticate once that comes (so a
 * challenge always gets its 10 minutes); then the alarm wipes the object. Every call takes the
 * caller's clock, so expiry is judged on one time line with the projected records.
 *
 * When the transaction's final outcome is recorded (authenticate's frictionless answer, the
 * challenge's one result, however it ended, or live's answer, result or lost AReq), this object
 * stages its `threeDS.authentication.completed` event in the same synchronous block, and sends it
 * to the merchant's event log through its event outbox (src/storage/event-outbox.ts), from the
 * same alarm; a challenge left open ends as expired from the alarm at its deadline, so the event
 * comes even when nobody calls again. Staged events outlive the wipe: the alarm goes on until the
 * log has them.
 */

const SANDBOX_ENDINGS: Record<SandboxResult, [ChallengeResult['outcome'], ChallengeResult['reason']]> = {
  passed: ['passed', 'code'],
  failed: ['failed', 'attempts'],
  cancelled: ['failed', 'cancelled'],
  timedOut: ['failed', 'expired'],
};

/** How long after its end the object's state is wiped (KV records live as long). */
const WIPE_DELAY_MS = 60_000;

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
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  /** This call moved a time the alarm must keep (a challenge's watch, an AReq's answer): set it again. */
  private rearm = false;
  /**
   * This instance's id: a live authentication started by another (one that is gone: the object was
   * reset) is taken over or lost, never waited for (LiveTransaction.start).
   */
  private readonly instance = crypto.randomUUID();
  /**
   * Whether the object has its tables: none until a call that records something needs them (a GET
   * of an unknown reference creates nothing), and none again once its storage is freed.
   */
  private hasTables: boolean;
  /** Live authenticate's runs under way in this instance, by request hash (one at most). */
  private readonly runs = new Map<string, Promise<LiveAuthenticated>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'ThreeDsTransaction');
    const sql = ctx.storage.sql;
    this.session = new Session(sql);
    this.claims = new ClaimTable(sql, (writes) => ctx.storage.transactionSync(writes));
    this.challenges = new TestChallenge(sql, (reference, result) => this.challengeEnded(reference, result));
    this.live = new LiveTransaction(sql, () => this.noticeOutcome());
    this.watch = new LiveWatch(sql, env, this.live);
    this.outbox = new Outbox({ ctx, env, reschedule: () => this.scheduleAlarm() });
    this.completion = new TransactionEvents(sql, env, ctx.id.toString(), () => this.events);
    this.events = new EventOutbox<EventType>(
      { ctx, reschedule: () => this.scheduleAlarm() },
      (event) => this.completion.render(event),
      (username, events) => eventSink.append(env, username, events),
    );
    this.hasTables =
      sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session'").toArray().length > 0;
    // An object made by an earlier version gets the tables added since.
    if (this.hasTables) this.createTables(true);
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
    return this.conclude(reference, now, () => ['failed', 'notCompleted']);
  }

  /**
   * The sandbox control (test only): ends an open challenge as the caller says, as if the
   * cardholder had; a challenge already ended keeps its one result, which is answered instead.
   */
  completeChallenge(reference: string, result: SandboxResult, now: number): Promise<ConcludeOutcome> {
    return this.conclude(reference, now, () => SANDBOX_ENDINGS[result]);
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
      return this.facts(now);
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
  liveAuthenticate(input: LiveAuthenticateInput): Promise<LiveAuthenticated> {
    this.createTables();
    const running = this.runs.get(input.requestHash);
    if (running) return running;
    return this.changing(async (): Promise<LiveAuthenticated> => {
      this.expire(input.now);
      const begun = this.live.start(input.requestHash, this.instance, input.now);
      switch (begun.kind) {
        case 'answered':
          return { kind: 'answered', answer: begun.answer, scenario: 'live: answered before' };
        case 'conflict':
          return { kind: 'conflict' };
        case 'lost':
          return { kind: 'answered', answer: lostAnswer(input), scenario: 'live: AReq sent, its answer unknown' };
        case 'running':
          // Another body's run cannot be `running` (it is a conflict); this body's is in `runs`.
          return this.runs.get(input.requestHash) ?? { kind: 'conflict' };
      }
      this.completion.keepScope(input.scope, input.now);
      if (this.session.startOrExtend(input.sessionEnd)) this.rearm = true;
      const run = runLiveAuthentication(this.liveHost(), input, begun)
        .catch((e: unknown) => {
          // A domain failure goes back as a value (src/storage/object-client.ts), as the token object's.
          if (e instanceof FailureError) return failedCall(e) as unknown as LiveAuthenticated;
          throw e;
        })
        .finally(() => {
          this.runs.delete(input.requestHash);
        });
      this.runs.set(input.requestHash, run);
      const done = await run;
      // The AReq's answer settles it; a challenge it opened is watched from the alarm.
      this.rearm = true;
      return done;
    });
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
    if (!this.hasTables) return;
    await this.alarms.run(
      async () => {
        const now = Date.now();
        const end = this.session.end();
        this.live.loseIfOrphaned(this.instance, now);
        if (end !== undefined && end + WIPE_DELAY_MS <= now) this.closeAndWipe(now);
        else {
          this.challenges.endOverdue(now);
          await this.watch.watch(now, this.completion.scope()?.baseUrl ?? '');
        }
        this.staged = false;
        this.rearm = false;
        await this.outbox.flush();
        await this.events.flush();
        await this.freeIfDone();
      },
      () => this.scheduleAlarm(),
    );
  }

  /** Creates the object's tables, the first time a call records something (or `again`, for an older object). */
  private createTables(again = false): void {
    if (this.hasTables && !again) return;
    for (const part of [this.session, this.claims, this.challenges, this.live, this.watch, this.completion]) {
      part.createTables();
    }
    this.outbox.createTables();
    this.events.createTables();
    this.hasTables = true;
  }

  /**
   * Frees the object's storage once nothing is left to do (docs/storage.md "Storage freed"): the
   * session wiped, every projection written, every event appended, no run under way. The object
   * then has no tables, no alarm and no bytes stored; the reference may start a new session.
   */
  private async freeIfDone(): Promise<void> {
    if (this.session.end() !== undefined || this.runs.size > 0) return;
    if (this.outbox.nextDue() !== undefined || this.events.nextDue() !== undefined) return;
    await this.ctx.storage.deleteAll();
    this.hasTables = false;
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

  /** What the transaction is now (see {@link transaction}); undefined when there is no session. */
  private facts(now: number): TransactionFacts | undefined {
    const init = this.claims.entry<InitClaim>('init', now);
    const auth = this.claims.entry<AuthClaim>('auth', now);
    const liveAuth = this.live.authentication();
    const liveChallenge = this.live.challenge();
    const challenge = auth?.answer.challenge ? this.challenges.state(auth.answer.challenge.reference, now) : undefined;
    const times = [
      init?.decidedAt,
      this.completion.since(),
      auth?.decidedAt,
      challenge?.result?.completedAt,
      liveAuth?.decidedAt,
      liveChallenge?.result?.decidedAt,
    ].filter((t): t is number => typeof t === 'number');
    if (times.length === 0) return undefined;
    return {
      createdAt: Math.min(...times),
      updatedAt: Math.max(...times),
      ...(auth ? { auth: auth.answer } : {}),
      ...(challenge?.result ? { challengeResult: challenge.result } : {}),
      ...(liveAuth ? { live: { ...liveAuth, ...(liveChallenge ? { challenge: liveChallenge } : {}) } } : {}),
    };
  }

  /** The transaction's answer of verification and of the sandbox: see {@link concludeChallenge}. */
  private conclude(
    reference: string,
    now: number,
    ending: () => [ChallengeResult['outcome'], ChallengeResult['reason']],
  ): Promise<ConcludeOutcome> {
    if (!this.hasTables) return Promise.resolve({ kind: 'unknown' });
    return this.changing((): ConcludeOutcome => {
      this.expire(now);
      const auth = this.claims.answerOf<AuthClaim>('auth', now);
      if (auth?.challenge?.reference !== reference) return { kind: 'unknown' };
      const result = this.challenges.conclude(reference, now, ending);
      if (!result) return { kind: 'unknown' };
      const session = { brands: auth.brands, version: auth.version, onSuccess: auth.challenge.onSuccess };
      return { kind: 'ended', result, session };
    });
  }

  /**
   * Runs a call that may change the state; a projection it staged is then tried at once, after
   * the state committed (each call that changes a projected fact goes through here, so none is
   * left waiting for the wipe).
   */
  private async changing<T>(work: () => T | Promise<T>): Promise<T> {
    const out = await work();
    if (this.staged) {
      this.staged = this.rearm = false;
      await this.outbox.writeSoon(); // which sets the alarm again once it has written
      void this.events.flush(); // after the answer; the alarm set just now retries it
    } else if (this.rearm) {
      this.rearm = false;
      await this.scheduleAlarm();
    }
    return out;
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
    if (this.completion.notice(() => this.facts(Number.NEGATIVE_INFINITY))) this.staged = true;
  }

  /**
   * Ends the session: a challenge still open whose result can no longer come ends first (test: past
   * its deadline; live: once no RReq can come), so that its outcome and event are staged before the
   * state goes; staged events outlive the wipe, and the alarm is kept for them.
   */
  private closeAndWipe(now: number): void {
    this.challenges.endOverdue(now);
    this.watch.closeIfUnwatched(now, this.completion.scope()?.baseUrl ?? '');
    this.wipe();
  }

  /** Stages the session record as the next projection of its key. */
  private project(key: string, record: SessionRecord): void {
    this.outbox.stage(key, record, record.expiresAt);
    this.staged = true;
  }

  /**
   * The alarm: at the next projection or event due, an open challenge's deadline, the live
   * watch's next look, an AReq lease's end, else a minute after the session's end (the wipe).
   */
  private async scheduleAlarm(): Promise<void> {
    if (!this.hasTables) return;
    const end = this.session.end();
    const times = [
      this.outbox.nextDue(),
      this.events.nextDue(),
      this.challenges.nextDeadline(),
      this.watch.nextLook(),
      this.live.sendingLeaseEnd(),
      end === undefined ? undefined : end + WIPE_DELAY_MS,
    ].filter((t): t is number => t !== undefined);
    if (times.length > 0) await this.ctx.storage.setAlarm(Math.min(...times));
  }

  /** A session past its end is gone: the reference may start a new one. */
  private expire(now: number): void {
    const end = this.session.end();
    if (end === undefined || end > now) return;
    this.closeAndWipe(now);
    // An event it staged leaves from the alarm; this call may not be one that sets it (the storage
    // write is held by the output gate like any other).
    if (this.events.nextDue() !== undefined) void this.scheduleAlarm();
  }

  private wipe(): void {
    // Staged events stay (events_out): the alarm sends them after the session is gone.
    this.session.wipe();
    this.challenges.wipe();
    this.completion.wipe();
    this.watch.wipe();
    this.claims.wipe();
    this.live.wipe();
    this.outbox.wipe();
  }
}

/** The answer to a live authentication whose AReq went out with its answer unknown. */
function lostAnswer(input: LiveAuthenticateInput): Record<string, unknown> {
  return {
    ...unavailableAnswer({
      transactionReference: input.request.transactionReference,
      brands: input.card.brands,
      step: 'authenticate',
      apiBase: `${input.baseUrl}${THREEDS_PATH}`,
    }),
  };
}
