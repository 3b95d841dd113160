import { DurableObject } from 'cloudflare:workers';
import { challengeStep, MAX_CODE_ATTEMPTS, type ChallengeResult, type CodeAttempt } from '../challenge-rules';
import type { SessionRecord } from '../session-record';
import { ClaimTable, type ClaimOutcome } from '../../storage/claims';
import {
  LiveTransaction,
  type LiveBegin,
  type LiveChallenge,
  type LiveResult,
  type LiveShow,
  type MethodRecord,
  type PreparedCard,
} from './live-transaction';
import { Outbox } from '../../storage/projection-outbox';
import { EventOutbox, type StagedEvent } from '../../storage/event-outbox';
import type { ApiVersion } from '../../media-types';
import { settingsOf } from '../../config/settings';
import { transactionOutcome, transactionState, withoutAuthenticationValue } from '../transaction-outcome';
import { endedUnwatched, look, nextLookAt, objectProvider } from '../live/challenge-watch';
import { describeError, logLine } from '../../log';

/**
 * One Durable Object per 3DS transaction (merchant, entity, transactionReference): the place
 * where every decision about the transaction that must be strongly consistent is made once,
 * whichever Cloudflare location the merchant's server or the cardholder's browser reaches.
 *
 * - the first body of deviceDataInitialize and of authenticate (claims, with their answers);
 * - the device data collection, at most one per DDC JWT;
 * - the challenge: shown only from its own JWT (again, while it is open: a page whose answer was
 *   lost can be posted again, with no extra attempt), at most {@link MAX_CODE_ATTEMPTS} codes
 *   evaluated in all, and exactly one result, which the page and verification both report.
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
 * to the merchant's event log through its event outbox (event-outbox.ts), from the same alarm; a
 * challenge left open ends as expired from the alarm at its deadline, so the event comes even when
 * nobody calls again. Staged events outlive the wipe: the alarm goes on until the log has them.
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

/** The facts a transaction's event is rendered from, when it leaves. */
interface CompletedFacts {
  scope: EventScope;
  facts: TransactionFacts;
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

/** What GET of a transaction is built from ({@link ThreeDsTransaction.transaction}). */
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

const SANDBOX_ENDINGS: Record<SandboxResult, [ChallengeResult['outcome'], ChallengeResult['reason']]> = {
  passed: ['passed', 'code'],
  failed: ['failed', 'attempts'],
  cancelled: ['failed', 'cancelled'],
  timedOut: ['failed', 'expired'],
};

/** How long after its end the object's state is wiped (KV records live as long). */
const WIPE_DELAY_MS = 60_000;

interface ChallengeRow extends Record<string, SqlStorageValue> {
  reference: string;
  expires_at: number;
  shown_jti: string | null;
  /** Wrong codes so far. */
  attempts: number;
  /** Codes judged so far, right or wrong (never more than MAX_CODE_ATTEMPTS). */
  evaluated: number;
  outcome: ChallengeResult['outcome'] | null;
  reason: ChallengeResult['reason'] | null;
  completed_at: number | null;
}

/** Claims of this object end with the session, which the wipe ends. */
const UNTIL_WIPED = Number.MAX_SAFE_INTEGER;

export class ThreeDsTransaction extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly claims: ClaimTable;
  private readonly live: LiveTransaction;
  private readonly outbox: Outbox;
  /** Its event, on its way to the merchant's event log (docs/events.md). */
  private readonly events: EventOutbox;
  /** This call staged a projection or an event: tried when the call ends ({@link changing}). */
  private staged = false;
  /** This call moved a time the alarm must keep (a challenge's watch, an AReq's lease): set it again. */
  private rearm = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY CHECK (id = 1), expires_at INTEGER NOT NULL, ddc_jti TEXT);
      CREATE TABLE IF NOT EXISTS collections (ddc_jti TEXT PRIMARY KEY, session_id TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS challenge (reference TEXT PRIMARY KEY, expires_at INTEGER NOT NULL, shown_jti TEXT,
        attempts INTEGER NOT NULL DEFAULT 0, evaluated INTEGER NOT NULL DEFAULT 0, outcome TEXT, reason TEXT, completed_at INTEGER);
      CREATE TABLE IF NOT EXISTS event_scope (id INTEGER PRIMARY KEY CHECK (id = 1), since INTEGER NOT NULL,
        scope TEXT NOT NULL, staged INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE IF NOT EXISTS live_watch (id INTEGER PRIMARY KEY CHECK (id = 1), asked_at INTEGER NOT NULL,
        failed INTEGER NOT NULL)`);
    this.claims = new ClaimTable(this.sql);
    this.live = new LiveTransaction(this.sql, () => this.noticeOutcome());
    this.outbox = new Outbox({ ctx, env, reschedule: () => this.scheduleAlarm() });
    this.events = new EventOutbox({ ctx, env, reschedule: () => this.scheduleAlarm() }, (event) =>
      this.eventData(event),
    );
  }

  /** deviceDataInitialize: the first body's answer, for it and every retry. */
  async initialize(
    requestHash: string,
    candidate: InitClaim,
    now: number,
    sessionEnd: number,
  ): Promise<ClaimOutcome<InitClaim>> {
    this.expire(now);
    let first = false;
    const outcome = this.claims.claim('init', requestHash, candidate, now, UNTIL_WIPED, () => {
      first = this.startSession(sessionEnd);
      this.sql.exec('UPDATE session SET ddc_jti = ? WHERE id = 1', candidate.ddcJti);
    });
    if (first) await this.scheduleAlarm();
    return outcome;
  }

  /** The DDC page: records the collection for this transaction's DDC JWT, once. */
  collect(ddcJti: string, sessionId: string, now: number): CollectOutcome {
    this.expire(now);
    const session = this.sql.exec<{ ddc_jti: string | null }>('SELECT ddc_jti FROM session').toArray()[0];
    if (session?.ddc_jti !== ddcJti) return { kind: 'unknown' };
    const existing = this.sql
      .exec<{ session_id: string }>('SELECT session_id FROM collections WHERE ddc_jti = ?', ddcJti)
      .toArray()[0];
    if (existing) return { kind: 'collected', sessionId: existing.session_id };
    this.sql.exec('INSERT INTO collections (ddc_jti, session_id) VALUES (?, ?)', ddcJti, sessionId);
    return { kind: 'collected', sessionId };
  }

  /**
   * authenticate: the first body's answer; opens its challenge, extends the session to an hour
   * from now and stages the session record's projection to KV (under `projectionKey`) in the same
   * atomic step, so every identical request gets the answer at once and nobody waits for KV. When the candidate's risk decision depends on the
   * device data collection, `collection` says what the caller assumed (collected when it has a
   * collectionReference): a wrong assumption claims nothing and answers `stale` with the truth,
   * so the usual case costs one call, not two.
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
    return this.changing((): ClaimOutcome<AuthClaim> | { kind: 'stale'; collected: boolean } => {
      this.expire(now);
      if (collection && this.claims.answerOf('auth', now) === undefined) {
        const collected = collection.reference !== null && collection.reference === this.collection();
        if (collected !== collection.assumed) return { kind: 'stale', collected };
      }
      return this.claims.claim('auth', requestHash, candidate, now, UNTIL_WIPED, () => {
        if (!this.startSession(sessionEnd)) this.extendSession(sessionEnd);
        if (candidate.challenge) {
          const { reference, expiresAt } = candidate.challenge;
          this.sql.exec('INSERT INTO challenge (reference, expires_at) VALUES (?, ?)', reference, expiresAt);
        }
        // The projection also carries the session's (possibly moved) end: the alarm's wipe follows it.
        this.project(projectionKey, {
          decidedAt: now,
          brands: candidate.brands as SessionRecord['brands'],
          version: candidate.version,
          scenario: candidate.scenario,
          answer: candidate.answer,
          ...(candidate.challenge ? { challenge: candidate.challenge } : {}),
          expiresAt: this.sessionEnd()!,
        });
        this.keepScope(scope, now);
        this.noticeOutcome();
      });
    });
  }

  /**
   * The challenge page: shows the challenge from its JWT while it is open. The same JWT may show
   * it again (the cardholder's browser posts again when an answer was lost): the attempts are
   * counted here, not per showing, so a second showing gives no extra attempt. Once the
   * challenge has its result, its JWT is used up.
   */
  showChallenge(reference: string, jti: string, now: number): Promise<ShowOutcome> {
    // A challenge past its 10 minutes ends here (`challenge`), and its result is projected.
    return this.changing((): ShowOutcome => {
      this.expire(now);
      const row = this.challenge(reference, now);
      if (!row) return { kind: 'unknown' };
      if (row.outcome !== null) return { kind: row.shown_jti !== null ? 'used' : 'ended' };
      if (row.shown_jti !== null && row.shown_jti !== jti) return { kind: 'used' };
      this.sql.exec('UPDATE challenge SET shown_jti = ? WHERE reference = ?', jti, reference);
      return { kind: 'shown', attemptsLeft: MAX_CODE_ATTEMPTS - row.attempts };
    });
  }

  /** One form post: evaluated only while the challenge is open, so never more than the limit. */
  submitChallenge(reference: string, attempt: CodeAttempt, now: number): Promise<SubmitOutcome> {
    return this.changing((): SubmitOutcome => {
      this.expire(now);
      const row = this.challenge(reference, now);
      if (!row) return { kind: 'unknown' };
      if (row.outcome !== null) return { kind: 'ended', result: resultOf(row) };
      const step = challengeStep(attempt, row.attempts);
      const attempts = attempt === 'wrong' ? row.attempts + 1 : row.attempts;
      this.sql.exec(
        'UPDATE challenge SET attempts = ?, evaluated = evaluated + ? WHERE reference = ?',
        ...[attempts, attempt === 'cancel' ? 0 : 1, reference],
      );
      if (step.kind === 'retry') return { kind: 'retry', attemptsLeft: MAX_CODE_ATTEMPTS - step.attempts };
      return {
        kind: 'ended',
        result: this.end(reference, step.kind, step.kind === 'passed' ? 'code' : step.reason, now),
      };
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
    return this.changing((): TransactionFacts | undefined => {
      this.expire(now);
      return this.facts(now);
    });
  }

  /** What the transaction is now (see {@link transaction}); undefined when there is no session. */
  private facts(now: number): TransactionFacts | undefined {
    const init = this.claims.entry<InitClaim>('init', now);
    const auth = this.claims.entry<AuthClaim>('auth', now);
    const liveAuth = this.live.authentication();
    const liveChallenge = this.live.challenge();
    const row = auth?.answer.challenge ? this.challenge(auth.answer.challenge.reference, now) : undefined;
    // The first authenticate's start (live: while its AReq is in flight, the transaction exists).
    const since = this.sql.exec<{ since: number }>('SELECT since FROM event_scope').toArray()[0]?.since;
    const times = [
      init?.decidedAt,
      since,
      auth?.decidedAt,
      row?.completed_at,
      liveAuth?.decidedAt,
      liveChallenge?.result?.decidedAt,
    ].filter((t): t is number => typeof t === 'number');
    if (times.length === 0) return undefined;
    return {
      createdAt: Math.min(...times),
      updatedAt: Math.max(...times),
      ...(auth ? { auth: auth.answer } : {}),
      ...(row && row.outcome !== null ? { challengeResult: resultOf(row) } : {}),
      ...(liveAuth ? { live: { ...liveAuth, ...(liveChallenge ? { challenge: liveChallenge } : {}) } } : {}),
    };
  }

  // --- live (docs/threeds.md "Live"): the state of a real authentication (live-transaction.ts) ---

  /** A card prepared at the 3DS Server provider (kept unless `replace`). */
  livePrepared(card: PreparedCard, replace: boolean, now: number): PreparedCard {
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
    const collected = this.collect(ddcJti, sessionId, now);
    if (collected.kind === 'unknown') return collected;
    return { ...collected, ...this.live.collect(facts, now) };
  }

  /** What the DDC page's script learned of the browser after the page loaded. */
  liveAddFacts(facts: Record<string, unknown>, now: number): void {
    this.expire(now);
    this.live.addFacts(facts);
  }

  /** The ACS's 3DS Method notification reached the service. */
  liveMethodCompleted(now: number): boolean {
    this.expire(now);
    return this.live.methodCompleted(now);
  }

  /** Waits for the 3DS Method to complete, until `until` at the latest. */
  liveAwaitMethod(until: number): Promise<MethodRecord> {
    return this.live.awaitMethod(until);
  }

  /** authenticate's single flight (see LiveTransaction.begin); the session lives an hour from now. */
  liveBegin(
    requestHash: string,
    leaseId: string,
    now: number,
    sessionEnd: number,
    scope: EventScope,
  ): Promise<LiveBegin> {
    return this.changing(async () => {
      this.expire(now);
      const begun = await this.live.begin(requestHash, leaseId, now);
      if (begun.kind === 'run') {
        this.keepScope(scope, now);
        if (this.startSession(sessionEnd) || this.extendSession(sessionEnd)) await this.scheduleAlarm();
      }
      return begun;
    });
  }

  /** The AReq goes out: from now on its lease's end is an alarm time ({@link LiveTransaction.sendingLeaseEnd}). */
  liveSending(leaseId: string, now: number): Promise<boolean> {
    return this.changing(() => {
      const sending = this.live.sending(leaseId, now);
      this.rearm = sending;
      return sending;
    });
  }

  liveComplete(
    leaseId: string,
    answer: Record<string, unknown>,
    now: number,
    challenge?: LiveChallenge,
  ): Promise<Record<string, unknown> | undefined> {
    return this.changing(() => {
      // The answer settles the AReq's lease; a challenge it opened is watched from the alarm.
      this.rearm = true;
      return this.live.complete(leaseId, answer, now, challenge);
    });
  }

  liveLose(leaseId: string, now: number): Promise<void> {
    return this.changing(() => this.live.lose(leaseId, now));
  }

  liveAbandon(leaseId: string): void {
    this.live.abandon(leaseId);
  }

  /** The challenge page's relay: the challenge to post to the ACS, once its JWT is checked. */
  liveShow(reference: string, jti: string, md: string, now: number): LiveShow {
    this.expire(now);
    return this.live.show(reference, jti, md);
  }

  /** The transaction's live challenge, its MD and its result if decided. */
  liveChallenge(now: number): { challenge: LiveChallenge; md: string; result?: LiveResult } | undefined {
    this.expire(now);
    return this.live.challenge();
  }

  /** Records the challenge's one result (the first decided stays) and returns it. */
  liveDecide(reference: string, answer: Record<string, unknown>, now: number): Promise<LiveResult | undefined> {
    return this.changing(() => {
      this.expire(now);
      return this.live.decide(reference, answer, now);
    });
  }

  /**
   * The alarm: ends a challenge left open past its deadline (its result, projection and event
   * staged as at any call), writes the projections that are due (outbox.ts), sends the staged
   * events (event-outbox.ts), and wipes the session a minute after its end (staged events stay).
   * It re-arms itself while anything is pending, so a write or an append that failed, hung or
   * timed out is tried again until it lands.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const end = this.sessionEnd();
    this.live.loseIfAbandoned(now);
    if (end !== undefined && end + WIPE_DELAY_MS <= now) this.closeAndWipe(now);
    else {
      this.endOverdueChallenge(now);
      await this.watchLiveChallenge(now);
    }
    this.staged = false;
    this.rearm = false;
    await this.outbox.flush();
    await this.events.flush();
    await this.scheduleAlarm();
  }

  /** The transaction's answer of verification and of the sandbox: see {@link concludeChallenge}. */
  private conclude(
    reference: string,
    now: number,
    ending: () => [ChallengeResult['outcome'], ChallengeResult['reason']],
  ): Promise<ConcludeOutcome> {
    return this.changing((): ConcludeOutcome => {
      this.expire(now);
      const auth = this.claims.answerOf<AuthClaim>('auth', now);
      const row = auth?.challenge?.reference === reference ? this.challenge(reference, now) : undefined;
      if (!auth?.challenge || !row) return { kind: 'unknown' };
      const session = { brands: auth.brands, version: auth.version, onSuccess: auth.challenge.onSuccess };
      if (row.outcome !== null) return { kind: 'ended', result: resultOf(row), session };
      const [outcome, reason] = ending();
      return { kind: 'ended', result: this.end(reference, outcome, reason, now), session };
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

  /** Keeps who the transaction's event goes to, from its (first) authenticate. */
  private keepScope(scope: EventScope, now: number): void {
    this.sql.exec('INSERT OR IGNORE INTO event_scope (id, since, scope) VALUES (1, ?, ?)', now, JSON.stringify(scope));
  }

  /**
   * Stages the transaction's event once its final outcome is recorded: called in the same
   * synchronous block as every write that may record it, so the outcome and its event commit
   * together; once per session (the state cannot leave `completed`).
   */
  private noticeOutcome(): void {
    const row = this.sql
      .exec<{ since: number; scope: string; staged: number }>('SELECT since, scope, staged FROM event_scope')
      .toArray()[0];
    if (!row || row.staged === 1) return;
    const facts = this.facts(Number.NEGATIVE_INFINITY);
    if (!facts || transactionState(facts) !== 'completed') return;
    const scope = JSON.parse(row.scope) as EventScope;
    this.sql.exec('UPDATE event_scope SET staged = 1');
    const objectId = this.ctx.id.toString();
    const completed: CompletedFacts = { scope, facts };
    this.events.stage(scope.username, {
      eventId: `3ds_${objectId}_${row.since}`,
      eventType: 'threeDS.authentication.completed',
      subject: `3ds:${objectId}`,
      createdAt: facts.updatedAt,
      entity: scope.entity,
      facts: completed,
    });
    this.staged = true;
  }

  /** The event's data: the outcome as `verification` shows it, without `authenticationValue`. */
  private async eventData(event: StagedEvent): Promise<Record<string, unknown>> {
    const { scope, facts } = event.facts as CompletedFacts;
    const context = { key: settingsOf(this.env).jwtKey, baseUrl: scope.baseUrl };
    const { result } = await transactionOutcome(context, facts, scope.transactionReference, scope.apiVersion);
    return withoutAuthenticationValue(result ?? {}) as Record<string, unknown>;
  }

  /**
   * An open live challenge: asks the provider for its RReq when a look is due, and records what it
   * says (challenge-watch.ts); the first result recorded stays, whoever recorded it.
   */
  private async watchLiveChallenge(now: number): Promise<void> {
    const open = this.live.challenge();
    if (!open || open.result || now < this.nextLook()!) return;
    const { challenge } = open;
    const scope = this.scope();
    try {
      const answer = await look(objectProvider.of(this.env), challenge, scope?.baseUrl ?? '', now);
      // The session may have ended (and been wiped) while the provider answered: then nothing stays.
      if (!this.stillOpen(challenge.reference)) return;
      this.sql.exec('INSERT OR REPLACE INTO live_watch (id, asked_at, failed) VALUES (1, ?, 0)', now);
      if (answer) this.live.decide(challenge.reference, answer, Date.now());
    } catch (e) {
      if (this.stillOpen(challenge.reference))
        this.sql.exec('INSERT OR REPLACE INTO live_watch (id, asked_at, failed) VALUES (1, ?, 1)', now);
      logLine({ level: 'warn', event: 'challenge.watch', cause: describeError(e) });
    }
  }

  private stillOpen(reference: string): boolean {
    const open = this.live.challenge();
    return open !== undefined && !open.result && open.challenge.reference === reference;
  }

  /**
   * Ends the session: a challenge still open whose result can no longer come ends first (test: past
   * its deadline; live: once no RReq can come), so that its outcome and event are staged before the
   * state goes; staged events outlive the wipe, and the alarm is kept for them.
   */
  private closeAndWipe(now: number): void {
    this.endOverdueChallenge(now);
    const open = this.live.challenge();
    if (open && !open.result) {
      const ended = endedUnwatched(open.challenge, this.scope()?.baseUrl ?? '', now);
      if (ended) this.live.decide(open.challenge.reference, ended, now);
    }
    this.wipe();
  }

  /** When the live challenge's watch looks next; undefined without an open live challenge. */
  private nextLook(): number | undefined {
    const open = this.live.challenge();
    if (!open || open.result) return undefined;
    const row = this.sql.exec<{ asked_at: number; failed: number }>('SELECT * FROM live_watch').toArray()[0];
    return nextLookAt(open.challenge, row ? { at: row.asked_at, failed: row.failed === 1 } : undefined);
  }

  private scope(): EventScope | undefined {
    const row = this.sql.exec<{ scope: string }>('SELECT scope FROM event_scope').toArray()[0];
    return row ? (JSON.parse(row.scope) as EventScope) : undefined;
  }

  /** A test challenge still open past its deadline ends as expired (as the next call would end it). */
  private endOverdueChallenge(now: number): void {
    const open = this.sql
      .exec<{ reference: string }>('SELECT reference FROM challenge WHERE outcome IS NULL AND expires_at <= ?', now)
      .toArray();
    for (const { reference } of open) this.challenge(reference, now);
  }

  /** Stages the session record as the next projection of its key. */
  private project(key: string, record: SessionRecord): void {
    this.outbox.stage(key, record, record.expiresAt);
    this.staged = true;
  }

  /** The collection (its SessionId) made with the DDC JWT that deviceDataInitialize issued, if any. */
  private collection(): string | null {
    const row = this.sql
      .exec<{ session_id: string }>('SELECT c.session_id FROM collections c JOIN session s ON s.ddc_jti = c.ddc_jti')
      .toArray()[0];
    return row?.session_id ?? null;
  }

  /** The challenge row, ended as expired when its 10 minutes have passed without a result. */
  private challenge(reference: string, now: number): ChallengeRow | undefined {
    const row = this.sql.exec<ChallengeRow>('SELECT * FROM challenge WHERE reference = ?', reference).toArray()[0];
    if (row && row.outcome === null && now >= row.expires_at) {
      this.end(reference, 'failed', 'expired', row.expires_at);
      return this.sql.exec<ChallengeRow>('SELECT * FROM challenge WHERE reference = ?', reference).one();
    }
    return row;
  }

  /** Ends the challenge with its one result, and projects the result with the session record. */
  private end(
    reference: string,
    outcome: ChallengeResult['outcome'],
    reason: ChallengeResult['reason'],
    at: number,
  ): ChallengeResult {
    this.sql.exec(
      'UPDATE challenge SET outcome = ?, reason = ?, completed_at = ? WHERE reference = ?',
      outcome,
      reason,
      at,
      reference,
    );
    const result = { outcome, reason, completedAt: at };
    // The session record is this object's one projection: amend its newest value.
    const projected = this.outbox.latest<SessionRecord>();
    if (projected?.value?.challenge?.reference === reference)
      this.project(projected.key, { ...projected.value, result });
    this.noticeOutcome();
    return result;
  }

  /** Starts the session if there is none; true when it did. */
  private startSession(end: number): boolean {
    if (this.sql.exec('SELECT 1 FROM session').toArray().length > 0) return false;
    this.sql.exec('INSERT INTO session (id, expires_at) VALUES (1, ?)', end);
    return true;
  }

  /** Moves the session's end later (never earlier); true when it moved. */
  private extendSession(end: number): boolean {
    return this.sql.exec('UPDATE session SET expires_at = ? WHERE id = 1 AND expires_at < ?', end, end).rowsWritten > 0;
  }

  /** The session's end, if there is a session. */
  private sessionEnd(): number | undefined {
    return this.sql.exec<{ expires_at: number }>('SELECT expires_at FROM session').toArray()[0]?.expires_at;
  }

  /**
   * The alarm: at the next projection or event due, an open challenge's deadline, else a minute
   * after the session's end (the wipe).
   */
  private async scheduleAlarm(): Promise<void> {
    const end = this.sessionEnd();
    const deadline = this.sql
      .exec<{ at: number | null }>('SELECT MIN(expires_at) AS at FROM challenge WHERE outcome IS NULL')
      .one().at;
    const times = [
      this.outbox.nextDue(),
      this.events.nextDue(),
      deadline ?? undefined,
      this.nextLook(),
      this.live.sendingLeaseEnd(),
      end === undefined ? undefined : end + WIPE_DELAY_MS,
    ].filter((t): t is number => t !== undefined);
    if (times.length > 0) await this.ctx.storage.setAlarm(Math.min(...times));
  }

  /** A session past its end is gone: the reference may start a new one. */
  private expire(now: number): void {
    const end = this.sessionEnd();
    if (end === undefined || end > now) return;
    this.closeAndWipe(now);
    // An event it staged leaves from the alarm; this call may not be one that sets it (the storage
    // write is held by the output gate like any other).
    if (this.events.nextDue() !== undefined) void this.scheduleAlarm();
  }

  private wipe(): void {
    // Staged events stay (events_out): the alarm sends them after the session is gone.
    this.sql.exec(
      'DELETE FROM collections; DELETE FROM challenge; DELETE FROM session; DELETE FROM event_scope; DELETE FROM live_watch',
    );
    this.claims.wipe();
    this.live.wipe();
    this.outbox.wipe();
  }
}

function resultOf(row: ChallengeRow): ChallengeResult {
  return { outcome: row.outcome!, reason: row.reason!, completedAt: row.completed_at! };
}
