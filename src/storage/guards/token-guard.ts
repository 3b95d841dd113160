import { DurableObject } from 'cloudflare:workers';
import type { SealedValue, TokenRecord } from '../token-store';
import { updateAllowed, UPDATE_WINDOW_MS } from './update-limit';
import { ClaimTable, type ClaimOutcome } from './claims';

/**
 * One Durable Object per merchant card and namespace (the merchant, the keyed hash of the card
 * number, never the number, and the namespace if any): decides which token stands for the card,
 * so that a burst of identical POST /tokens gives one token and a request with other details is
 * told so. The claim keeps the token record as it will stand in KV (the card in it sealed), so
 * that whoever holds the write lease can write it, and an answer naming a token always means the
 * record is there.
 *
 * It is also where a token changes (docs/tokens.md "Updates", docs/storage.md "Token updates"):
 * every update is a compare-and-set on the record's version, applied only while nobody else is
 * writing the record, so updates are serialised, each builds on the last, a burst of different
 * updates leaves one consistent record, and the record's KV writes never overlap. It keeps the
 * times of the token's updates for the rolling limit, and the conflicts a second tokenization
 * found, sealed, until they expire.
 */

const CLAIM = 'token';

export type UpdateOutcome =
  /** The update is this caller's to write: write `record` to KV, then confirm (`recorded`). */
  | { kind: 'write' }
  /** The record changed since the caller read it: read it again and redo the change. */
  | { kind: 'stale' }
  /** The token is gone (deleted, expired, replaced), or the conflict is. */
  | { kind: 'gone' }
  /** The conflict was accepted already: the caller sets nothing (its lease goes back as it was). */
  | { kind: 'unchanged' }
  /** 50 updates in the last 30 days: the next is possible in `retryAfterSeconds`. */
  | { kind: 'limited'; retryAfterSeconds: number };

/** A conflict a second tokenization found: the request's differing details, sealed. */
export interface StoredConflict {
  id: string;
  sealed: SealedValue;
  expiresAt: number;
  /** Accepted already (kept until it ends, so that a retried acceptance is told so). */
  used?: boolean;
}

