import {
  EVENT_PAGE_SIZE,
  EVENT_RETENTION_MS,
  eventBody,
  type AttemptView,
  type DeliveryError,
  type DeliveryState,
  type DeliveryView,
  type EventBody,
  type EventView,
  type NewEvent,
} from './event-types';
import type { ShardPage, ShardQuery } from './event-shards';

/**
 * The rows of a merchant's event log (docs/events.md "Delivery"): its events, one delivery per
 * endpoint that takes each, and each delivery's last attempts. Synchronous SQL only: the EventLog
 * object (event-log.ts) does the I/O and calls these inside its own synchronous blocks.
 *
 * Order without scanning: of the pending deliveries of one subject to one endpoint, only the first
 * (its head) has a due time; the others wait with {@link WAITING} until the one before them ends,
 * so "what is due" is an index range of due times, never a scan of every subject's queue.
 */

/** The due time of a pending delivery that waits for an earlier one of its subject. */
export const WAITING = Number.MAX_SAFE_INTEGER;

/** Attempts kept per delivery (the newest). */
export const ATTEMPTS_KEPT = 10;

export const EVENT_TABLES = `CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), username TEXT NOT NULL,
    shard INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS deliveries (seq INTEGER NOT NULL, endpoint_id TEXT NOT NULL, subject TEXT NOT NULL,
    state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0,
    round INTEGER NOT NULL DEFAULT 0, window_start INTEGER NOT NULL, next_at INTEGER NOT NULL,
    last_status INTEGER, last_error TEXT, last_attempt_at INTEGER, delivered_at INTEGER,
    PRIMARY KEY (seq, endpoint_id));
  CREATE TABLE IF NOT EXISTS attempts (seq INTEGER NOT NULL, endpoint_id TEXT NOT NULL, at INTEGER NOT NULL,
    status INTEGER, error TEXT, duration_ms INTEGER NOT NULL, version INTEGER NOT NULL)`;

/** Columns and indexes added since the first log (an object that has the old ones is brought up to date). */
const EVENT_COLUMNS = [
  ['sequence', 'INTEGER NOT NULL DEFAULT 0'],
  ['appended_at', 'INTEGER NOT NULL DEFAULT 0'],
  // NULL: the endpoints that take its type; `only:<endpointId>` (a ping); `except:<endpointId>`.
  ['audience', 'TEXT'],
] as const;

const INDEXES = `CREATE INDEX IF NOT EXISTS events_subject ON events (subject, sequence);
  CREATE INDEX IF NOT EXISTS events_created ON events (created_at);
  CREATE INDEX IF NOT EXISTS events_appended ON events (appended_at, seq);
  CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (endpoint_id, state, next_at);
  CREATE INDEX IF NOT EXISTS deliveries_order ON deliveries (endpoint_id, subject, state, seq);
  CREATE INDEX IF NOT EXISTS attempts_of ON attempts (seq, endpoint_id, at)`;

interface EventRow extends Record<string, SqlStorageValue> {
  seq: number;
  event_id: string;
  event_type: string;
  subject: string;
  created_at: number;
  body: string;
  audience: string | null;
}

export interface DeliveryRow extends Record<string, SqlStorageValue> {
  seq: number;
  endpoint_id: string;
  subject: string;
  state: DeliveryState;
  attempts: number;
  /** Failed attempts in a row since it was appended or sent again: the backoff's exponent. */
  failures: number;
  /** Which sending this is: a redelivery starts a new one, and an attempt of an older one changes nothing. */
  round: number;
  window_start: number;
  next_at: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: number | null;
  delivered_at: number | null;
}

/** A delivery with what an attempt sends. */
export type SendableRow = DeliveryRow & { event_id: string; event_type: string; body: string };

/** Who an event goes to: the endpoints that take its type, or one endpoint, or all but one. */
export type Audience = { only: string } | { except: string } | undefined;

