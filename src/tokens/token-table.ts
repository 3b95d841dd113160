import type { TokenRecord } from '../records/token-record';

/**
 * A token object's tokens in its SQLite storage (docs/storage.md, docs/tokens.md "Lifetime"): the
 * merchant that owns the object, and each token's record (the card sealed) with its end; a
 * deleted token is kept, its record emptied, until it would have expired, so that a retried
 * `DELETE` is told it is done and the token never comes back. Decides which token is live: not
 * deleted, not past its end, and the owner's.
 */

interface TokenRow extends Record<string, SqlStorageValue> {
  token_id: string;
  fingerprint: string;
  record: string;
  expires_at: number;
  deleted: number;
}

export class TokenTable {
  constructor(private readonly sql: SqlStorage) {}

  createTables(): void {
    // The owner's merchant (its name says the rest). Objects made before kept a namespace column too, unread.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), username TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS tokens (token_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, record TEXT NOT NULL,
        expires_at INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX IF NOT EXISTS tokens_by_card ON tokens (fingerprint)`);
  }

  /** The object's merchant is set by its first token; its name holds it (token-group-api.ts), so never another's. */
  claim(username: string): void {
    this.sql.exec('INSERT OR IGNORE INTO owner (id, username) VALUES (1, ?)', username);
    if (!this.owns(username)) throw new Error('a token object named for one merchant was asked for another');
  }

  /** Whether this object holds the merchant's tokens (a token id of another merchant's object: no). */
  owns(username: string): boolean {
    return this.sql.exec('SELECT 1 FROM owner WHERE username = ?', username).toArray().length > 0;
  }

  /** The merchant's live token, or undefined. */
  live(username: string, tokenId: string, now: number): TokenRecord | undefined {
    if (!this.owns(username)) return undefined;
    const row = this.sql
      .exec<TokenRow>('SELECT * FROM tokens WHERE token_id = ? AND deleted = 0 AND expires_at > ?', tokenId, now)
      .toArray()[0];
    return row && recordOf(row);
  }

  /** The card's live token here, or undefined (`fingerprint`: the card's keyed hash). */
  liveOfCard(fingerprint: string, now: number): TokenRecord | undefined {
    const row = this.sql
      .exec<TokenRow>('SELECT * FROM tokens WHERE fingerprint = ? AND deleted = 0 AND expires_at > ?', fingerprint, now)
      .toArray()[0];
    return row && recordOf(row);
  }

  /** The live tokens here (or only `tokenId`), oldest first; the caller checked the owner. */
  liveTokens(now: number, tokenId?: string): TokenRecord[] {
    return this.sql
      .exec<TokenRow>('SELECT * FROM tokens WHERE deleted = 0 AND expires_at > ?', now)
      .toArray()
      .map(recordOf)
      .filter((r) => tokenId === undefined || r.tokenId === tokenId)
      .sort((a, b) => a.createdAt - b.createdAt || a.tokenId.localeCompare(b.tokenId));
  }

  /** The cards with a live token here (a namespace's count). */
  liveCards(now: number): number {
    return this.sql
      .exec<{ n: number }>(
        'SELECT COUNT(DISTINCT fingerprint) AS n FROM tokens WHERE deleted = 0 AND expires_at > ?',
        now,
      )
      .one().n;
  }

  /** A token, live or deleted, whatever its end; undefined for one never here (or dropped). */
  entry(tokenId: string): { record: TokenRecord; expiresAt: number; deleted: boolean } | undefined {
    const row = this.sql.exec<TokenRow>('SELECT * FROM tokens WHERE token_id = ?', tokenId).toArray()[0];
    return row && { record: recordOf(row), expiresAt: row.expires_at, deleted: row.deleted === 1 };
  }

  add(record: TokenRecord): void {
    this.sql.exec(
      'INSERT INTO tokens (token_id, fingerprint, record, expires_at) VALUES (?, ?, ?, ?)',
      ...[record.tokenId, record.fingerprint, JSON.stringify(record), record.expiresAt],
    );
  }

  /** A token's new version (its end moved with it). */
  save(record: TokenRecord): void {
    this.sql.exec(
      'UPDATE tokens SET record = ?, expires_at = ? WHERE token_id = ?',
      JSON.stringify(record),
      record.expiresAt,
      record.tokenId,
    );
  }

  /** A deleted token: kept, its record emptied, until it would have expired. */
  markDeleted(tokenId: string): void {
    this.sql.exec("UPDATE tokens SET deleted = 1, record = '{}' WHERE token_id = ?", tokenId);
  }

  /** Drops tokens (live or deleted) past their end (their updates and conflicts first: they name them). */
  prune(now: number): void {
    this.sql.exec('DELETE FROM tokens WHERE expires_at <= ?', now);
  }

  /** Whether no token (live or deleted) is left. */
  isEmpty(): boolean {
    return this.sql.exec('SELECT 1 FROM tokens LIMIT 1').toArray().length === 0;
  }

  /** The next end of a token (live or deleted), or undefined when none is left. */
  nextEnd(): number | undefined {
    return this.sql.exec<{ at: number | null }>('SELECT MIN(expires_at) AS at FROM tokens').one().at ?? undefined;
  }
}

/** The SQL that selects the tokens past their end: their updates and conflicts go with them. */
export const ENDED_TOKENS = 'SELECT token_id FROM tokens WHERE expires_at <= ?';

function recordOf(row: TokenRow): TokenRecord {
  return JSON.parse(row.record) as TokenRecord;
}
