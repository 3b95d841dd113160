import { DurableObject } from 'cloudflare:workers';
import { challengeStep, MAX_CODE_ATTEMPTS, type ChallengeResult, type CodeAttempt } from '../../threeds/challenge';
import { ClaimTable, type ClaimOutcome } from './claims';

/**
 * One Durable Object per 3DS transaction (merchant, entity, transactionReference): the place
 * where every decision about the transaction that must be strongly consistent is made once,
 * whichever Cloudflare location the merchant's server or the cardholder's browser reaches.
 *
 * - the first body of deviceDataInitialize and of authenticate (claims, with their answers);
 * - the device data collection, at most one per DDC JWT;
 * - the challenge: shown from its JWT at most once, at most {@link MAX_CODE_ATTEMPTS} codes
 *   evaluated in all, and exactly one result, which the page and verification both report.
 *
 * KV keeps the session record that authenticate writes (see storage-schema.md); this object
 * keeps only what decides. Its state ends with the session (an alarm wipes it), and every call
 * takes the caller's clock so that expiry is judged on one time line with the KV records.
 */

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
  | { kind: 'recorded' | 'repeat'; sessionId: string }
  /** No deviceDataInitialize issued this JWT for the transaction (or the session ended). */
  | { kind: 'unknown' };

export type ShowOutcome =
  | { kind: 'shown'; attemptsLeft: number }
  | { kind: 'used' }
  | { kind: 'ended'; result: ChallengeResult }
  | { kind: 'unknown' };

export type SubmitOutcome =
  { kind: 'retry'; attemptsLeft: number } | { kind: 'ended'; result: ChallengeResult } | { kind: 'unknown' };

export type ConcludeOutcome = { kind: 'ended'; result: ChallengeResult } | { kind: 'unknown' };

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
  outcome: string | null;
  reason: string | null;
  completed_at: number | null;
}

