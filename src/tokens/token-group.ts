import { DurableObject } from 'cloudflare:workers';
import { tokenKeys, type TokenKeys } from '../cards/card-crypto';
import { openCard, sealCard, type CardDetails } from '../cards/token-card';
import { settingsOf } from '../config/settings';
import type { EventType } from '../events/event-types';
import { conflictsOf, isoSeconds, tokenResource, wholeSeconds, type TokenView } from './token-resource';
import {
  applied,
  changesOfConflict,
  CONFLICT_LIFETIME_MS,
  DEFAULT_TOKEN_TTL_MS,
  extended,
  holdsAlready,
  newConflictId,
  openedConflict,
  sealedConflict,
  type ChangeSet,
  type TokenChange,
} from './token-updates';
import { tokenKey } from './token-record';
import type { SealedValue } from '../records/sealed-value';
import type { TokenRecord } from '../records/token-record';
import { FailureError } from '../failures';
import { failedCall, type FailedCall } from '../storage/object-client';
import { eventSink } from '../events/event-log-api';
import {
  MAX_NAMESPACE_CARDS,
  type ChangeOutcome,
  type CreateOutcome,
  type OpenConflict,
  type OwnedToken,
  type TokenGroupMethods,
  type TokenTemplate,
} from './token-group-api';
import { EventOutbox, type StagedEvent } from '../storage/event-outbox';
import { AlarmRunner } from '../storage/alarm-runner';
import { Outbox } from '../storage/projection-outbox';
import { newTokenId, tokenReference } from './token-ids';
import { updateAllowed, UPDATE_WINDOW_MS } from './update-limit';

/**
 * The owner of a merchant's tokens (docs/storage.md, docs/tokens.md): one object per card
 * outside any namespace (named by the merchant and the card's keyed hash), and one per namespace
 * (named by the merchant and the namespace), which holds the tokens of its cards, at most 16.
 * Each token's href names its object (token-ids.ts), so every request about a token reaches the
 * one object that decides it, and nothing else decides anything about it.
 *
 * The object is the truth, in its own SQLite storage: the token records (the card sealed), the
 * times of their updates, the conflicts a second tokenization found, the deleted tokens until
 * they would have expired. It applies changes one at a time, in the order they arrive (its
 * queue), each on the state the last one left: a burst of different updates is served in turn,
 * each builds on the last, and the limits are exact. KV's `token:<id>` is a projection of the
 * token that only this object writes, after the answer, through its outbox (outbox.ts): at most
 * one write a second per key, the newest state, retried from the alarm until it lands.
 */

interface TokenRow extends Record<string, SqlStorageValue> {
  token_id: string;
  fingerprint: string;
  record: string;
  expires_at: number;
  deleted: number;
}

interface ConflictRow extends Record<string, SqlStorageValue> {
  id: string;
  token_id: string;
  sealed: string;
  expires_at: number;
  used: number;
}