export class EventStore {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Creates the tables, and brings those of an earlier layout up to date (columns added since,
   * the first design's log): once, when the log's schema version row says they are not current.
   */
  createTables(): void {
    const sql = this.sql;
    sql.exec(EVENT_TABLES);
    const have = new Set(
      sql
        .exec<{ name: string }>('PRAGMA table_info(events)')
        .toArray()
        .map((c) => c.name),
    );
    for (const [name, type] of EVENT_COLUMNS)
      if (!have.has(name)) sql.exec(`ALTER TABLE events ADD COLUMN ${name} ${type}`);
    const old = sql
      .exec<{ name: string }>('PRAGMA table_info(deliveries)')
      .toArray()
      .some((c) => c.name === 'endpoint');
    if (old) this.fromFirstLog();
    const ownerColumns = sql.exec<{ name: string }>('PRAGMA table_info(owner)').toArray();
    if (!ownerColumns.some((c) => c.name === 'shard'))
      sql.exec('ALTER TABLE owner ADD COLUMN shard INTEGER NOT NULL DEFAULT 0');
    sql.exec(INDEXES);
  }

  /**
   * Brings a log of the first design (endpoints in the merchant file, named by URL) up to date:
   * its deliveries keep their history, those not ended are ended as `endpointRemoved` (the
   * merchant's endpoints are now made through the API; `recover` sends them to a new one), and
   * each event gets its sequence and a body that carries it.
   */
  private fromFirstLog(): void {
    this.sql.exec('DROP INDEX IF EXISTS deliveries_pending');
    this.sql.exec('ALTER TABLE deliveries RENAME COLUMN endpoint TO endpoint_id');
    // Each endpoint URL of the merchant file becomes the id of an endpoint that no longer exists.
    for (const { endpoint_id: url } of this.sql
      .exec<{ endpoint_id: string }>('SELECT DISTINCT endpoint_id FROM deliveries')
      .toArray())
      this.sql.exec('UPDATE deliveries SET endpoint_id = ? WHERE endpoint_id = ?', removedEndpointId(), url);
    this.sql.exec(
      "UPDATE deliveries SET state = 'failed', last_error = 'endpointRemoved', next_at = 0 WHERE state = 'pending'",
    );
    const rows = this.sql.exec<EventRow>('SELECT * FROM events ORDER BY seq').toArray();
    const last = new Map<string, number>();
    for (const row of rows) {
      const sequence = Math.max((last.get(row.subject) ?? 0) + 1, row.created_at);
      last.set(row.subject, sequence);
      const old = JSON.parse(row.body) as Omit<EventBody, 'subject' | 'sequence'>;
      const body = eventBody(
        { ...old, subject: row.subject, createdAt: row.created_at, entity: old.merchant.entity },
        sequence,
      );
      this.sql.exec(
        'UPDATE events SET sequence = ?, appended_at = created_at, body = ? WHERE seq = ?',
        ...[sequence, JSON.stringify(body), row.seq],
      );
    }
  }

  /**
   * Adds an event unless its id is here already; returns its seq, or undefined. Its sequence is
   * greater than any of its subject's before it and at least its append time in ms, so that it
   * goes on growing after the subject's older events were dropped.
   */
  addEvent(event: NewEvent, audience: Audience, now: number): number | undefined {
    if (this.sql.exec('SELECT 1 FROM events WHERE event_id = ?', event.eventId).toArray().length > 0) return undefined;
    const last = this.sql
      .exec<{ s: number | null }>('SELECT MAX(sequence) AS s FROM events WHERE subject = ?', event.subject)
      .one().s;
    const sequence = Math.max((last ?? 0) + 1, now);
    return this.sql
      .exec<{ seq: number }>(
        `INSERT INTO events (event_id, event_type, subject, created_at, body, sequence, appended_at, audience)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
        ...[event.eventId, event.eventType, event.subject, event.createdAt],
        ...[JSON.stringify(eventBody(event, sequence)), sequence, now, audienceText(audience)],
      )
      .one().seq;
  }

  /** A new delivery of event `seq`, pending (or held, for a disabled endpoint), in its subject's order. */
  addDelivery(seq: number, endpointId: string, subject: string, held: boolean, now: number): void {
    this.sql.exec(
      `INSERT INTO deliveries (seq, endpoint_id, subject, state, window_start, next_at) VALUES (?, ?, ?, ?, ?, ?)`,
      ...[seq, endpointId, subject, held ? 'held' : 'pending', now, WAITING],
    );
    if (!held) this.advance(endpointId, subject, now);
  }

  /** The event of this id (within 30 days), or undefined. */
  event(eventId: string, now: number): EventRow | undefined {
    return this.sql
      .exec<EventRow>(
        'SELECT seq, event_id, event_type, subject, created_at, body, audience FROM events WHERE event_id = ? AND created_at > ?',
        ...[eventId, now - EVENT_RETENTION_MS],
      )
      .toArray()[0];
  }

  /**
   * Sends an event again to an endpoint: a new round with its own retry window, in the order of
   * its subject there (after the earlier ones still pending).
   */
  resend(seq: number, endpointId: string, subject: string, held: boolean, now: number): void {
    this.sql.exec(
      `INSERT INTO deliveries (seq, endpoint_id, subject, state, window_start, next_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (seq, endpoint_id) DO UPDATE SET state = excluded.state, round = round + 1, failures = 0,
         window_start = excluded.window_start, next_at = excluded.next_at`,
      ...[seq, endpointId, subject, held ? 'held' : 'pending', now, WAITING],
    );
    if (!held) this.advance(endpointId, subject, now);
  }

  /**
   * Queues again to an endpoint every event since `since` it takes that never reached it (none, or
   * failed); those on their way already are left as they are. Returns how many.
   */
  recover(endpointId: string, types: readonly string[] | 'all', since: number, held: boolean, now: number): number {
    const typeFilter =
      types === 'all' ? "e.event_type <> 'ping'" : `e.event_type IN (${types.map(() => '?').join(',')})`;
    const queued = this.sql
      .exec(
        `INSERT INTO deliveries (seq, endpoint_id, subject, state, window_start, next_at)
       SELECT e.seq, ?, e.subject, ?, ?, ? FROM events e
       WHERE e.created_at >= ? AND e.created_at > ? AND (e.audience = 'only:' || ? OR ((e.audience IS NULL
         OR (e.audience LIKE 'except:%' AND e.audience <> 'except:' || ?)) AND ${typeFilter}))
       ON CONFLICT (seq, endpoint_id) DO UPDATE SET state = excluded.state, round = round + 1, failures = 0,
         window_start = excluded.window_start, next_at = excluded.next_at WHERE deliveries.state = 'failed'
       RETURNING seq`,
        ...[
          endpointId,
          held ? 'held' : 'pending',
          now,
          WAITING,
          since,
          now - EVENT_RETENTION_MS,
          endpointId,
          endpointId,
        ],
        ...(types === 'all' ? [] : types),
      )
      .toArray().length;
    if (!held) this.advanceAll(endpointId, now);
    return queued;
  }

  /** Holds an endpoint's pending deliveries (it was disabled). */
  hold(endpointId: string): void {
    this.sql.exec("UPDATE deliveries SET state = 'held' WHERE endpoint_id = ? AND state = 'pending'", endpointId);
  }

  /** Releases an endpoint's held deliveries, each with a new window, in the order of each subject. */
  release(endpointId: string, now: number): void {
    this.sql.exec(
      `UPDATE deliveries SET state = 'pending', failures = 0, window_start = ?, next_at = ?
       WHERE endpoint_id = ? AND state = 'held'`,
      ...[now, WAITING, endpointId],
    );
    this.advanceAll(endpointId, now);
  }

  /** Ends an endpoint's deliveries not ended yet: the endpoint was deleted. */
  endAll(endpointId: string): void {
    this.sql.exec(
      `UPDATE deliveries SET state = 'failed', last_error = 'endpointRemoved'
       WHERE endpoint_id = ? AND state IN ('pending', 'held')`,
      endpointId,
    );
  }

  /**
   * The due pending deliveries to one endpoint, soonest first, at most `limit`: heads only (the
   * others wait with no due time), found by the index of due times.
   */
  due(endpointId: string, now: number, limit: number): { seq: number; endpointId: string }[] {
    if (limit <= 0) return [];
    return this.sql
      .exec<{ seq: number }>(
        "SELECT seq FROM deliveries WHERE endpoint_id = ? AND state = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?",
        ...[endpointId, now, limit],
      )
      .toArray()
      .map((r) => ({ seq: r.seq, endpointId }));
  }

  /** The soonest due time of an endpoint's pending deliveries, or undefined. */
  nextDue(endpointId: string): number | undefined {
    const at = this.sql
      .exec<{ at: number | null }>(
        "SELECT MIN(next_at) AS at FROM deliveries WHERE endpoint_id = ? AND state = 'pending' AND next_at < ?",
        ...[endpointId, WAITING],
      )
      .one().at;
    return at ?? undefined;
  }

  /** A pending delivery with what it sends, or undefined when it is no longer pending. */
  sendable(seq: number, endpointId: string): SendableRow | undefined {
    return this.sql
      .exec<SendableRow>(
        `SELECT d.*, e.event_id, e.event_type, e.body FROM deliveries d JOIN events e ON e.seq = d.seq
         WHERE d.seq = ? AND d.endpoint_id = ? AND d.state = 'pending'`,
        ...[seq, endpointId],
      )
      .toArray()[0];
  }

  /** Marks a delivery as being sent: not due again before `until` (its deadline), even after a reset. */
  sending(row: DeliveryRow, until: number): void {
    this.sql.exec(
      'UPDATE deliveries SET next_at = ? WHERE seq = ? AND endpoint_id = ? AND round = ?',
      ...[until, row.seq, row.endpoint_id, row.round],
    );
  }

  /**
   * Records an attempt: always in the history and the count (a request was sent); on the delivery
   * only when it is of the round still going (an attempt begun before a redelivery changes nothing
   * of the new round). Returns whether it was.
   */
  attempted(
    row: DeliveryRow,
    version: number,
    outcome: { at: number; status?: number; error?: DeliveryError; durationMs: number },
  ): boolean {
    const { at, status = null, error = null, durationMs } = outcome;
    this.sql.exec(
      'INSERT INTO attempts (seq, endpoint_id, at, status, error, duration_ms, version) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ...[row.seq, row.endpoint_id, at, status, error, durationMs, version],
    );
    this.sql.exec(
      `DELETE FROM attempts WHERE seq = ? AND endpoint_id = ? AND rowid NOT IN
         (SELECT rowid FROM attempts WHERE seq = ? AND endpoint_id = ? ORDER BY at DESC, rowid DESC LIMIT ?)`,
      ...[row.seq, row.endpoint_id, row.seq, row.endpoint_id, ATTEMPTS_KEPT],
    );
    this.sql.exec(
      'UPDATE deliveries SET attempts = attempts + 1 WHERE seq = ? AND endpoint_id = ?',
      row.seq,
      row.endpoint_id,
    );
    return (
      this.sql.exec(
        `UPDATE deliveries SET last_attempt_at = ?, last_status = ?, last_error = ?
         WHERE seq = ? AND endpoint_id = ? AND round = ? AND state IN ('pending', 'held')`,
        ...[at, status, error, row.seq, row.endpoint_id, row.round],
      ).rowsWritten > 0
    );
  }

  /** The round's delivery delivered (also when its endpoint was disabled meanwhile: it got it); the next of its subject is due. */
  delivered(row: DeliveryRow, now: number): void {
    this.sql.exec(
      `UPDATE deliveries SET state = 'delivered', delivered_at = ?, failures = 0
       WHERE seq = ? AND endpoint_id = ? AND round = ? AND state IN ('pending', 'held')`,
      ...[now, row.seq, row.endpoint_id, row.round],
    );
    this.advance(row.endpoint_id, row.subject, now);
  }

  /** The round's delivery tried again at `nextAt`. */
  retryAt(row: DeliveryRow, nextAt: number): void {
    this.sql.exec(
      `UPDATE deliveries SET failures = failures + 1, next_at = ?
       WHERE seq = ? AND endpoint_id = ? AND round = ? AND state = 'pending'`,
      ...[nextAt, row.seq, row.endpoint_id, row.round],
    );
  }

  /** The round's delivery failed for good; the next of its subject is due. */
  failed(row: DeliveryRow, now: number): void {
    this.sql.exec(
      `UPDATE deliveries SET state = 'failed', failures = failures + 1
       WHERE seq = ? AND endpoint_id = ? AND round = ? AND state = 'pending'`,
      ...[row.seq, row.endpoint_id, row.round],
    );
    this.advance(row.endpoint_id, row.subject, now);
  }

  /** Drops events past their 30 days, with their deliveries and attempts. */
  prune(now: number): void {
    const oldest = now - EVENT_RETENTION_MS;
    this.sql.exec('DELETE FROM attempts WHERE seq IN (SELECT seq FROM events WHERE created_at <= ?)', oldest);
    this.sql.exec('DELETE FROM deliveries WHERE seq IN (SELECT seq FROM events WHERE created_at <= ?)', oldest);
    this.sql.exec('DELETE FROM events WHERE created_at <= ?', oldest);
  }

  /** When the oldest event is to be dropped, or undefined when there is none. */
  nextExpiry(): number | undefined {
    const at = this.sql.exec<{ at: number | null }>('SELECT MIN(created_at) AS at FROM events').one().at;
    return at === null ? undefined : at + EVENT_RETENTION_MS;
  }

  /**
   * A page of this shard's events of the last 30 days, each with its position in the merchant's
   * order (append time, shard, seq): oldest first (newest first with `order: 'desc'`), after (before)
   * the cursor's position, filtered by type and by a delivery's state or endpoint, each with every
   * endpoint's delivery. At most a page and one: the caller merges the shards' pages (event-shards.ts).
   */
  page(query: ShardQuery, shard: number, urlOf: (endpointId: string) => string | undefined, now: number): ShardPage {
    const desc = query.order === 'desc';
    const where = ['e.created_at > ?'];
    const args: SqlStorageValue[] = [now - EVENT_RETENTION_MS];
    const after = query.after;
    if (after !== undefined) {
      // Past the cursor in the merchant's order: by time, then shard, then seq.
      const later = desc ? '<' : '>';
      if (after.shard === shard) {
        where.push(`(e.appended_at ${later} ? OR (e.appended_at = ? AND e.seq ${later} ?))`);
        args.push(after.at, after.at, after.seq);
      } else {
        const sameTimeAfter = desc ? shard < after.shard : shard > after.shard;
        where.push(`e.appended_at ${sameTimeAfter ? `${later}=` : later} ?`);
        args.push(after.at);
      }
    }
    if (query.type !== undefined) {
      where.push('e.event_type = ?');
      args.push(query.type);
    }
    if (query.deliveryState !== undefined || query.endpointId !== undefined) {
      const inner = ['d.seq = e.seq'];
      if (query.endpointId !== undefined) {
        inner.push('d.endpoint_id = ?');
        args.push(query.endpointId);
      }
      if (query.deliveryState !== undefined) {
        inner.push('d.state = ?');
        args.push(query.deliveryState);
      }
      where.push(`EXISTS (SELECT 1 FROM deliveries d WHERE ${inner.join(' AND ')})`);
    }
    const order = desc ? 'DESC' : 'ASC';
    const rows = this.sql
      .exec<EventRow & { appended_at: number }>(
        `SELECT e.seq, e.body, e.appended_at FROM events e WHERE ${where.join(' AND ')}
         ORDER BY e.appended_at ${order}, e.seq ${order} LIMIT ?`,
        ...args,
        EVENT_PAGE_SIZE + 1,
      )
      .toArray();
    const seqs = rows.map((r) => r.seq);
    const deliveries = new Map<number, DeliveryView[]>();
    if (seqs.length > 0) {
      for (const d of this.sql.exec<DeliveryRow>(
        'SELECT * FROM deliveries WHERE seq BETWEEN ? AND ? ORDER BY seq, rowid',
        Math.min(...seqs),
        Math.max(...seqs),
      )) {
        deliveries.set(d.seq, [...(deliveries.get(d.seq) ?? []), deliveryView(d, urlOf)]);
      }
    }
    return {
      events: rows.map((row) => ({
        ...(JSON.parse(row.body) as EventBody),
        deliveries: deliveries.get(row.seq) ?? [],
        position: { at: row.appended_at, shard, seq: row.seq },
      })),
    };
  }

  /** Where an event of the last 30 days stands in this shard (the cursor of `GET /events`), or undefined. */
  position(eventId: string, now: number): { at: number; seq: number } | undefined {
    const row = this.sql
      .exec<{ appended_at: number; seq: number }>(
        'SELECT appended_at, seq FROM events WHERE event_id = ? AND created_at > ?',
        eventId,
        now - EVENT_RETENTION_MS,
      )
      .toArray()[0];
    return row && { at: row.appended_at, seq: row.seq };
  }

  /** One event with each delivery and its last attempts. */
  view(eventId: string, urlOf: (endpointId: string) => string | undefined, now: number): EventView | undefined {
    const row = this.event(eventId, now);
    if (!row) return undefined;
    const history = new Map<string, AttemptView[]>();
    for (const a of this.sql.exec<{
      endpoint_id: string;
      at: number;
      status: number | null;
      error: string | null;
      duration_ms: number;
    }>(
      'SELECT endpoint_id, at, status, error, duration_ms FROM attempts WHERE seq = ? ORDER BY at DESC, rowid DESC',
      row.seq,
    )) {
      history.set(a.endpoint_id, [
        ...(history.get(a.endpoint_id) ?? []),
        {
          at: new Date(a.at).toISOString(),
          ...(a.status !== null ? { status: a.status } : {}),
          ...(a.error !== null ? { error: a.error as DeliveryError } : {}),
          durationMs: a.duration_ms,
        },
      ]);
    }
    const deliveries = this.sql
      .exec<DeliveryRow>('SELECT * FROM deliveries WHERE seq = ? ORDER BY rowid', row.seq)
      .toArray()
      .map((d) => ({ ...deliveryView(d, urlOf), history: history.get(d.endpoint_id) ?? [] }));
    return { ...(JSON.parse(row.body) as EventBody), deliveries };
  }

  /** Gives the first pending delivery of a subject to an endpoint its due time, if it waits. */
  private advance(endpointId: string, subject: string, now: number): void {
    this.sql.exec(
      `UPDATE deliveries SET next_at = ? WHERE endpoint_id = ? AND next_at = ? AND seq =
         (SELECT seq FROM deliveries WHERE endpoint_id = ? AND subject = ? AND state = 'pending' ORDER BY seq LIMIT 1)`,
      ...[now, endpointId, WAITING, endpointId, subject],
    );
  }

  /** {@link advance} for every subject with pending deliveries to an endpoint. */
  private advanceAll(endpointId: string, now: number): void {
    this.sql.exec(
      `UPDATE deliveries SET next_at = ? WHERE endpoint_id = ? AND state = 'pending' AND next_at = ? AND (subject, seq) IN
         (SELECT subject, MIN(seq) FROM deliveries WHERE endpoint_id = ? AND state = 'pending' GROUP BY subject)`,
      ...[now, endpointId, WAITING, endpointId],
    );
  }
}

/** An endpoint id (as endpoint-table.ts makes them) for an endpoint of the merchant file, gone since. */
function removedEndpointId(): string {
  const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
  return 'ep_' + [...crypto.getRandomValues(new Uint8Array(26))].map((b) => BASE32[b & 31]).join('');
}

export function audienceText(audience: Audience): string | null {
  if (audience === undefined) return null;
  return 'only' in audience ? `only:${audience.only}` : `except:${audience.except}`;
}

/** Whether an event of this audience goes to an endpoint (its type aside). */
export function inAudience(audience: string | null, endpointId: string): boolean {
  if (audience === null) return true;
  if (audience.startsWith('only:')) return audience === `only:${endpointId}`;
  return audience !== `except:${endpointId}`;
}

function deliveryView(d: DeliveryRow, urlOf: (endpointId: string) => string | undefined): DeliveryView {
  const iso = (ms: number | null) => (ms === null ? undefined : new Date(ms).toISOString());
  const url = urlOf(d.endpoint_id);
  return {
    endpointId: d.endpoint_id,
    ...(url !== undefined ? { url } : {}),
    state: d.state,
    attempts: d.attempts,
    ...(d.last_status !== null ? { lastStatus: d.last_status } : {}),
    ...(d.last_error !== null ? { lastError: d.last_error as DeliveryError } : {}),
    ...(d.last_attempt_at !== null ? { lastAttemptAt: iso(d.last_attempt_at) } : {}),
    ...(d.state === 'pending' && d.next_at !== WAITING ? { nextAttemptAt: iso(d.next_at) } : {}),
    ...(d.delivered_at !== null ? { deliveredAt: iso(d.delivered_at) } : {}),
  };
}
