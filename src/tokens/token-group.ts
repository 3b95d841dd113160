import { DurableObject } from 'cloudflare:workers';
import { tokenKeys, type TokenKeys } from '../cards/card-crypto';
import { openCard, sealCard, type CardDetails } from '../cards/token-card';
import { settingsOf } from '../config/settings';
import type { EventType } from '../events/event-types';
import { conflictsOf } from './token-resource';
import {
  applied,
  changesOfConflict,
  DEFAULT_TOKEN_TTL_MS,
  extended,
  holdsAlready,
  openedConflict,
  type ChangeSet,
  type TokenChange,
} from './token-updates';
import { tokenKey } from './token-record';
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
import { EventOutbox } from '../storage/event-outbox';
import { AlarmRunner } from '../storage/alarm-runner';
import { Outbox } from '../storage/projection-outbox';
import { SchemaVersion } from '../storage/schema-version';
import { tokenReference } from './token-ids';
import { KeptConflicts } from './kept-conflicts';
import { newToken } from './new-token';
import { TokenEvents } from './token-events';
import { TokenTable } from './token-table';
import { UpdateCounts } from './update-counts';

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
 * token that only this object writes, after the answer, through its outbox
 * (src/storage/projection-outbox.ts): at most one write a second per key, the newest state,
 * retried from the alarm until it lands.
 *
 * The class is the RPC surface and the queue; it is split by what it decides: which tokens are
 * live (token-table.ts), what a new token is (new-token.ts), how a token changes (token-updates.ts)
 * within the limit (update-counts.ts, update-limit.ts), the conflicts kept (kept-conflicts.ts),
 * and what its events say (token-events.ts).
 */

/**
 * The version of the object's tables (src/storage/schema-version.ts): raise it with every change to
 * them (a new table, a new column), and keep the upgrade of the older layouts in their creation.
 */
export const TOKEN_TABLES_VERSION = 1;

