import {
  challengeStep,
  MAX_CODE_ATTEMPTS,
  type ChallengeResult,
  type CodeAttempt,
  type DecoupledIssuer,
} from '../challenge-rules';
import type { ShowOutcome, SubmitOutcome } from '../transaction-api';

/**
 * The test issuer's challenge inside its transaction's object (docs/threeds.md "Challenge"): shown
 * only from its own JWT (again, while it is open: a page whose answer was lost can be posted again,
 * with no extra attempt), at most {@link MAX_CODE_ATTEMPTS} codes evaluated in all, and exactly one
 * result, which the page and verification both report. A challenge past its deadline ends as
 * expired at the first call that looks at it, or from the object's alarm.
 *
 * The object runs one event at a time and SQL calls are synchronous, so each method, with no
 * `await`, is one atomic step.
 */

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
  /** A decoupled authentication (1): no page; the issuer decides, at `answers_at`, `issuer_outcome`. */
  decoupled: number;
  answers_at: number | null;
  issuer_outcome: 'passed' | 'failed' | null;
}

/** A challenge as the object's other parts see it. */
export interface ChallengeState {
  reference: string;
  shownJti: string | null;
  /** Its one result, once it ended. */
  result?: ChallengeResult;
}

export class TestChallenge {
  /** `onEnded` runs in the same synchronous block as the write that ends a challenge. */
  constructor(
    private readonly sql: SqlStorage,
    private readonly onEnded: (reference: string, result: ChallengeResult) => void,
  ) {}

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed").
   */
  createTables(fresh = false): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS challenge (reference TEXT PRIMARY KEY, expires_at INTEGER NOT NULL, shown_jti TEXT,
        attempts INTEGER NOT NULL DEFAULT 0, evaluated INTEGER NOT NULL DEFAULT 0, outcome TEXT, reason TEXT, completed_at INTEGER,
        decoupled INTEGER NOT NULL DEFAULT 0, answers_at INTEGER, issuer_outcome TEXT);
      CREATE TABLE IF NOT EXISTS challenge_posts (post TEXT PRIMARY KEY, outcome TEXT NOT NULL)`);
    if (fresh) return;
    // An object made before decoupled authentication (an open session's challenge) gets its columns.
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(challenge)').toArray();
    if (!columns.some((c) => c.name === 'decoupled'))
      this.sql.exec(`ALTER TABLE challenge ADD COLUMN decoupled INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE challenge ADD COLUMN answers_at INTEGER; ALTER TABLE challenge ADD COLUMN issuer_outcome TEXT`);
  }

  /** Opens the challenge authenticate decided; a decoupled one with what its issuer will do. */
  open(reference: string, expiresAt: number, decoupled?: DecoupledIssuer): void {
    if (!decoupled) {
      this.sql.exec('INSERT INTO challenge (reference, expires_at) VALUES (?, ?)', reference, expiresAt);
      return;
    }
    this.sql.exec(
      'INSERT INTO challenge (reference, expires_at, decoupled, answers_at, issuer_outcome) VALUES (?, ?, 1, ?, ?)',
      ...[reference, expiresAt, decoupled.answersAt, decoupled.outcome],
    );
  }

  /**
   * Shows the challenge from its JWT while it is open. The same JWT may show it again (the
   * cardholder's browser posts again when an answer was lost): the attempts are counted here, not
   * per showing, so a second showing gives no extra attempt. Once the challenge has its result,
   * its JWT is used up.
   */
  show(reference: string, jti: string, now: number): ShowOutcome {
    const row = this.row(reference, now);
    // A decoupled authentication has no page: no JWT names it.
    if (!row || row.decoupled) return { kind: 'unknown' };
    if (row.outcome !== null) return { kind: row.shown_jti !== null ? 'used' : 'ended' };
    if (row.shown_jti !== null && row.shown_jti !== jti) return { kind: 'used' };
    this.sql.exec('UPDATE challenge SET shown_jti = ? WHERE reference = ?', jti, reference);
    return { kind: 'shown', attemptsLeft: MAX_CODE_ATTEMPTS - row.attempts };
  }

  /**
   * One form post: evaluated only while the challenge is open, so never more than the limit. A post
   * seen before (`post`: the same form with the same code, posted again after a lost answer) gets
   * the answer it got, and counts nothing again.
   */
  submit(reference: string, attempt: CodeAttempt, now: number, post?: string): SubmitOutcome {
    const row = this.row(reference, now);
    if (!row || row.decoupled) return { kind: 'unknown' };
    if (row.outcome !== null) return { kind: 'ended', result: resultOf(row) };
    if (post !== undefined) {
      const seen = this.sql
        .exec<{ outcome: string }>('SELECT outcome FROM challenge_posts WHERE post = ?', post)
        .toArray()[0];
      if (seen) return JSON.parse(seen.outcome) as SubmitOutcome;
    }
    const outcome = this.evaluate(row, reference, attempt, now);
    if (post !== undefined)
      this.sql.exec('INSERT INTO challenge_posts (post, outcome) VALUES (?, ?)', post, JSON.stringify(outcome));
    return outcome;
  }

  private evaluate(row: ChallengeRow, reference: string, attempt: CodeAttempt, now: number): SubmitOutcome {
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
  }

  /**
   * The challenge's one result; one still open ends here as `ending` says. A decoupled
   * authentication still waiting for its issuer stays open (`pending`) unless `decoupledToo` (the
   * sandbox control, which ends it at once; its timeout is then `unavailable`, as the issuer's).
   */
  conclude(
    reference: string,
    now: number,
    ending: () => [ChallengeResult['outcome'], ChallengeResult['reason']],
    decoupledToo: boolean,
  ): ChallengeResult | 'pending' | undefined {
    const row = this.row(reference, now);
    if (!row) return undefined;
    if (row.outcome !== null) return resultOf(row);
    if (row.decoupled && !decoupledToo) return 'pending';
    const [outcome, reason] = ending();
    return this.end(reference, row.decoupled && reason === 'expired' ? 'unavailable' : outcome, reason, now);
  }

  /** The challenge as it is now (one past its deadline ends as expired first); undefined if unknown. */
  state(reference: string, now: number): ChallengeState | undefined {
    const row = this.row(reference, now);
    if (!row) return undefined;
    return {
      reference: row.reference,
      shownJti: row.shown_jti,
      ...(row.outcome !== null ? { result: resultOf(row) } : {}),
    };
  }

  /**
   * A challenge still open past its deadline ends as expired, and a decoupled authentication
   * whose issuer has answered ends with that answer (as the next call would end either).
   */
  endOverdue(now: number): void {
    const open = this.sql
      .exec<{ reference: string }>(
        'SELECT reference FROM challenge WHERE outcome IS NULL AND (expires_at <= ? OR answers_at <= ?)',
        ...[now, now],
      )
      .toArray();
    for (const { reference } of open) this.row(reference, now);
  }

  /** The earliest deadline (or issuer's answer) of an open challenge: an alarm time. */
  nextDeadline(): number | undefined {
    const at = this.sql
      .exec<{ at: number | null }>(
        'SELECT MIN(MIN(expires_at, COALESCE(answers_at, expires_at))) AS at FROM challenge WHERE outcome IS NULL',
      )
      .one().at;
    return at ?? undefined;
  }

  wipe(): void {
    this.sql.exec('DELETE FROM challenge; DELETE FROM challenge_posts');
  }

  /**
   * The challenge row, ended as expired when its time has passed without a result (a decoupled
   * one: `unavailable`), or with its issuer's answer once that is due (decoupled).
   */
  private row(reference: string, now: number): ChallengeRow | undefined {
    const row = this.sql.exec<ChallengeRow>('SELECT * FROM challenge WHERE reference = ?', reference).toArray()[0];
    if (!row || row.outcome !== null) return row;
    const answered = row.answers_at !== null && row.answers_at <= now && row.answers_at < row.expires_at;
    if (answered) this.end(reference, row.issuer_outcome!, 'issuer', row.answers_at!);
    else if (now >= row.expires_at)
      this.end(reference, row.decoupled ? 'unavailable' : 'failed', 'expired', row.expires_at);
    else return row;
    return this.sql.exec<ChallengeRow>('SELECT * FROM challenge WHERE reference = ?', reference).one();
  }

  /** Ends the challenge with its one result. */
  private end(
    reference: string,
    outcome: ChallengeResult['outcome'],
    reason: ChallengeResult['reason'],
    at: number,
  ): ChallengeResult {
    this.sql.exec(
      'UPDATE challenge SET outcome = ?, reason = ?, completed_at = ? WHERE reference = ?',
      ...[outcome, reason, at, reference],
    );
    const result = { outcome, reason, completedAt: at };
    this.onEnded(reference, result);
    return result;
  }
}

function resultOf(row: ChallengeRow): ChallengeResult {
  return { outcome: row.outcome!, reason: row.reason!, completedAt: row.completed_at! };
}