export class TokenGroup extends DurableObject<Env> implements TokenGroupMethods {
  private readonly sql: SqlStorage;
  private readonly outbox: Outbox;
  /** Its events, on their way to the merchant's event log (docs/events.md). */
  private readonly events: EventOutbox<EventType>;
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  /** The calls in the order they arrived: each runs once the one before has ended. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Whether the object has its tables (see {@link createTables}). */
  private hasTables: boolean;
  /** The running call staged a projection: it is tried when the call ends. */
  private staged = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'TokenGroup');
    this.sql = ctx.storage.sql;
    this.outbox = new Outbox({ ctx, env, reschedule: () => this.scheduleAlarm() });
    this.events = new EventOutbox<EventType>(
      { ctx, reschedule: () => this.scheduleAlarm() },
      (event) => this.eventData(event),
      (username, events) => eventSink.append(env, username, events),
    );
    this.hasTables =
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tokens'").toArray().length > 0;
    // An object made by an earlier version gets the tables added since.
    if (this.hasTables) this.createTables(true);
  }

  /**
   * Creates the object's tables, the first time a token is made here (or `again`, for an older
   * object): a read of a token no object holds creates nothing.
   */
  private createTables(again = false): void {
    if (this.hasTables && !again) return;
    // The owner's merchant (its name says the rest). Objects made before kept a namespace column too, unread.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), username TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS tokens (token_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, record TEXT NOT NULL,
        expires_at INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX IF NOT EXISTS tokens_by_card ON tokens (fingerprint);
      CREATE TABLE IF NOT EXISTS updates (token_id TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS conflicts (id TEXT PRIMARY KEY, token_id TEXT NOT NULL, values_hash TEXT NOT NULL,
        sealed TEXT NOT NULL, expires_at INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0)`);
    this.outbox.createTables();
    this.events.createTables();
    this.hasTables = true;
  }

  /**
   * Frees the object's storage once nothing is left (docs/storage.md "Storage freed"): every token
   * it held has ended (deleted tokens included, once they would have expired), every projection is
   * written and every event appended. It then has no tables, no alarm and no bytes stored.
   */
  private async freeIfDone(): Promise<void> {
    if (this.sql.exec('SELECT 1 FROM tokens LIMIT 1').toArray().length > 0) return;
    if (this.outbox.nextDue() !== undefined || this.events.nextDue() !== undefined) return;
    await this.ctx.storage.deleteAll();
    this.hasTables = false;
  }

  /**
   * Tokenizes a card for the merchant (`namespace`: the namespace this object holds), or answers
   * the card's live token: with the details this request sent, or with a conflict kept for them.
   * `fingerprint` is the card's keyed hash; `card` its details, sealed here.
   */
  create(
    username: string,
    namespace: string | undefined,
    fingerprint: string,
    card: CardDetails,
    template: TokenTemplate,
  ): Promise<CreateOutcome | FailedCall> {
    return this.serial(async (now, keys) => {
      this.createTables();
      this.sql.exec('INSERT OR IGNORE INTO owner (id, username) VALUES (1, ?)', username);
      // An object's name holds its merchant (clients.ts), so this is never another merchant's.
      if (!this.owns(username)) throw new Error('a token object named for one merchant was asked for another');
      const found = this.sql
        .exec<TokenRow>(
          'SELECT * FROM tokens WHERE fingerprint = ? AND deleted = 0 AND expires_at > ?',
          fingerprint,
          now,
        )
        .toArray()[0];
      if (found) {
        const { token, card: stored } = await this.used(recordOf(found), now, keys);
        const conflicts = conflictsOf(
          { ...stored, schemeTransactionReference: token.schemeTransactionReference },
          { ...card, schemeTransactionReference: template.schemeTransactionReference },
        );
        const reference = this.referenceOf(token.tokenId);
        if (!conflicts) return { kind: 'existing', token, card: stored, reference } as const;
        const conflict = await this.keepConflict(token, conflicts, now, keys);
        return { kind: 'conflict', token, card: stored, reference, conflicts, conflict } as const;
      }
      if (namespace !== undefined && this.liveCards(now) >= MAX_NAMESPACE_CARDS) return { kind: 'full' } as const;
      const { requestedExpiry, description, ...known } = template;
      // `known` carries the entity and the href base: stored with the token, for its events.
      const tokenId = newTokenId();
      // Whole seconds, as Worldpay writes the date and time.
      const expiresAt = wholeSeconds(requestedExpiry ?? now + this.lifetimeMs());
      const view: TokenView = {
        ...known,
        tokenId,
        username,
        fingerprint,
        // Worldpay makes one up when none is sent; ours names the day, not the card.
        description: description ?? `Token created ${new Date(now).toISOString().slice(0, 10)}`,
        ...(namespace !== undefined ? { namespace } : {}),
        tokenExpiryDateTime: isoSeconds(expiresAt),
        createdAt: now,
        expiresAt,
        version: 1,
        lifeStartedAt: now,
        ...(requestedExpiry !== undefined ? { expiryChosen: true } : {}),
      };
      const record: TokenRecord = { ...view, sealed: await sealCard(keys, card, view) };
      this.atomically(() => {
        this.sql.exec(
          'INSERT INTO tokens (token_id, fingerprint, record, expires_at) VALUES (?, ?, ?, ?)',
          ...[tokenId, fingerprint, JSON.stringify(record), expiresAt],
        );
        this.project(record);
      });
      return { kind: 'created', token: view, card, reference: this.referenceOf(tokenId) } as const;
    });
  }

  /**
   * The merchant's live token and its card; undefined when it is not one (unknown, deleted,
   * expired, another merchant's). A read is a use: a token past half its life is extended.
   */
  read(username: string, tokenId: string): Promise<OwnedToken | undefined | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return undefined;
      const record = this.live(username, tokenId, now);
      return record && this.used(record, now, keys);
    });
  }

  /**
   * The merchant's live tokens here (a namespace's), oldest first, or only `tokenId`'s; each read
   * is a use, as {@link read}.
   */
  list(username: string, tokenId?: string): Promise<OwnedToken[] | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return [];
      if (!this.owns(username)) return [];
      const rows = this.sql
        .exec<TokenRow>('SELECT * FROM tokens WHERE deleted = 0 AND expires_at > ?', now)
        .toArray()
        .map(recordOf)
        .filter((r) => tokenId === undefined || r.tokenId === tokenId)
        .sort((a, b) => a.createdAt - b.createdAt || a.tokenId.localeCompare(b.tokenId));
      const answers: OwnedToken[] = [];
      for (const record of rows) answers.push(await this.used(record, now, keys));
      return answers;
    });
  }

  /**
   * One attribute of the merchant's token (docs/tokens.md "Updates"): applied to the token as it
   * stands now, counted toward the rolling limit. A value the token holds already changes
   * nothing: no version, no KV write, not counted.
   */
  update(username: string, tokenId: string, change: TokenChange): Promise<ChangeOutcome | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return { kind: 'gone' };
      const record = this.live(username, tokenId, now);
      if (!record) return { kind: 'gone' } as const;
      if (await holdsAlready(keys, record, change)) {
        await this.used(record, now, keys);
        return { kind: 'changed' } as const;
      }
      return this.change(record, { [change.attribute]: change.value }, now, keys);
    });
  }

  /** A live, unused conflict of the merchant's token, with the token (a read: a use). */
  conflict(username: string, tokenId: string, conflictId: string): Promise<OpenConflict | undefined | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return undefined;
      const record = this.live(username, tokenId, now);
      const row = record && this.conflictRow(tokenId, conflictId, now);
      if (!record || !row || row.used === 1) return undefined;
      const conflicts = await openedConflict(keys, record, JSON.parse(row.sealed) as SealedValue);
      return { ...(await this.used(record, now, keys)), conflicts, expiresAt: row.expires_at };
    });
  }

  /**
   * Accepts a conflict: the token takes every conflicting value at once, as one update (it counts
   * toward the limit), and the conflict is used up. Accepted again (a retry), it changes nothing.
   */
  acceptConflict(username: string, tokenId: string, conflictId: string): Promise<ChangeOutcome | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return { kind: 'gone' };
      const record = this.live(username, tokenId, now);
      const row = record && this.conflictRow(tokenId, conflictId, now);
      if (!record || !row) return { kind: 'gone' } as const;
      if (row.used === 1) return { kind: 'changed' } as const;
      const conflicts = await openedConflict(keys, record, JSON.parse(row.sealed) as SealedValue);
      // Used up in the same step as the change, and kept (used) until it ends, so that a retried
      // acceptance is told it is done.
      return this.change(record, changesOfConflict(conflicts), now, keys, () =>
        this.sql.exec('UPDATE conflicts SET used = 1 WHERE id = ?', conflictId),
      );
    });
  }

  /**
   * Deletes the merchant's token: from now on every exact read answers 404, the card (or its
   * place in the namespace) is free for a new token, its conflicts go, and KV's record is deleted
   * after the answer. Deleted again while it would have lived: `deleted` (a retry's 204).
   */
  remove(username: string, tokenId: string): Promise<'deleted' | 'gone' | FailedCall> {
    return this.serial((now) => {
      if (!this.hasTables) return 'gone';
      if (!this.owns(username)) return 'gone';
      const row = this.sql.exec<TokenRow>('SELECT * FROM tokens WHERE token_id = ?', tokenId).toArray()[0];
      if (!row || row.expires_at <= now) return 'gone';
      if (row.deleted === 1) return 'deleted';
      this.atomically(() => {
        // The event carries the token as it was (its card sealed, until the event leaves).
        this.emit(recordOf(row), 'tokens.token.deleted', `tok_${tokenId}_deleted`);
        this.sql.exec("UPDATE tokens SET deleted = 1, record = '{}' WHERE token_id = ?", tokenId);
        this.sql.exec('DELETE FROM conflicts WHERE token_id = ?', tokenId);
        this.sql.exec('DELETE FROM updates WHERE token_id = ?', tokenId);
        this.outbox.stage(tokenKey(tokenId), null, row.expires_at);
        this.staged = true;
      });
      return 'deleted';
    });
  }

  /**
   * The alarm: drops what has ended, writes the projections that are due, and is set again while
   * one is pending or a token (live or deleted) has yet to end.
   */
  override async alarm(): Promise<void> {
    if (!this.hasTables) return;
    await this.alarms.run(
      async () => {
        // Pruning needs no key: a token key no longer configured cannot stop it (and leave the alarm
        // set, over and over, to an end already past).
        await this.queued(() => this.prune(Date.now()));
        await this.outbox.flush();
        await this.events.flush();
        // In the queue: no call's work can be between its check and the tables it uses.
        await this.queued(() => this.freeIfDone());
      },
      () => this.scheduleAlarm(),
    );
  }

  // --- inside the queue ------------------------------------------------------------------------

  /**
   * Runs `work` once every call before it has ended, with this object's clock and the token keys;
   * a projection it staged is then tried at once.
   */
  private serial<T>(work: (now: number, keys: TokenKeys) => T | Promise<T>): Promise<T | FailedCall> {
    return this.queued(async () => work(Date.now(), await tokenKeys(settingsOf(this.env))));
  }

  /**
   * Runs `work` once every call before it has ended (the queue), without the token keys; a domain
   * failure it meets is its answer, as a value.
   */
  private queued<T>(work: () => T | Promise<T>): Promise<T | FailedCall> {
    const run = this.queue.then(async () => {
      try {
        return await work();
      } catch (e) {
        // A domain failure (a key no longer configured) goes back as a value (clients.ts).
        if (e instanceof FailureError) return failedCall(e);
        throw e;
      } finally {
        if (this.staged) {
          this.staged = false;
          await this.outbox.writeSoon();
          void this.events.flush(); // after the answer; the alarm set just now retries it
        }
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs a decision's writes as one storage transaction: all of them commit, or, when one throws,
   * none (a throw midway would otherwise commit the writes before it).
   */
  private atomically<T>(writes: () => T): T {
    return this.ctx.storage.transactionSync(writes);
  }

  /** Whether this object holds the merchant's tokens (a token id of another merchant's object: no). */
  private owns(username: string): boolean {
    return this.sql.exec('SELECT 1 FROM owner WHERE username = ?', username).toArray().length > 0;
  }

  /** The merchant's live token, or undefined. */
  private live(username: string, tokenId: string, now: number): TokenRecord | undefined {
    if (!this.owns(username)) return undefined;
    const row = this.sql
      .exec<TokenRow>('SELECT * FROM tokens WHERE token_id = ? AND deleted = 0 AND expires_at > ?', tokenId, now)
      .toArray()[0];
    return row && recordOf(row);
  }

  /** The cards with a live token here (a namespace's count). */
  private liveCards(now: number): number {
    return this.sql
      .exec<{ n: number }>(
        'SELECT COUNT(DISTINCT fingerprint) AS n FROM tokens WHERE deleted = 0 AND expires_at > ?',
        now,
      )
      .one().n;
  }

  /** A token was used: extended when due (a new version, not counted), and answered opened. */
  private async used(record: TokenRecord, now: number, keys: TokenKeys): Promise<OwnedToken> {
    const next = extended(record, now, this.lifetimeMs());
    const current = next === record ? record : { ...next, version: (record.version ?? 1) + 1 };
    if (current !== record) this.atomically(() => this.save(current, 'tokens.token.extended'));
    const { sealed: _sealed, ...token } = current;
    return { token, card: await openCard(keys, current), reference: this.referenceOf(token.tokenId) };
  }

  /**
   * Applies changes as one counted update (extended too when due), if the limit allows; `withIt`
   * runs in the same synchronous block (one storage transaction) as the change.
   */
  private async change(
    record: TokenRecord,
    changes: ChangeSet,
    now: number,
    keys: TokenKeys,
    withIt?: () => void,
  ): Promise<ChangeOutcome> {
    this.sql.exec('DELETE FROM updates WHERE at <= ?', now - UPDATE_WINDOW_MS);
    const times = this.sql
      .exec<{ at: number }>('SELECT at FROM updates WHERE token_id = ?', record.tokenId)
      .toArray()
      .map((r) => r.at);
    const allowed = updateAllowed(times, now);
    if (!allowed.ok) return { kind: 'limited', retryAfterSeconds: allowed.retryAfterSeconds };
    const next = extended(await applied(keys, record, changes, now), now, this.lifetimeMs());
    // One storage transaction from here: the count, the record, its projection and its event
    // commit together, or (something throws) none of them.
    this.atomically(() => {
      this.sql.exec('INSERT INTO updates (token_id, at) VALUES (?, ?)', record.tokenId, now);
      this.save({ ...next, version: (record.version ?? 1) + 1 }, 'tokens.token.updated');
      withIt?.();
    });
    return { kind: 'changed' };
  }

  /**
   * Stores a token's new version, and stages its projection and its event (`updated` or
   * `extended`), in one synchronous block.
   */
  private save(record: TokenRecord, event: 'tokens.token.updated' | 'tokens.token.extended'): void {
    this.sql.exec(
      'UPDATE tokens SET record = ?, expires_at = ? WHERE token_id = ?',
      JSON.stringify(record),
      record.expiresAt,
      record.tokenId,
    );
    this.project(record);
    this.emit(record, event, `tok_${record.tokenId}_v${record.version ?? 1}`);
  }

  /** Stages an event about a token (its data rendered when it leaves: {@link eventData}). */
  private emit(record: TokenRecord, eventType: EventType, eventId: string): void {
    this.events.stage(record.username, {
      eventId,
      eventType,
      subject: record.tokenId,
      createdAt: Date.now(),
      entity: record.entity ?? '',
      facts: record,
    });
    this.staged = true;
  }

  /** An event's data: the token as GET shows it (the card opened, its number masked). */
  private async eventData(event: StagedEvent<EventType>): Promise<Record<string, unknown>> {
    const record = event.facts as TokenRecord;
    const { sealed: _sealed, ...token } = record;
    // A card sealed under a key no longer configured: the event goes without the name and address
    // rather than never (it would hold every later event of this object back).
    const card: Pick<CardDetails, 'cardHolderName' | 'billingAddress'> = await openCard(
      await tokenKeys(settingsOf(this.env)),
      record,
    ).catch((e: unknown) => {
      if (e instanceof FailureError) return {};
      throw e;
    });
    const href = `${record.hrefBase ?? ''}/tokens/${this.referenceOf(record.tokenId)}`;
    return tokenResource(token, card, href);
  }

  private project(record: TokenRecord): void {
    this.outbox.stage(tokenKey(record.tokenId), record, record.expiresAt);
    this.staged = true;
  }

  /**
   * Keeps the conflicting details of a second tokenization, sealed, for
   * {@link CONFLICT_LIFETIME_MS}; the same details again answer the live conflict already kept,
   * so a burst of identical requests makes one.
   */
  private async keepConflict(
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

  private conflictRow(tokenId: string, conflictId: string, now: number): ConflictRow | undefined {
    return this.sql
      .exec<ConflictRow>(
        'SELECT * FROM conflicts WHERE id = ? AND token_id = ? AND expires_at > ?',
        conflictId,
        tokenId,
        now,
      )
      .toArray()[0];
  }

  /** Drops tokens (live or deleted) past their end, with their updates and conflicts. */
  private prune(now: number): void {
    const ended = 'SELECT token_id FROM tokens WHERE expires_at <= ?';
    this.sql.exec(`DELETE FROM updates WHERE token_id IN (${ended}) OR at <= ?`, now, now - UPDATE_WINDOW_MS);
    this.sql.exec(`DELETE FROM conflicts WHERE token_id IN (${ended}) OR expires_at <= ?`, now, now);
    this.sql.exec('DELETE FROM tokens WHERE expires_at <= ?', now);
  }

  private referenceOf(tokenId: string): string {
    return tokenReference(this.ctx.id.toString(), tokenId);
  }

  /** The environment's default token lifetime. */
  private lifetimeMs(): number {
    return DEFAULT_TOKEN_TTL_MS[settingsOf(this.env).environment];
  }

  // --- projections ---------------------------------------------------------------------------

  /** The alarm: at the next projection due, else at the next end of a token (live or deleted). */
  private async scheduleAlarm(): Promise<void> {
    if (!this.hasTables) return;
    const end = this.sql.exec<{ at: number | null }>('SELECT MIN(expires_at) AS at FROM tokens').one().at;
    const times = [this.outbox.nextDue(), this.events.nextDue(), end ?? undefined].filter(
      (t): t is number => t !== undefined,
    );
    if (times.length > 0) await this.ctx.storage.setAlarm(Math.min(...times));
  }
}

function recordOf(row: TokenRow): TokenRecord {
  return JSON.parse(row.record) as TokenRecord;
}
