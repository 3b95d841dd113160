import { DurableObject } from 'cloudflare:workers';
import { tokenGuardName } from './clients';

/**
 * One Durable Object per merchant namespace (docs/tokens.md "Namespaces", docs/storage.md): the
 * index of the namespace's tokens and the one place that counts them, so that the 16-card limit
 * holds however many requests arrive at once. It names cards by their keyed hash and tokens by
 * their id; it holds no card data.
 *
 * A card is first *reserved* (before its token is claimed), then *confirmed* with its token once
 * the token record is in KV. A reservation still unconfirmed after {@link RESERVATION_MS} is
 * settled by asking the card's TokenGuard: its token, if it has one (the confirmation failed and
 * was not retried), is confirmed; else the place is freed. A card already in the index is never
 * refused (its retry, or the same card again, takes no new place).
 */

/** Worldpay's limit: at most 16 cards in a namespace. */
export const MAX_NAMESPACE_CARDS = 16;
/** How long a reservation waits for its token before the card's guard is asked whether it has one. */
export const RESERVATION_MS = 60_000;

interface EntryRow extends Record<string, SqlStorageValue> {
  fingerprint: string;
  token_id: string | null;
  reserved_at: number;
  expires_at: number | null;
}

export class NamespaceGuard extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS entries (fingerprint TEXT PRIMARY KEY, token_id TEXT,
        reserved_at INTEGER NOT NULL, expires_at INTEGER);
      CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 1), username TEXT NOT NULL,
        namespace TEXT NOT NULL)`);
  }

  /**
   * A place for the card: `ok` (new, or already there), `full` when 16 other cards have one.
   * `username` and `namespace` name this object (they let it ask the cards' guards).
   */
  async reserve(fingerprint: string, now: number, username: string, namespace: string): Promise<'ok' | 'full'> {
    this.sql.exec('INSERT OR IGNORE INTO meta (id, username, namespace) VALUES (1, ?, ?)', username, namespace);
    if (!this.hasPlace(fingerprint) && this.count(now) >= MAX_NAMESPACE_CARDS) await this.settleStale(now);
    // Synchronous from the check to the insert: other requests may have come during the wait.
    if (this.hasPlace(fingerprint)) {
      this.sql.exec('UPDATE entries SET reserved_at = ? WHERE fingerprint = ? AND token_id IS NULL', now, fingerprint);
      return 'ok';
    }
    if (this.count(now) >= MAX_NAMESPACE_CARDS) return 'full';
    this.sql.exec('INSERT INTO entries (fingerprint, reserved_at) VALUES (?, ?)', fingerprint, now);
    return 'ok';
  }

  /** The card's token, whose record is in KV, until `expiresAt`. Idempotent; a later token replaces it. */
  confirm(fingerprint: string, tokenId: string, expiresAt: number, now: number): void {
    this.sql.exec(
      `INSERT INTO entries (fingerprint, token_id, reserved_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (fingerprint) DO UPDATE SET token_id = excluded.token_id, expires_at = excluded.expires_at`,
      ...[fingerprint, tokenId, now, expiresAt],
    );
  }

  /** The token was deleted: its card's place is free. Idempotent. */
  remove(tokenId: string): void {
    this.sql.exec('DELETE FROM entries WHERE token_id = ?', tokenId);
  }

  /** The namespace's tokens, oldest first: `{tokenId, fingerprint}` of every confirmed, unexpired one. */
  async list(now: number): Promise<{ tokenId: string; fingerprint: string }[]> {
    await this.settleStale(now);
    this.prune(now);
    return this.sql
      .exec<{ token_id: string; fingerprint: string }>(
        'SELECT token_id, fingerprint FROM entries WHERE token_id IS NOT NULL ORDER BY reserved_at, token_id',
      )
      .toArray()
      .map((r) => ({ tokenId: r.token_id, fingerprint: r.fingerprint }));
  }

  private hasPlace(fingerprint: string): boolean {
    return this.sql.exec<EntryRow>('SELECT * FROM entries WHERE fingerprint = ?', fingerprint).toArray().length > 0;
  }

  private count(now: number): number {
    this.prune(now);
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM entries').one().n;
  }

  /**
   * Settles the reservations no token confirmed in time: the card's guard says whether it has a
   * token (confirmed here) or not (the place is freed). A guard that cannot be asked keeps its
   * place for now.
   */
  private async settleStale(now: number): Promise<void> {
    const meta = this.sql
      .exec<{ username: string; namespace: string }>('SELECT username, namespace FROM meta')
      .toArray()[0];
    if (!meta) return;
    const stale = this.sql
      .exec<{ fingerprint: string }>(
        'SELECT fingerprint FROM entries WHERE token_id IS NULL AND reserved_at <= ?',
        now - RESERVATION_MS,
      )
      .toArray();
    await Promise.all(
      stale.map(async ({ fingerprint }) => {
        const tokens = this.env.TOKEN_GUARD;
        const guard = tokens.get(tokens.idFromName(tokenGuardName(meta.username, fingerprint, meta.namespace)));
        let token: { tokenId: string; expiresAt: number } | undefined;
        try {
          token = await guard.liveToken(now);
        } catch {
          return;
        }
        if (token) this.confirm(fingerprint, token.tokenId, token.expiresAt, now);
        // Only if still stale: the card's own retry may have renewed its reservation meanwhile.
        else
          this.sql.exec(
            'DELETE FROM entries WHERE fingerprint = ? AND token_id IS NULL AND reserved_at <= ?',
            ...[fingerprint, now - RESERVATION_MS],
          );
      }),
    );
  }

  /** Drops tokens past their end. */
  private prune(now: number): void {
    this.sql.exec('DELETE FROM entries WHERE token_id IS NOT NULL AND expires_at <= ?', now);
  }
}