export class TokenGroup extends DurableObject<Env> implements TokenGroupMethods {
  private readonly tokens: TokenTable;
  private readonly counts: UpdateCounts;
  private readonly conflicts: KeptConflicts;
  private readonly outbox: Outbox;
  /** Its events, on their way to the merchant's event log (docs/events.md). */
  private readonly events: EventOutbox<EventType>;
  private readonly tokenEvents: TokenEvents;
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  /** The calls in the order they arrived: each runs once the one before has ended. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Whether the object has its tables (see {@link createTables}). */
  private hasTables: boolean;
  /** Which version of its tables the object has: one row, read at the start (src/storage/schema-version.ts). */
  private readonly tables: SchemaVersion;
  /** The running call staged a projection: it is tried when the call ends. */
  private staged = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'TokenGroup');
    const sql = ctx.storage.sql;
    this.tokens = new TokenTable(sql);
    this.counts = new UpdateCounts(sql);
    this.conflicts = new KeptConflicts(sql);
    this.outbox = new Outbox({ ctx, env, reschedule: () => this.scheduleAlarm() });
    this.tokenEvents = new TokenEvents(env, ctx.id.toString(), () => this.events);
    this.events = new EventOutbox<EventType>(
      { ctx, reschedule: () => this.scheduleAlarm() },
      (event) => this.tokenEvents.render(event),
      (username, events) => eventSink.append(env, username, events),
    );
    this.tables = new SchemaVersion(sql, TOKEN_TABLES_VERSION, 'tokens');
    const found = this.tables.found();
    this.hasTables = found !== 'none';
    // An object made by an earlier version gets the tables and columns added since, once.
    if (found === 'older') this.createTables(true);
  }

  /**
   * Creates the object's tables and records their version, the first time a token is made here
   * (or `again`, for an object of an older layout): a read of a token no object holds creates nothing.
   */
  private createTables(again = false): void {
    if (this.hasTables && !again) return;
    this.tokens.createTables();
    this.counts.createTables();
    this.conflicts.createTables();
    // A new object has no older outbox to upgrade.
    this.outbox.createTables(!this.hasTables);
    this.events.createTables();
    this.tables.record();
    this.hasTables = true;
  }

  /**
   * Frees the object's storage once nothing is left (docs/storage.md "Storage freed"): every token
   * it held has ended (deleted tokens included, once they would have expired), every projection is
   * written and every event appended. It then has no tables, no alarm and no bytes stored.
   */
  private async freeIfDone(): Promise<void> {
    if (!this.tokens.isEmpty()) return;
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
      this.tokens.claim(username);
      const found = this.tokens.liveOfCard(fingerprint, now);
      if (found) {
        const { token, card: stored } = await this.used(found, now, keys);
        const conflicts = conflictsOf(
          { ...stored, schemeTransactionReference: token.schemeTransactionReference },
          { ...card, schemeTransactionReference: template.schemeTransactionReference },
        );
        const reference = this.referenceOf(token.tokenId);
        if (!conflicts) return { kind: 'existing', token, card: stored, reference } as const;
        const conflict = await this.conflicts.keep(token, conflicts, now, keys);
        return { kind: 'conflict', token, card: stored, reference, conflicts, conflict } as const;
      }
      if (namespace !== undefined && this.tokens.liveCards(now) >= MAX_NAMESPACE_CARDS)
        return { kind: 'full' } as const;
      const view = newToken(template, { username, namespace, fingerprint }, now, this.lifetimeMs());
      const record: TokenRecord = { ...view, sealed: await sealCard(keys, card, view) };
      this.atomically(() => {
        this.tokens.add(record);
        this.project(record);
      });
      return { kind: 'created', token: view, card, reference: this.referenceOf(view.tokenId) } as const;
    });
  }

  /**
   * The merchant's live token and its card; undefined when it is not one (unknown, deleted,
   * expired, another merchant's). A read is a use: a token past half its life is extended.
   */
  read(username: string, tokenId: string): Promise<OwnedToken | undefined | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return undefined;
      const record = this.tokens.live(username, tokenId, now);
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
      if (!this.tokens.owns(username)) return [];
      const answers: OwnedToken[] = [];
      for (const record of this.tokens.liveTokens(now, tokenId)) answers.push(await this.used(record, now, keys));
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
      const record = this.tokens.live(username, tokenId, now);
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
      const record = this.tokens.live(username, tokenId, now);
      const kept = record && this.conflicts.find(tokenId, conflictId, now);
      if (!record || !kept || kept.used) return undefined;
      const conflicts = await openedConflict(keys, record, kept.sealed);
      return { ...(await this.used(record, now, keys)), conflicts, expiresAt: kept.expiresAt };
    });
  }

  /**
   * Accepts a conflict: the token takes every conflicting value at once, as one update (it counts
   * toward the limit), and the conflict is used up. Accepted again (a retry), it changes nothing.
   */
  acceptConflict(username: string, tokenId: string, conflictId: string): Promise<ChangeOutcome | FailedCall> {
    return this.serial(async (now, keys) => {
      if (!this.hasTables) return { kind: 'gone' };
      const record = this.tokens.live(username, tokenId, now);
      const kept = record && this.conflicts.find(tokenId, conflictId, now);
      if (!record || !kept) return { kind: 'gone' } as const;
      if (kept.used) return { kind: 'changed' } as const;
      const conflicts = await openedConflict(keys, record, kept.sealed);
      // Used up in the same step as the change, and kept (used) until it ends, so that a retried
      // acceptance is told it is done.
      return this.change(record, changesOfConflict(conflicts), now, keys, () => this.conflicts.use(conflictId));
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
      if (!this.tokens.owns(username)) return 'gone';
      const entry = this.tokens.entry(tokenId);
      if (!entry || entry.expiresAt <= now) return 'gone';
      if (entry.deleted) return 'deleted';
      this.atomically(() => {
        // The event carries the token as it was (its card sealed, until the event leaves).
        this.emit(entry.record, 'tokens.token.deleted', `tok_${tokenId}_deleted`);
        this.tokens.markDeleted(tokenId);
        this.conflicts.forget(tokenId);
        this.counts.forget(tokenId);
        this.outbox.stage(tokenKey(tokenId), null, entry.expiresAt);
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
   * a projection it staged is then tried at once. A domain failure it meets (a key no longer
   * configured) is its answer, as a value (object-client.ts): the caller answers it in the
   * contract's error format.
   */
  private serial<T>(work: (now: number, keys: TokenKeys) => T | Promise<T>): Promise<T | FailedCall> {
    return this.queued(async () => work(Date.now(), await tokenKeys(settingsOf(this.env)))).catch((e: unknown) => {
      if (e instanceof FailureError) return failedCall(e);
      throw e;
    });
  }

  /**
   * Runs `work` once every call before it has ended (the queue), without the token keys; a
   * projection it staged is then tried at once. Whatever it throws is thrown: the alarm's work
   * runs here, and a failure must reach its runner (logged, retried with backoff), not end as a
   * value nobody reads.
   */
  private queued<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      try {
        return await work();
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
    const allowed = this.counts.allowed(record.tokenId, now);
    if (!allowed.ok) return { kind: 'limited', retryAfterSeconds: allowed.retryAfterSeconds };
    const next = extended(await applied(keys, record, changes, now), now, this.lifetimeMs());
    // One storage transaction from here: the count, the record, its projection and its event
    // commit together, or (something throws) none of them.
    this.atomically(() => {
      this.counts.count(record.tokenId, now);
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
    this.tokens.save(record);
    this.project(record);
    this.emit(record, event, `tok_${record.tokenId}_v${record.version ?? 1}`);
  }

  /** Stages an event about a token (token-events.ts). */
  private emit(record: TokenRecord, eventType: EventType, eventId: string): void {
    this.tokenEvents.stage(record, eventType, eventId);
    this.staged = true;
  }

  private project(record: TokenRecord): void {
    this.outbox.stage(tokenKey(record.tokenId), record, record.expiresAt);
    this.staged = true;
  }

  /** Drops tokens (live or deleted) past their end, with their updates and conflicts. */
  private prune(now: number): void {
    this.counts.prune(now);
    this.conflicts.prune(now);
    this.tokens.prune(now);
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
    const times = [this.outbox.nextDue(), this.events.nextDue(), this.tokens.nextEnd()].filter(
      (t): t is number => t !== undefined,
    );
    if (times.length > 0) await this.ctx.storage.setAlarm(Math.min(...times));
  }
}
