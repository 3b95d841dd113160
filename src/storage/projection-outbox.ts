import { describeError, logLine } from '../log';
import { kvTtlSeconds, prefixOf } from './kv';
import { withDeadline } from './storage-error';
import { objectStorage, RETRY_MAX_MS } from './object-storage';
import { backoffMs } from '../backoff';
import type { AlarmSetting } from './alarm-runner';

/** KV accepts one write a second to a key (`objectStorage.keyWriteIntervalMs`, which the tests shorten). */
export { KEY_WRITE_INTERVAL_MS } from './object-storage';

/**
 * The KV projections of one Durable Object's state (docs/storage.md "Projections"). The object is
 * the truth; KV holds copies for readers that tolerate staleness, and this object is the only
 * writer of its keys, so no two writers ever race on one key.
 *
 * - A state change stages the key's new value in the same synchronous block as the change (SQL
 *   calls with no `await` between them are one storage transaction in a Durable Object), so the
 *   state and its pending projection commit together or not at all.
 * - The object writes what is staged after the answer (no answer waits for KV): at once, and from
 *   its alarm whatever that could not write. A write that fails, hangs or times out is tried
 *   again from the alarm, with backoff, until it lands.
 * - Per key: at most one write a second (Cloudflare KV's limit); a write always sends the newest
 *   staged value, so changes staged meanwhile are coalesced into it; and a write that ended
 *   without an answer (it may still land) is followed by the next one only after
 *   {@link UNANSWERED_WRITE_DEADLINES} deadlines, so that an older value lands before the newer
 *   one; should it land later still (its answer comes back after all), the key is written again
 *   with the newest value, so KV always ends with the object's state.
 *
 * Nobody waits for any of this: the waits are the alarm's, never a request's.
 */

/**
 * A write that ended without an answer (its deadline passed) may still land: the next write of its
 * key is sent only this many deadlines after it (10 s with the 5 s deadline).
 */
export const UNANSWERED_WRITE_DEADLINES = 2;
/**
 * How long after it was sent an unanswered write may still land, in deadlines (60 s with the 5 s
 * deadline): then the newest value is written once more, whether or not it landed, since the
 * instance that could have seen it land may be gone.
 */
export const LATE_LANDING_DEADLINES = 12;
/** The alarm behind a projection tried at once: it writes what that try could not. */
const PROJECTION_SAFETY_MS = 2_000;

interface OutboxRow extends Record<string, SqlStorageValue> {
  key: string;
  /**
   * Which row this is: a wipe deletes the rows, and a write still in flight from before must not
   * mark a new row of the same key (the reference used again) as written.
   */
  generation: string;
  /** The JSON to put, or null to delete the key. */
  value: string | null;
  /** The value's logical end (ms): its KV TTL; a row past it is dropped, never written. */
  expires_at: number;
  /** Changes staged so far, and the number of the change the last write that landed carried. */
  staged: number;
  written: number;
  /** No write of this key before this time (KV's per-key limit, backoff, an unanswered write). */
  not_before: number;
  attempts: number;
  /** A write of this row is out (marked before it goes: a reset instance's next one knows). */
  sent_at: number | null;
  /** When the newest value is written once more, after an unanswered write (it may land late). */
  recheck_at: number | null;
}

/** The object whose projections an outbox writes. */
export interface OutboxOwner {
  ctx: DurableObjectState;
  env: Env;
  /** Sets the object's alarm to its next due time (a projection's, or its own: see `nextDue`). */
  reschedule(): Promise<void>;
  /** Where the object reads and sets its alarm, when not straight from storage (alarm-runner.ts). */
  alarm?: AlarmSetting;
}

export class Outbox {
  /** Keys being written right now (the immediate write and the alarm's may overlap). */
  private readonly inFlight = new Set<string>();
  private readonly sql: SqlStorage;

