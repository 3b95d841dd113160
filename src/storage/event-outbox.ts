import type { EventType, NewEvent } from '../events/event-types';
import { describeError, logLine } from '../log';
import { eventLog } from './object-client';
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

/**
 * How the owners reach the merchants' event logs: a seam for the tests only (to fail the appends
 * an object makes itself), as `objectStorage` is for its KV writes. Nothing in the service changes it.
 */
export const eventSink = {
  append: (env: Env, username: string, events: NewEvent[]): Promise<unknown> =>
    eventLog(env.EVENT_LOG, username, objectStorage.timeoutMs).append(username, events),
};

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
export interface StagedEvent {
  eventId: string;
  eventType: EventType;
  subject: string;
  createdAt: number;
  entity: string;
  facts: unknown;
}

export class EventOutbox {
  private readonly sql: SqlStorage;
  private attempts = 0;
  private notBefore = 0;
  private sending = false;

  constructor(
    /** `reschedule` sets the owner's alarm to its next due time (after a failed append: the retry's). */
    private readonly owner: { ctx: DurableObjectState; env: Env; reschedule(): Promise<void> },
    private readonly render: (event: StagedEvent) => Promise<Record<string, unknown>>,
  ) {
    this.sql = owner.ctx.storage.sql;
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS events_out (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE,
      username TEXT NOT NULL, event_type TEXT NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL,
      entity TEXT NOT NULL, facts TEXT NOT NULL)`);
  }

  /** Stages an event of `username`'s; call it in the same synchronous block as the change. */
  stage(username: string, event: StagedEvent): void {
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
    return Math.max(now, this.notBefore, this.sending ? now + objectStorage.timeoutMs : 0);
  }

  /**
   * Appends what is staged to the merchants' event logs, in order; never throws: a failure is
   * logged and tried again when {@link nextDue} says.
   */
  async flush(): Promise<void> {
    if (this.sending || Date.now() < this.notBefore) return;
    const rows = this.sql.exec<StagedRow>('SELECT * FROM events_out ORDER BY seq').toArray();
    if (rows.length === 0) return;
    this.sending = true;
    try {
      for (const username of new Set(rows.map((r) => r.username))) {
        const mine = rows.filter((r) => r.username === username);
        const events: NewEvent[] = [];
        for (const row of mine) {
          const staged: StagedEvent = {
            eventId: row.event_id,
            eventType: row.event_type as EventType,
            subject: row.subject,
            createdAt: row.created_at,
            entity: row.entity,
            facts: JSON.parse(row.facts) as unknown,
          };
          const { facts: _facts, ...event } = staged;
          events.push({ ...event, data: await this.render(staged) });
        }
        // The log's client has its deadline too: this one holds whatever the seam does.
        await withDeadline(
          eventSink.append(this.owner.env, username, events),
          objectStorage.timeoutMs,
          'EventLog.append',
        );
        this.sql.exec('DELETE FROM events_out WHERE username = ? AND seq <= ?', username, mine[mine.length - 1]!.seq);
      }
      this.attempts = 0;
      this.notBefore = 0;
    } catch (e) {
      this.attempts += 1;
      this.notBefore = Date.now() + backoffMs(this.attempts, objectStorage.retryBaseMs, RETRY_MAX_MS);
      logLine({ level: 'warn', event: 'events.retry', attempts: this.attempts, cause: describeError(e) });
    } finally {
      this.sending = false;
    }
    // The alarm set while this append was in flight waits for its deadline: set it again, to the
    // retry's time after a failure, or to the owner's next business after a success (not a useless
    // alarm event a deadline later).
    await this.owner.reschedule().catch(() => undefined);
  }
}
