import { describeError, logLine } from '../log';
import { objectStorage, RETRY_MAX_MS } from './object-storage';
import { withDeadline } from './storage-error';
import { backoffMs } from '../backoff';

/**
 * The events an owning object emits (docs/events.md), on their way to the merchant's event log
 * (event-log.ts): staged in the same synchronous block as the change they report, so that the
 * change and its event commit together or not at all, then appended to the log after the answer,
 * by the same alarm that writes the object's KV projections (outbox.ts), and tried again with
 * backoff until the log has them. The log keeps each eventId once, so an append repeated after a
 * lost answer adds nothing; events leave in the order they were staged.
 *
 * What an event says is rendered when it leaves (`render`): the rendering may need crypto (the
 * card opened, masked), which a synchronous block cannot await.
 */

/** An event as it leaves for the log: what was staged, its data rendered. */
export interface OutgoingEvent<T extends string = string> {
  eventId: string;
  eventType: T;
  subject: string;
  createdAt: number;
  entity: string;
  data: Record<string, unknown>;
}

/** A rendering of one event that failed this many times: the event goes to the dead letters. */
export const MAX_RENDER_FAILURES = 5;

/**
 * An event the log has refused this long after it happened (the log's own window for delivering
 * it, docs/events.md) goes to the dead letters.
 */
export const DEAD_LETTER_AFTER_MS = 3 * 24 * 60 * 60 * 1000;

interface StagedRow extends Record<string, SqlStorageValue> {
  seq: number;
  event_id: string;
  username: string;
  event_type: string;
  subject: string;
  created_at: number;
  entity: string;
  facts: string;
}

/** What an owner stages: the event without its data, and the facts its data is rendered from. */
export interface StagedEvent<T extends string = string> {
  eventId: string;
  eventType: T;
  subject: string;
  createdAt: number;
  entity: string;
  facts: unknown;
}

export class EventOutbox<T extends string = string> {
  private readonly sql: SqlStorage;
  private sending = false;

  constructor(
    /** `reschedule` sets the owner's alarm to its next due time (after a failed append: the retry's). */
    private readonly owner: { ctx: DurableObjectState; reschedule(): Promise<void> },
    private readonly render: (event: StagedEvent<T>) => Promise<Record<string, unknown>>,
    /** Appends to `username`'s event log (the owner's client of it, with its deadline). */
    private readonly append: (username: string, events: OutgoingEvent<T>[]) => Promise<unknown>,
  ) {
    this.sql = owner.ctx.storage.sql;
    // The backoff is kept in storage, not memory: an object reset by a deployment keeps waiting
    // its turn instead of appending at once, over and over.
  }

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed").
   */
  createTables(): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS events_out (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE,
      username TEXT NOT NULL, event_type TEXT NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL,
      entity TEXT NOT NULL, facts TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS events_out_backoff (id INTEGER PRIMARY KEY CHECK (id = 1), attempts INTEGER NOT NULL,
      not_before INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS events_out_failures (event_id TEXT PRIMARY KEY, failures INTEGER NOT NULL)`);
  }

  /** Failed appends in a row, and when the next may start. */
  private backoff(): { attempts: number; notBefore: number } {
    const row = this.sql
      .exec<{ attempts: number; not_before: number }>('SELECT attempts, not_before FROM events_out_backoff')
      .toArray()[0];
    return { attempts: row?.attempts ?? 0, notBefore: row?.not_before ?? 0 };
  }

  /** Stages an event of `username`'s; call it in the same synchronous block as the change. */
  stage(username: string, event: StagedEvent<T>): void {
    this.sql.exec(
      `INSERT OR IGNORE INTO events_out (event_id, username, event_type, subject, created_at, entity, facts)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ...[event.eventId, username, event.eventType, event.subject, event.createdAt, event.entity],
      JSON.stringify(event.facts),
    );
  }

  /**
   * When the next append is due, or undefined when nothing is staged. While one is in flight, only
   * after its deadline (an alarm meanwhile would find nothing to do, and re-arm at once, over and over).
   */
  nextDue(): number | undefined {
    if (this.sql.exec('SELECT 1 FROM events_out LIMIT 1').toArray().length === 0) return undefined;
    const now = Date.now();
    return Math.max(now, this.backoff().notBefore, this.sending ? now + objectStorage.timeoutMs : 0);
  }