  constructor(private readonly owner: OutboxOwner) {
    this.sql = owner.ctx.storage.sql;
  }

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed"). `fresh`: the object has no tables yet
   * (its schema version says so, src/storage/schema-version.ts), so no older outbox to upgrade.
   */
  createTables(fresh = false): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS outbox (
      key TEXT PRIMARY KEY, generation TEXT NOT NULL, value TEXT, expires_at INTEGER NOT NULL, staged INTEGER NOT NULL,
      written INTEGER NOT NULL DEFAULT 0, not_before INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,
      sent_at INTEGER, recheck_at INTEGER)`);
    if (fresh) return;
    // An outbox made by an earlier version: the guards that are kept in storage since.
    const columns = this.sql
      .exec<{ name: string }>("SELECT name FROM pragma_table_info('outbox')")
      .toArray()
      .map((c) => c.name);
    for (const column of ['sent_at', 'recheck_at']) {
      if (!columns.includes(column)) this.sql.exec(`ALTER TABLE outbox ADD COLUMN ${column} INTEGER`);
    }
  }

  /** The newest staged value of the object's projection (for an object with one key). */
  latest<T>(): { key: string; value: T | null } | undefined {
    const row = this.sql
      .exec<{ key: string; value: string | null }>('SELECT key, value FROM outbox LIMIT 1')
      .toArray()[0];
    return row && { key: row.key, value: row.value === null ? null : (JSON.parse(row.value) as T) };
  }

  /**
   * Stages `value` (JSON-serialisable, or null to delete) as the next projection of `key`, to
   * live until `expiresAt`. Call it in the same synchronous block as the state change it projects.
   */
  stage(key: string, value: unknown, expiresAt: number): void {
    // A projection that could never expire is a bug upstream: refused before it is staged.
    if (!Number.isFinite(expiresAt)) throw new Error(`projection under ${prefixOf(key)} has no finite expiresAt`);
    const json = value === null ? null : JSON.stringify(value);
    this.sql.exec(
      `INSERT INTO outbox (key, generation, value, expires_at, staged) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, staged = staged + 1`,
      ...[key, crypto.randomUUID(), json, expiresAt],
    );
  }

  /**
   * When a write is due (ms), or undefined when every projection has landed. A key being written
   * right now is due again only once that write has had its deadline (`timeoutMs`): an alarm
   * meanwhile would find nothing to do, and re-arm at once, over and over.
   */
  nextDue(timeoutMs = objectStorage.timeoutMs): number | undefined {
    const now = Date.now();
    let due: number | undefined;
    const sooner = (at: number): void => {
      due = due === undefined ? at : Math.min(due, at);
    };
    for (const row of this.sql.exec<{
      key: string;
      not_before: number;
      pending: number;
      sent_at: number | null;
      recheck_at: number | null;
    }>(
      `SELECT key, not_before, staged > written AS pending, sent_at, recheck_at FROM outbox
       WHERE staged > written OR sent_at IS NOT NULL OR recheck_at IS NOT NULL`,
    )) {
      const mine = this.inFlight.has(row.key);
      if (row.pending) sooner(Math.max(row.not_before, now, mine ? now + timeoutMs : 0));
      if (row.recheck_at !== null) sooner(Math.max(row.recheck_at, now));
      // A write out from an instance that is gone: the next flush treats it as unanswered.
      if (row.sent_at !== null && !mine) sooner(now);
    }
    return due;
  }

  /**
   * Writes every projection that is due, each key at most once. Never throws: a failure is
   * recorded on its row and tried again when `nextDue` says.
   *
   * What guards the writes is kept in the rows, not in memory, so a reset of the object (a
   * deployment) cannot let an older value overwrite a newer one: a write is marked sent before it
   * goes out (`sent_at`); a row still marked sent with no write of this instance out is a write of
   * an instance that is gone, which may still land, so it is treated as unanswered; and after any
   * unanswered write the newest value is written once more when it can no longer land
   * (`recheck_at`, {@link LATE_LANDING_DEADLINES} deadlines after it was sent).
   */
  async flush(): Promise<void> {
    const { timeoutMs, retryBaseMs } = objectStorage;
    const kv = objectStorage.kv(this.owner.env);
    const now = Date.now();
    this.sql.exec('DELETE FROM outbox WHERE expires_at <= ?', now);
    for (const row of this.sql.exec<{ key: string; generation: string; sent_at: number }>(
      'SELECT key, generation, sent_at FROM outbox WHERE sent_at IS NOT NULL',
    )) {
      if (this.inFlight.has(row.key)) continue;
      this.sql.exec(
        `UPDATE outbox SET sent_at = NULL, not_before = MAX(not_before, ?), recheck_at = MAX(COALESCE(recheck_at, 0), ?)
         WHERE key = ? AND generation = ?`,
        ...[row.sent_at + UNANSWERED_WRITE_DEADLINES * timeoutMs, row.sent_at + LATE_LANDING_DEADLINES * timeoutMs],
        ...[row.key, row.generation],
      );
    }
    // An unanswered write can no longer land: the newest value is written once more.
    this.sql.exec(
      'UPDATE outbox SET written = 0, recheck_at = NULL WHERE recheck_at IS NOT NULL AND recheck_at <= ?',
      now,
    );
    const due = this.sql
      .exec<OutboxRow>('SELECT * FROM outbox WHERE staged > written AND not_before <= ?', now)
      .toArray()
      .filter((row) => !this.inFlight.has(row.key));
    await Promise.all(due.map((row) => this.write(kv, timeoutMs, retryBaseMs, row)));
  }

  private async write(kv: KVNamespace, timeoutMs: number, retryBaseMs: number, row: OutboxRow): Promise<void> {
    this.inFlight.add(row.key);
    const sentAt = Date.now();
    // Marked before it goes out: should this instance be gone before it answers, the next one knows.
    this.sql.exec('UPDATE outbox SET sent_at = ? WHERE key = ? AND generation = ?', sentAt, row.key, row.generation);
    const write =
      row.value === null
        ? kv.delete(row.key)
        : kv.put(row.key, row.value, { expirationTtl: kvTtlSeconds(row.key, row.expires_at, sentAt) });
    // Settled (landed, or refused) or not: a write still running at its deadline may land later.
    let settled = false;
    const tracked = write.finally(() => (settled = true));
    try {
      await withDeadline(tracked, timeoutMs, `KV ${row.value === null ? 'delete' : 'put'} ${prefixOf(row.key)}`);
      // Changes staged during the write stay pending (staged > written): the next write sends them.
      this.sql.exec(
        'UPDATE outbox SET written = MAX(written, ?), attempts = 0, not_before = ?, sent_at = NULL WHERE key = ? AND generation = ?',
        ...[row.staged, sentAt + objectStorage.keyWriteIntervalMs, row.key, row.generation],
      );
    } catch (e) {
      const attempts = row.attempts + 1;
      const backoff = backoffMs(attempts, retryBaseMs, RETRY_MAX_MS);
      // A refused write may have landed all the same (its answer lost): KV's per-key second still
      // counts from when it was sent.
      const notBefore = Math.max(
        Date.now() + backoff,
        sentAt + objectStorage.keyWriteIntervalMs,
        settled ? 0 : sentAt + UNANSWERED_WRITE_DEADLINES * timeoutMs,
      );
      // An unanswered write may land later still: once it no longer can, the newest value is written again.
      const recheckAt = settled ? null : sentAt + LATE_LANDING_DEADLINES * timeoutMs;
      this.sql.exec(
        `UPDATE outbox SET attempts = ?, not_before = ?, sent_at = NULL,
         recheck_at = CASE WHEN ? IS NULL THEN recheck_at ELSE MAX(COALESCE(recheck_at, 0), ?) END
         WHERE key = ? AND generation = ?`,
        ...[attempts, notBefore, recheckAt, recheckAt, row.key, row.generation],
      );
      logLine({ level: 'warn', event: 'projection.retry', key: prefixOf(row.key), attempts, cause: describeError(e) });
      // Should the unanswered write land after all, KV may hold an older value than a write sent
      // since: the key is written again, with the newest value.
      if (!settled)
        tracked.then(
          () => this.landedLate(row),
          () => {},
        );
    } finally {
      this.inFlight.delete(row.key);
    }
  }

  private landedLate(row: OutboxRow): void {
    const cursor = this.sql.exec(
      'UPDATE outbox SET written = 0, not_before = MAX(not_before, ?) WHERE key = ? AND generation = ?',
      ...[Date.now() + objectStorage.keyWriteIntervalMs, row.key, row.generation],
    );
    if (cursor.rowsWritten > 0) void this.owner.reschedule();
  }

  /**
   * After a change staged a projection: the alarm is set a moment ahead as the safety net (or left
   * where it is when that is sooner), and
   * the write is tried at once, after the answer (not awaited), so that a change whose write KV
   * takes at once costs no alarm event; a write that fails, or is not due yet (KV's one write a
   * second per key), is left to the alarm, which the flush sets to when it is due. The alarm's
   * setting is a storage write: the answer leaves once it is stored (the output gate). The write
   * is started even when setting the alarm failed (which the caller hears of). `written` is that
   * write, done; without `reschedule` it leaves setting the alarm again to the caller (who has
   * more under way: call-effects.ts), so that one setting follows both.
   */
  async writeSoon(reschedule = true): Promise<{ written: Promise<void> }> {
    // Never later than an alarm already set (a challenge's deadline, an AReq's answer window).
    const at = Date.now() + PROJECTION_SAFETY_MS;
    const alarm = this.owner.alarm ?? this.owner.ctx.storage;
    let written: Promise<void> | undefined;
    try {
      const current = await alarm.getAlarm();
      if (current === null || current > at) await alarm.setAlarm(at);
    } finally {
      written = this.flushNow(reschedule);
    }
    return { written };
  }

  private async flushNow(reschedule: boolean): Promise<void> {
    try {
      await this.flush();
      if (reschedule) await this.owner.reschedule();
    } catch {
      // The alarm set by writeSoon writes it.
    }
  }

  /** Forgets every projection (the object's state is wiped; KV's copies expire by their TTL). */
  wipe(): void {
    this.sql.exec('DELETE FROM outbox');
  }
}
