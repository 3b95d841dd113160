import type { TokenKeys } from '../cards/card-crypto';
import type { SealedValue } from '../records/sealed-value';
import { ENDED_TOKENS } from './token-table';
import { wholeSeconds, type TokenView } from './token-resource';
import { CONFLICT_LIFETIME_MS, newConflictId, sealedConflict } from './token-updates';

/**
 * The conflicts a second tokenization found (docs/tokens.md "Conflicts"), kept sealed by the
 * token's object for {@link CONFLICT_LIFETIME_MS}: one per token and distinct details (the same
 * details again answer the conflict already kept, so a burst of identical requests makes one),
 * accepted at most once, and kept (used) until they end so that a retried acceptance is told it
 * is done.
 */

interface ConflictRow extends Record<string, SqlStorageValue> {
  id: string;
  token_id: string;
  sealed: string;
  expires_at: number;
  used: number;
}

/** A kept conflict: its details sealed, its end, whether it was accepted. */
export interface KeptConflict {
  sealed: SealedValue;
  expiresAt: number;
  used: boolean;
}

export class KeptConflicts {
  constructor(private readonly sql: SqlStorage) {}

  createTables(): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS conflicts (id TEXT PRIMARY KEY, token_id TEXT NOT NULL, values_hash TEXT NOT NULL,
        sealed TEXT NOT NULL, expires_at INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0)`);
  }

  /**
   * Keeps the conflicting details of a second tokenization, sealed; the same details again answer
   * the live conflict already kept.
   */
  async keep(
    token: TokenView,
    conflicts: Record<string, unknown>,
    now: number,
    keys: TokenKeys,
  ): Promise<{ id: string; expiresAt: number }> {
    this.sql.exec('DELETE FROM conflicts WHERE expires_at <= ?', now);
    const { valuesHash, sealed } = await sealedConflict(keys, token, conflicts);
    const existing = this.sql
      .exec<{ id: string; expires_at: number }>(
        'SELECT id, expires_at FROM conflicts WHERE token_id = ? AND values_hash = ? AND used = 0',
        token.tokenId,
        valuesHash,
      )
      .toArray()[0];
    if (existing) return { id: existing.id, expiresAt: existing.expires_at };
    // Whole seconds, as the answer writes the date and time.
    const conflict = { id: newConflictId(), expiresAt: wholeSeconds(now + CONFLICT_LIFETIME_MS) };
    this.sql.exec(
      'INSERT INTO conflicts (id, token_id, values_hash, sealed, expires_at) VALUES (?, ?, ?, ?, ?)',
      ...[conflict.id, token.tokenId, valuesHash, JSON.stringify(sealed), conflict.expiresAt],
    );
    return conflict;
  }

  /** The token's conflict, used or not, until it ends; undefined when unknown or over. */
  find(tokenId: string, conflictId: string, now: number): KeptConflict | undefined {
    const row = this.sql
      .exec<ConflictRow>(
        'SELECT * FROM conflicts WHERE id = ? AND token_id = ? AND expires_at > ?',
        conflictId,
        tokenId,
        now,
      )
      .toArray()[0];
    return row && { sealed: JSON.parse(row.sealed) as SealedValue, expiresAt: row.expires_at, used: row.used === 1 };
  }

  /** Uses a conflict up, in the same synchronous block as the change it made. */
  use(conflictId: string): void {
    this.sql.exec('UPDATE conflicts SET used = 1 WHERE id = ?', conflictId);
  }

  /** A deleted token's conflicts. */
  forget(tokenId: string): void {
    this.sql.exec('DELETE FROM conflicts WHERE token_id = ?', tokenId);
  }

  /** The conflicts of tokens past their end, and those over. */
  prune(now: number): void {
    this.sql.exec(`DELETE FROM conflicts WHERE token_id IN (${ENDED_TOKENS}) OR expires_at <= ?`, now, now);
  }
}
