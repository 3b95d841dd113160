import { ENDED_TOKENS } from './token-table';
import { updateAllowed, UPDATE_WINDOW_MS } from './update-limit';

/**
 * The counted updates of a token object's tokens (docs/tokens.md "Updates"): the time of each,
 * kept for the rolling window, so that the object that applies the updates decides the limit
 * (update-limit.ts) exactly, with its own clock.
 */
export class UpdateCounts {
  constructor(private readonly sql: SqlStorage) {}

  createTables(): void {
    this.sql.exec('CREATE TABLE IF NOT EXISTS updates (token_id TEXT NOT NULL, at INTEGER NOT NULL)');
  }

  /** Whether the token may take one more counted update at `now` (the times out of the window dropped first). */
  allowed(tokenId: string, now: number): ReturnType<typeof updateAllowed> {
    this.sql.exec('DELETE FROM updates WHERE at <= ?', now - UPDATE_WINDOW_MS);
    const times = this.sql
      .exec<{ at: number }>('SELECT at FROM updates WHERE token_id = ?', tokenId)
      .toArray()
      .map((r) => r.at);
    return updateAllowed(times, now);
  }

  /** Counts an update, in the same synchronous block as the change. */
  count(tokenId: string, now: number): void {
    this.sql.exec('INSERT INTO updates (token_id, at) VALUES (?, ?)', tokenId, now);
  }

  /** A deleted token's updates. */
  forget(tokenId: string): void {
    this.sql.exec('DELETE FROM updates WHERE token_id = ?', tokenId);
  }

  /** The updates of tokens past their end, and those out of the window. */
  prune(now: number): void {
    this.sql.exec(`DELETE FROM updates WHERE token_id IN (${ENDED_TOKENS}) OR at <= ?`, now, now - UPDATE_WINDOW_MS);
  }
}
