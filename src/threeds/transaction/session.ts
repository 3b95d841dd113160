import type { CollectOutcome } from '../transaction-api';

/**
 * A transaction's session inside its object: when it ends (an hour from its first step, and an
 * hour from authenticate once that comes, so a challenge always gets its 10 minutes), the DDC JWT
 * deviceDataInitialize issued, and the device data collection made with it (at most one per JWT).
 */
export class Session {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed").
   */
  createTables(): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY CHECK (id = 1), expires_at INTEGER NOT NULL, ddc_jti TEXT);
      CREATE TABLE IF NOT EXISTS collections (ddc_jti TEXT PRIMARY KEY, session_id TEXT NOT NULL)`);
  }

  /** Starts the session if there is none; true when it did. */
  start(end: number): boolean {
    if (this.sql.exec('SELECT 1 FROM session').toArray().length > 0) return false;
    this.sql.exec('INSERT INTO session (id, expires_at) VALUES (1, ?)', end);
    return true;
  }

  /** Moves the session's end later (never earlier); true when it moved. */
  extend(end: number): boolean {
    return this.sql.exec('UPDATE session SET expires_at = ? WHERE id = 1 AND expires_at < ?', end, end).rowsWritten > 0;
  }

  /** Starts the session, or moves its end to `end` if later; true when either changed it. */
  startOrExtend(end: number): boolean {
    return this.start(end) || this.extend(end);
  }

  /** The session's end, if there is a session. */
  end(): number | undefined {
    return this.sql.exec<{ expires_at: number }>('SELECT expires_at FROM session').toArray()[0]?.expires_at;
  }

  issueDdc(ddcJti: string): void {
    this.sql.exec('UPDATE session SET ddc_jti = ? WHERE id = 1', ddcJti);
  }

  /** Records the collection for this transaction's DDC JWT, once. */
  collect(ddcJti: string, sessionId: string): CollectOutcome {
    const session = this.sql.exec<{ ddc_jti: string | null }>('SELECT ddc_jti FROM session').toArray()[0];
    if (session?.ddc_jti !== ddcJti) return { kind: 'unknown' };
    const existing = this.sql
      .exec<{ session_id: string }>('SELECT session_id FROM collections WHERE ddc_jti = ?', ddcJti)
      .toArray()[0];
    if (existing) return { kind: 'collected', sessionId: existing.session_id };
    this.sql.exec('INSERT INTO collections (ddc_jti, session_id) VALUES (?, ?)', ddcJti, sessionId);
    return { kind: 'collected', sessionId };
  }

  /** The collection (its SessionId) made with the DDC JWT that deviceDataInitialize issued, if any. */
  collection(): string | null {
    const row = this.sql
      .exec<{ session_id: string }>('SELECT c.session_id FROM collections c JOIN session s ON s.ddc_jti = c.ddc_jti')
      .toArray()[0];
    return row?.session_id ?? null;
  }

  wipe(): void {
    this.sql.exec('DELETE FROM collections; DELETE FROM session');
  }
}
