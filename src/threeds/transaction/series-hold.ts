import { backoffMs } from '../../backoff';
import type { SessionScope } from '../session-record';

/**
 * A 3RI's hold on its prior transaction's series (docs/threeds.md "Series and 3RI"), kept by the
 * 3RI's own object: the prior's object counts a 3RI's use before its AReq (so concurrent 3RIs
 * never overshoot), and only the 3RI's object knows whether its 3RI ended authenticated. A hold is
 * opened (in storage) before the prior is asked, so whatever fails afterwards, the use it may have
 * counted is either kept (the 3RI authenticated) or released: when the 3RI ends not authenticated,
 * or its session ends without an outcome, or at the latest {@link OPEN_HOLD_MS} after it was
 * opened (a 3RI whose run failed before any session, and was never retried). A release is sent
 * until the prior acknowledges it, and
 * names its holder: the prior releases a use only while this hold is its holder, so a late release
 * can never undo a later 3RI's use. One hold per request body (a different body under the same
 * reference holds nothing of this one's).
 */

interface HoldRow extends Record<string, SqlStorageValue> {
  holder: string;
  request_hash: string;
  /** The 3RI's own transaction reference, which the prior knows its use by. */
  reference: string;
  prior: string;
  state: 'open' | 'release';
  due_at: number | null;
  attempts: number;
}

/**
 * How long a hold stays open without an outcome: a session's hour and the minute before its wipe
 * (a retry within the session finds it open).
 */
export const OPEN_HOLD_MS = 61 * 60_000;

/** How a hold's release reaches the prior's object (the object's seam, so tests can fail it). */
export type ReleaseUse = (prior: SessionScope, reference: string, holder: string) => Promise<void>;

export class SeriesHold {
  constructor(
    private readonly sql: SqlStorage,
    private readonly releaseUse: ReleaseUse,
  ) {}

  createTables(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS series_hold (holder TEXT PRIMARY KEY, request_hash TEXT NOT NULL,
      reference TEXT NOT NULL, prior TEXT NOT NULL, state TEXT NOT NULL, due_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0)`);
  }

  /**
   * The open hold of this body on `prior`'s series: the one already open (a retry), else a new one.
   * Called in the same synchronous block as the decision to ask the prior.
   */
  open(requestHash: string, reference: string, prior: SessionScope, now: number): string {
    const row = this.openRow(requestHash);
    if (row) return row.holder;
    const holder = crypto.randomUUID();
    this.sql.exec(
      "INSERT INTO series_hold (holder, request_hash, reference, prior, state, due_at) VALUES (?, ?, ?, ?, 'open', ?)",
      ...[holder, requestHash, reference, JSON.stringify(prior), now + OPEN_HOLD_MS],
    );
    return holder;
  }

  /** The prior counted nothing for this body (it refused it, or another body holds the reference there). */
  drop(requestHash: string): void {
    this.sql.exec("DELETE FROM series_hold WHERE request_hash = ? AND state = 'open'", requestHash);
  }

  /**
   * This body's 3RI ended: authenticated, its use stays counted (nothing to send); else it is
   * released, from now. In the same synchronous block as the outcome.
   */
  settle(requestHash: string, authenticated: boolean, now: number): void {
    if (authenticated) this.drop(requestHash);
    else
      this.sql.exec(
        "UPDATE series_hold SET state = 'release', due_at = ? WHERE request_hash = ? AND state = 'open'",
        now,
        requestHash,
      );
  }

  /** The session ended: a hold still open never came to an outcome, and is released. */
  closeOpen(now: number): void {
    this.sql.exec("UPDATE series_hold SET state = 'release', due_at = ? WHERE state = 'open'", now);
  }

  /** When a release is next due, or an open hold's time runs out (the alarm's time); undefined when none. */
  nextDue(): number | undefined {
    const row = this.sql.exec<{ due: number | null }>('SELECT MIN(due_at) AS due FROM series_hold').one();
    return row.due ?? undefined;
  }

  /** Whether any hold is left (open or to release): the object's storage stays until none is. */
  pending(): boolean {
    return this.sql.exec('SELECT 1 FROM series_hold LIMIT 1').toArray().length > 0;
  }

  /**
   * Sends the releases due by `now`; each acknowledged one is forgotten, a failed one is tried
   * again later (backoff). Safe to run twice at once: a release is a no-op the second time.
   */
  async flush(now: number): Promise<void> {
    // An open hold past its time never came to an outcome: it is released.
    this.sql.exec("UPDATE series_hold SET state = 'release' WHERE state = 'open' AND due_at <= ?", now);
    const due = this.sql
      .exec<HoldRow>("SELECT * FROM series_hold WHERE state = 'release' AND due_at <= ?", now)
      .toArray();
    await Promise.all(
      due.map(async (row) => {
        try {
          await this.releaseUse(JSON.parse(row.prior) as SessionScope, row.reference, row.holder);
          this.sql.exec('DELETE FROM series_hold WHERE holder = ?', row.holder);
        } catch {
          this.sql.exec(
            'UPDATE series_hold SET attempts = attempts + 1, due_at = ? WHERE holder = ?',
            Date.now() + backoffMs(row.attempts + 1, 1_000, 60_000),
            row.holder,
          );
        }
      }),
    );
  }

  private openRow(requestHash: string): HoldRow | undefined {
    return this.sql
      .exec<HoldRow>("SELECT * FROM series_hold WHERE request_hash = ? AND state = 'open'", requestHash)
      .toArray()[0];
  }
}