export class ThreeDsGuard extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly claims: ClaimTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY CHECK (id = 1), expires_at INTEGER NOT NULL, ddc_jti TEXT);
      CREATE TABLE IF NOT EXISTS collections (ddc_jti TEXT PRIMARY KEY, session_id TEXT NOT NULL, collected_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS challenge (reference TEXT PRIMARY KEY, expires_at INTEGER NOT NULL, shown_jti TEXT,
        attempts INTEGER NOT NULL DEFAULT 0, evaluated INTEGER NOT NULL DEFAULT 0, outcome TEXT, reason TEXT, completed_at INTEGER)`);
    this.claims = new ClaimTable(this.sql);
  }

  /** deviceDataInitialize: the first body's answer, for it and every retry. */
  async initialize(
    requestHash: string,
    candidate: InitClaim,
    now: number,
    sessionExpiresAt: number,
  ): Promise<ClaimOutcome<InitClaim>> {
    this.expire(now);
    return this.claims.claim(
      'init',
      requestHash,
      candidate,
      now,
      { expiresAt: this.sessionEnd(sessionExpiresAt), writesRecord: false },
      () => {
        this.sql.exec('UPDATE session SET ddc_jti = ? WHERE id = 1', candidate.ddcJti);
      },
    );
  }

  /** The DDC page: records the collection for this transaction's DDC JWT, once. */
  collect(ddcJti: string, sessionId: string, now: number): CollectOutcome {
    this.expire(now);
    const session = this.sql.exec<{ ddc_jti: string | null }>('SELECT ddc_jti FROM session').toArray()[0];
    if (session?.ddc_jti !== ddcJti) return { kind: 'unknown' };
    const existing = this.sql
      .exec<{ session_id: string }>('SELECT session_id FROM collections WHERE ddc_jti = ?', ddcJti)
      .toArray()[0];
    if (existing) return { kind: 'repeat', sessionId: existing.session_id };
    this.sql.exec(
      'INSERT INTO collections (ddc_jti, session_id, collected_at) VALUES (?, ?, ?)',
      ddcJti,
      sessionId,
      now,
    );
    return { kind: 'recorded', sessionId };
  }

  /** The collection (its SessionId) made with the DDC JWT that deviceDataInitialize issued, if any. */
  private collection(now: number): string | null {
    this.expire(now);
    const row = this.sql
      .exec<{ session_id: string }>('SELECT c.session_id FROM collections c JOIN session s ON s.ddc_jti = c.ddc_jti')
      .toArray()[0];
    return row?.session_id ?? null;
  }

  /**
   * authenticate: the first body's answer; opens its challenge in the same atomic step. When the
   * candidate's risk decision depends on the device data collection, `collection` says what the
   * caller assumed (collected when it has a collectionReference): a wrong assumption claims
   * nothing and answers `stale` with the truth, so the common case costs one call, not two.
   */
  async authenticate(
    requestHash: string,
    candidate: AuthClaim,
    now: number,
    sessionExpiresAt: number,
    collection?: { reference: string | null; assumed: boolean },
  ): Promise<(ClaimOutcome<AuthClaim> & { sessionExpiresAt: number }) | { kind: 'stale'; collected: boolean }> {
    this.expire(now);
    if (collection && this.claims.answerOf('auth', now) === undefined) {
      const collected = collection.reference !== null && collection.reference === this.collection(now);
      if (collected !== collection.assumed) return { kind: 'stale', collected };
    }
    const end = this.sessionEnd(sessionExpiresAt);
    const outcome = await this.claims.claim(
      'auth',
      requestHash,
      candidate,
      now,
      { expiresAt: end, writesRecord: true },
      () => {
        if (candidate.challenge) {
          this.sql.exec(
            'INSERT INTO challenge (reference, expires_at) VALUES (?, ?)',
            candidate.challenge.reference,
            candidate.challenge.expiresAt,
          );
        }
      },
    );
    return { ...outcome, sessionExpiresAt: end };
  }

  /** authenticate's session record is in KV. */
  authenticationRecorded(requestHash: string): void {
    this.claims.recorded('auth', requestHash);
  }

  /** authenticate's KV write failed: the next identical request writes it. */
  authenticationReleased(requestHash: string): void {
    this.claims.released('auth', requestHash);
  }

  /** The challenge page: shows the challenge for this JWT if no JWT showed it before. */
  showChallenge(reference: string, jti: string, now: number): ShowOutcome {
    this.expire(now);
    const row = this.challenge(reference, now);
    if (!row) return { kind: 'unknown' };
    if (row.shown_jti !== null) return { kind: 'used' };
    if (row.outcome !== null) return { kind: 'ended', result: resultOf(row) };
    this.sql.exec('UPDATE challenge SET shown_jti = ? WHERE reference = ?', jti, reference);
    return { kind: 'shown', attemptsLeft: MAX_CODE_ATTEMPTS - row.attempts };
  }

  /** One form post: evaluated only while the challenge is open, so never more than the limit. */
  submitChallenge(reference: string, attempt: CodeAttempt, now: number): SubmitOutcome {
    this.expire(now);
    const row = this.challenge(reference, now);
    if (!row) return { kind: 'unknown' };
    if (row.outcome !== null) return { kind: 'ended', result: resultOf(row) };
    const step = challengeStep(attempt, row.attempts);
    const attempts = attempt === 'wrong' ? row.attempts + 1 : row.attempts;
    this.sql.exec(
      'UPDATE challenge SET attempts = ?, evaluated = evaluated + ? WHERE reference = ?',
      attempts,
      attempt === 'cancel' ? 0 : 1,
      reference,
    );
    if (step.kind === 'retry') return { kind: 'retry', attemptsLeft: MAX_CODE_ATTEMPTS - step.attempts };
    return {
      kind: 'ended',
      result: this.end(reference, step.kind, step.kind === 'passed' ? 'code' : step.reason, now),
    };
  }

  /** verification: the challenge's one result; a challenge still open ends here as not completed. */
  concludeChallenge(reference: string, now: number): ConcludeOutcome {
    this.expire(now);
    const row = this.challenge(reference, now);
    if (!row) return { kind: 'unknown' };
    if (row.outcome !== null) return { kind: 'ended', result: resultOf(row) };
    return { kind: 'ended', result: this.end(reference, 'failed', 'notCompleted', now) };
  }

  override alarm(): void {
    this.wipe();
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
    return { outcome, reason, completedAt: at };
  }

  /** The session's end: set by the first step that reaches the object, never extended. */
  private sessionEnd(proposed: number): number {
    const row = this.sql.exec<{ expires_at: number }>('SELECT expires_at FROM session').toArray()[0];
    if (row) return row.expires_at;
    this.sql.exec('INSERT INTO session (id, expires_at) VALUES (1, ?)', proposed);
    void this.ctx.storage.setAlarm(proposed + WIPE_DELAY_MS);
    return proposed;
  }

  /** A session past its end is gone: the reference may start a new one. */
  private expire(now: number): void {
    const row = this.sql.exec<{ expires_at: number }>('SELECT expires_at FROM session').toArray()[0];
    if (row && row.expires_at <= now) this.wipe();
  }

  private wipe(): void {
    this.sql.exec('DELETE FROM claims; DELETE FROM collections; DELETE FROM challenge; DELETE FROM session');
  }
}

function resultOf(row: ChallengeRow): ChallengeResult {
  return {
    outcome: row.outcome as ChallengeResult['outcome'],
    reason: row.reason as ChallengeResult['reason'],
    completedAt: row.completed_at ?? row.expires_at,
  };
}