export class TokenGuard extends DurableObject<Env> {
  private readonly claims: ClaimTable;
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.claims = new ClaimTable(this.sql);
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS updates (token_id TEXT NOT NULL, at INTEGER NOT NULL, lease_id TEXT NOT NULL,
        recorded INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE IF NOT EXISTS conflicts (id TEXT PRIMARY KEY, token_id TEXT NOT NULL, values_hash TEXT NOT NULL,
        sealed TEXT NOT NULL, expires_at INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0)`);
  }

  /**
   * The card's live token, or `candidate` as its new one. `cardHash` is the card's keyed hash
   * (the object's own name), so every request for the card claims the same step: whether a
   * request's details differ from the token's is decided by its caller, on the token the claim
   * answers (src/tokens/token-resource.ts `conflictsOf`). A token deleted before comes back as
   * `retired`, for the caller to finish its deletion.
   */
  async claim(
    cardHash: string,
    candidate: TokenRecord,
    now: number,
    leaseId: string,
  ): Promise<ClaimOutcome<TokenRecord>> {
    let first = false;
    const outcome = await this.claims.claim(
      CLAIM,
      cardHash,
      candidate,
      now,
      { expiresAt: candidate.expiresAt, writesRecord: true, leaseId },
      () => (first = true),
    );
    if (first) await this.ctx.storage.setAlarm(candidate.expiresAt);
    return outcome;
  }

  /**
   * The token record is in KV; false when the token was deleted meanwhile. Updates count from
   * here: every update the guard accepted is in the version written (each builds on the last), so
   * one whose own write failed counts now too, and its retry, which finds its value held, once.
   */
  recorded(leaseId: string): boolean {
    const confirmed = this.claims.recorded(CLAIM, leaseId);
    const tokenId = confirmed ? this.claims.answerOf<TokenRecord>(CLAIM, Date.now())?.tokenId : undefined;
    if (tokenId !== undefined)
      this.sql.exec('UPDATE updates SET recorded = 1 WHERE token_id = ? AND recorded = 0', tokenId);
    return confirmed;
  }

  /** Writing the token record failed: the next request writes it. */
  released(leaseId: string): void {
    this.claims.released(CLAIM, leaseId);
  }

  /**
   * The token's current record (its latest version), with the record's lease given to the
   * caller: once no other caller is changing or writing it (callers queue here, one at a time).
   * Undefined when the token is gone. The caller then sets its next version (`update`), or gives
   * the lease back (`released`).
   */
  async current(
    tokenId: string,
    now: number,
    leaseId: string,
  ): Promise<{ record: TokenRecord; wasRecorded: boolean } | undefined> {
    const held = await this.claims.hold<TokenRecord>(CLAIM, now, leaseId, (record) => record.tokenId === tokenId);
    return held && { record: held.answer, wasRecorded: held.wasRecorded };
  }

  /**
   * Whether the token's latest version is in KV: `recorded`, or the record to write as it is (its
   * last write failed; the lease is then the caller's, confirmed with `recorded`). Undefined when
   * the token is gone.
   */
  async unwritten(tokenId: string, now: number, leaseId: string): Promise<TokenRecord | 'recorded' | undefined> {
    const held = await this.claims.hold<TokenRecord>(CLAIM, now, leaseId, (r) => r.tokenId === tokenId, {
      unlessRecorded: true,
    });
    return held === undefined ? undefined : held.recorded ? 'recorded' : held.answer;
  }

  /** The card's live token, for the namespace's index (src/storage/guards/namespace-guard.ts). */
  liveToken(now: number): { tokenId: string; expiresAt: number } | undefined {
    const record = this.claims.answerOf<TokenRecord>(CLAIM, now);
    return record ? { tokenId: record.tokenId, expiresAt: record.expiresAt } : undefined;
  }

  /**
   * Replaces the token's record by `next`, if its version is still `expectedVersion` (else
   * `stale`: the caller redoes its change on the new version). `counted` updates count toward
   * the rolling limit (an expiry extension does not). `conflictId`: the update accepts that
   * conflict, which is used up in the same step (`gone` if it no longer exists).
   */
  async update(
    tokenId: string,
    expectedVersion: number,
    next: TokenRecord,
    now: number,
    leaseId: string,
    options: { counted: boolean; conflictId?: string },
  ): Promise<UpdateOutcome> {
    const current = await this.claims.settled<TokenRecord>(CLAIM, now, leaseId);
    // Synchronous from here to the end: no other event runs in between (the object's own rule).
    if (current?.tokenId !== tokenId) return { kind: 'gone' };
    if ((current.version ?? 1) !== expectedVersion) return { kind: 'stale' };
    if (options.conflictId !== undefined) {
      const conflict = this.liveConflict(tokenId, options.conflictId, now);
      if (!conflict) return { kind: 'gone' };
      // Accepted meanwhile by an identical request (a burst): its values stand, nothing to set.
      if (conflict.used) return { kind: 'unchanged' };
    }
    if (options.counted) {
      // Updates are serialised (`current`), so only recorded ones need counting: an update whose
      // write failed, and which its retry makes again, counts once.
      this.sql.exec('DELETE FROM updates WHERE at <= ?', now - UPDATE_WINDOW_MS);
      const times = this.sql
        .exec<{ at: number }>('SELECT at FROM updates WHERE token_id = ? AND recorded = 1', tokenId)
        .toArray()
        .map((r) => r.at);
      const allowed = updateAllowed(times, now);
      if (!allowed.ok) return { kind: 'limited', retryAfterSeconds: allowed.retryAfterSeconds };
      this.sql.exec('INSERT INTO updates (token_id, at, lease_id) VALUES (?, ?, ?)', tokenId, now, leaseId);
    }
    // An accepted conflict stays (used) until it ends: a retry of its acceptance finds it so.
    if (options.conflictId !== undefined)
      this.sql.exec('UPDATE conflicts SET used = 1 WHERE id = ?', options.conflictId);
    this.claims.replace(CLAIM, next, next.expiresAt, leaseId);
    if (next.expiresAt !== current.expiresAt) await this.ctx.storage.setAlarm(next.expiresAt);
    return { kind: 'write' };
  }

  /**
   * Keeps the conflicting details a second tokenization sent (sealed by the caller) until
   * `expiresAt`, and answers the conflict's id; the same details again (the same keyed hash)
   * answer the live conflict already kept, so a burst of identical requests makes one.
   */
  conflict(
    tokenId: string,
    valuesHash: string,
    candidate: Omit<StoredConflict, 'used'>,
    now: number,
  ): { id: string; expiresAt: number } | undefined {
    if (this.claims.answerOf<TokenRecord>(CLAIM, now)?.tokenId !== tokenId) return undefined;
    this.sql.exec('DELETE FROM conflicts WHERE expires_at <= ?', now);
    const existing = this.sql
      .exec<{ id: string; expires_at: number }>(
        'SELECT id, expires_at FROM conflicts WHERE token_id = ? AND values_hash = ? AND used = 0',
        tokenId,
        valuesHash,
      )
      .toArray()[0];
    if (existing) return { id: existing.id, expiresAt: existing.expires_at };
    this.sql.exec(
      'INSERT INTO conflicts (id, token_id, values_hash, sealed, expires_at) VALUES (?, ?, ?, ?, ?)',
      ...[candidate.id, tokenId, valuesHash, JSON.stringify(candidate.sealed), candidate.expiresAt],
    );
    return { id: candidate.id, expiresAt: candidate.expiresAt };
  }

  /** A live conflict of the token, or undefined (unknown, used, expired, or the token is gone). */
  getConflict(tokenId: string, conflictId: string, now: number): StoredConflict | undefined {
    if (this.claims.answerOf<TokenRecord>(CLAIM, now)?.tokenId !== tokenId) return undefined;
    return this.liveConflict(tokenId, conflictId, now);
  }

  /**
   * The token is being deleted: the card is free for a new token, and its conflicts go.
   * `write`: the caller writes the tombstone, then confirms (`retirementRecorded`) or releases
   * (`released`); `done`: another caller's tombstone is confirmed, nothing to write. Callers of a
   * burst wait here while one writes (docs/storage.md "Write leases").
   */
  async retire(tokenId: string, now: number, leaseId: string): Promise<'write' | 'done'> {
    this.sql.exec('DELETE FROM conflicts WHERE token_id = ?', tokenId);
    return this.claims.retire<TokenRecord>(CLAIM, (record) => record.tokenId === tokenId, now, leaseId);
  }

  /** The tombstone of a retirement is in KV (the lease holder's confirmation). */
  retirementRecorded(leaseId: string): void {
    this.claims.retirementRecorded(CLAIM, leaseId);
  }

  override alarm(): void {
    const now = Date.now();
    this.claims.answerOf(CLAIM, now); // drops the claim once it has expired
    this.sql.exec('DELETE FROM conflicts WHERE expires_at <= ?', now);
    this.sql.exec('DELETE FROM updates WHERE at <= ?', now - UPDATE_WINDOW_MS);
  }

  private liveConflict(tokenId: string, conflictId: string, now: number): StoredConflict | undefined {
    const row = this.sql
      .exec<{ id: string; sealed: string; expires_at: number; used: number }>(
        'SELECT id, sealed, expires_at, used FROM conflicts WHERE id = ? AND token_id = ? AND expires_at > ?',
        conflictId,
        tokenId,
        now,
      )
      .toArray()[0];
    return row
      ? { id: row.id, sealed: JSON.parse(row.sealed) as SealedValue, expiresAt: row.expires_at, used: row.used === 1 }
      : undefined;
  }
}