  /**
   * Appends what is staged to the merchants' event logs, in order; never throws: a failure is
   * logged and tried again when {@link nextDue} says.
   */
  async flush(reschedule = true): Promise<void> {
    if (this.sending || Date.now() < this.backoff().notBefore) return;
    const rows = this.sql.exec<StagedRow>('SELECT * FROM events_out ORDER BY seq').toArray();
    if (rows.length === 0) return;
    this.sending = true;
    try {
      for (const username of new Set(rows.map((r) => r.username))) {
        const mine = rows.filter((r) => r.username === username);
        const events: OutgoingEvent<T>[] = [];
        for (const row of mine) {
          const staged: StagedEvent<T> = {
            eventId: row.event_id,
            eventType: row.event_type as T,
            subject: row.subject,
            createdAt: row.created_at,
            entity: row.entity,
            facts: JSON.parse(row.facts) as unknown,
          };
          const { facts: _facts, ...event } = staged;
          events.push({ ...event, data: await this.rendered(row, staged) });
        }
        // The log's client has its deadline too: this one holds whatever the seam does.
        await withDeadline(this.append(username, events), objectStorage.timeoutMs, 'EventLog.append').catch(
          (e: unknown) => {
            // An event the log has refused for as long as it would have tried to deliver it goes to the
            // dead letters, so that the events after it can go (a log that is only down loses nothing
            // before that).
            if (Date.now() - mine[0]!.created_at >= DEAD_LETTER_AFTER_MS) this.deadLetter(mine[0]!, 'append', e);
            throw e;
          },
        );
        this.sql.exec('DELETE FROM events_out WHERE username = ? AND seq <= ?', username, mine[mine.length - 1]!.seq);
      }
      this.sql.exec('DELETE FROM events_out_backoff; DELETE FROM events_out_failures');
    } catch (e) {
      const attempts = this.backoff().attempts + 1;
      const notBefore = Date.now() + backoffMs(attempts, objectStorage.retryBaseMs, RETRY_MAX_MS);
      this.sql.exec(
        'INSERT OR REPLACE INTO events_out_backoff (id, attempts, not_before) VALUES (1, ?, ?)',
        attempts,
        notBefore,
      );
      logLine({ level: 'warn', event: 'events.retry', attempts, cause: describeError(e) });
    } finally {
      this.sending = false;
    }
    // The alarm set while this append was in flight waits for its deadline: set it again, to the
    // retry's time after a failure, or to the owner's next business after a success (not a useless
    // alarm event a deadline later). Unless the caller sets it once for more than this.
    if (reschedule) await this.owner.reschedule().catch(() => undefined);
  }

  /**
   * The event's data; a rendering that keeps failing (a bug, or facts no code can render any more)
   * sends the event to the dead letters after {@link MAX_RENDER_FAILURES} tries, so that it does
   * not hold this object's later events back for ever. Throws while it is still tried.
   */
  private async rendered(row: StagedRow, staged: StagedEvent<T>): Promise<Record<string, unknown>> {
    try {
      return await this.render(staged);
    } catch (e) {
      const failures =
        this.sql
          .exec<{ failures: number }>(
            `INSERT INTO events_out_failures (event_id, failures) VALUES (?, 1)
             ON CONFLICT (event_id) DO UPDATE SET failures = failures + 1 RETURNING failures`,
            row.event_id,
          )
          .toArray()[0]?.failures ?? 1;
      if (failures >= MAX_RENDER_FAILURES) this.deadLetter(row, 'render', e);
      throw e;
    }
  }

  /**
   * Moves a staged event to the dead letters (kept with why, logged as an error for the operator):
   * it will not be sent, and the events after it go on.
   */
  private deadLetter(row: StagedRow, stage: 'render' | 'append', cause: unknown): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS events_dead (event_id TEXT PRIMARY KEY, username TEXT NOT NULL,
      event_type TEXT NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL, stage TEXT NOT NULL,
      cause TEXT NOT NULL, at INTEGER NOT NULL)`);
    this.sql.exec(
      'INSERT OR REPLACE INTO events_dead (event_id, username, event_type, subject, created_at, stage, cause, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ...[
        row.event_id,
        row.username,
        row.event_type,
        row.subject,
        row.created_at,
        stage,
        describeError(cause),
        Date.now(),
      ],
    );
    this.sql.exec('DELETE FROM events_out WHERE seq = ?', row.seq);
    this.sql.exec('DELETE FROM events_out_failures WHERE event_id = ?', row.event_id);
    logLine({
      level: 'error',
      event: 'events.deadLetter',
      eventId: row.event_id,
      eventType: row.event_type,
      stage,
      cause: describeError(cause),
    });
  }
}
