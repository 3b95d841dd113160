import { DurableObject } from 'cloudflare:workers';
import { afterFailure, nextDue, pickDue, type AttemptOutcome, type Head } from './delivery-rules';
import { eventTransport } from './event-transport';
import {
  EVENT_PAGE_SIZE,
  EVENT_RETENTION_MS,
  eventBody,
  newEventProblem,
  PING,
  type DeliveryError,
  type DeliveryState,
  type DeliveryView,
  type EventPage,
  type NewEvent,
} from './event-types';
import { describeError, logLine } from '../log';
import { AlarmRunner } from '../storage/alarm-runner';
import { sendEvent } from './send-event';
import { subscribes } from '../merchants/event-endpoints';

/**
 * A merchant's event log (docs/events.md): one object per merchant, named
 * by its username. The owners of what events are about (the 3DS transaction and token objects)
 * append to it, from their own alarms and retries; it keeps each event for 30 days with one
 * delivery per subscribed endpoint, and delivers them itself, after the answer, from its alarm:
 *
 * - `append` is idempotent by eventId (a retried append adds nothing) and only writes SQLite and
 *   the alarm: it never waits on a delivery;
 * - a delivery is a signed POST; a 2xx within the deadline is delivered, anything else is tried
 *   again with backoff until its retry window (3 days) is over, then it is failed;
 * - per endpoint, a subject's events go in the order they were appended, each once the one before
 *   was delivered or failed; other subjects and endpoints go in parallel, within limits per
 *   endpoint and per object, so one hung endpoint cannot hold every slot (delivery-rules.ts);
 * - one merchant's deliveries never wait for another's: they are other objects.
 */

/** The alarm behind deliveries tried at once: it sends what that try could not. */
const DELIVERY_SAFETY_MS = 2_000;
/** Attempts one run starts at most; the alarm goes on with the rest at once (bounds an alarm's length). */
const MAX_ATTEMPTS_PER_RUN = 200;

interface EventRow extends Record<string, SqlStorageValue> {
  seq: number;
  event_id: string;
  event_type: string;
  subject: string;
  created_at: number;
  body: string;
}

interface DeliveryRow extends Record<string, SqlStorageValue> {
  seq: number;
  endpoint: string;
  state: DeliveryState;
  attempts: number;
  /** Failed attempts in a row since the window started: the backoff's exponent. */
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

export class EventLog extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Deliveries being sent (key → endpoint): the immediate run and the alarm's may overlap. */
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  private readonly inFlight = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  /** Runs of {@link deliverDue} under way (the immediate one, the alarm's). */
  private readonly runs = new Set<Promise<void>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'EventLog');
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), username TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE,
        event_type TEXT NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS deliveries (seq INTEGER NOT NULL, endpoint TEXT NOT NULL, subject TEXT NOT NULL,
        state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0,
        round INTEGER NOT NULL DEFAULT 0, window_start INTEGER NOT NULL, next_at INTEGER NOT NULL,
        last_status INTEGER, last_error TEXT, last_attempt_at INTEGER, delivered_at INTEGER,
        PRIMARY KEY (seq, endpoint));
      CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (state, endpoint, subject, seq)`);
  }

  /**
   * Appends the merchant's events, each with one pending delivery per endpoint that takes its
   * type, and sends them after the answer. An eventId already here is skipped (a retried append,
   * a burst of the same), so an owner may append from its alarm until a call succeeds; an event
   * whose 30 days are over is skipped. Events are kept in the order appended: append a subject's
   * events in the order they happened.
   *
   * @example
   * ```ts
   * await eventLog(env.EVENT_LOG, 'test-merchant', 5_000).append('test-merchant', [
   *   { eventId: 'tok_TN…_v2', eventType: 'tokens.token.updated', subject: 'token:TN…', createdAt: Date.now(), entity: 'default', data: token },
   * ]); // { appended: 1 }, then { appended: 0 } when sent again
   * ```
   */
  async append(username: string, events: NewEvent[]): Promise<{ appended: number }> {
    for (const event of events) {
      const problem = newEventProblem(event);
      if (problem !== undefined) throw new Error(`EventLog.append: ${problem}`);
    }
    const endpoints = eventTransport.endpointsOf(this.env, username);
    const now = eventTransport.now();
    // One synchronous block: the events and their deliveries commit together.
    this.claim(username);
    let appended = 0;
    let deliveries = 0;
    for (const event of events) {
      // Past its 30 days it would be dropped at once (and its id, kept only as long, not recognised).
      if (event.createdAt <= now - EVENT_RETENTION_MS) continue;
      const inserted = this.sql
        .exec<{ seq: number }>(
          `INSERT INTO events (event_id, event_type, subject, created_at, body) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (event_id) DO NOTHING RETURNING seq`,
          ...[event.eventId, event.eventType, event.subject, event.createdAt, JSON.stringify(eventBody(event))],
        )
        .toArray()[0];
      if (inserted === undefined) continue;
      appended++;
      for (const endpoint of endpoints) {
        if (!subscribes(endpoint, event.eventType)) continue;
        this.sql.exec(
          `INSERT INTO deliveries (seq, endpoint, subject, state, window_start, next_at) VALUES (?, ?, ?, 'pending', ?, ?)`,
          ...[inserted.seq, endpoint.url, event.subject, event.createdAt, now],
        );
        deliveries++;
      }
    }
    if (deliveries > 0) await this.deliverSoon();
    // Nothing to send (no endpoint takes them): only the retention's alarm, if none is set yet.
    else if (appended > 0 && (await this.ctx.storage.getAlarm()) === null) await this.schedule();
    return { appended };
  }

  /**
   * The merchant's events of the last 30 days, oldest first, after the event `since` (all of them
   * when it is not here: unknown, or dropped), at most {@link EVENT_PAGE_SIZE}, each with every
   * endpoint's delivery.
   */
  list(username: string, since?: string): EventPage {
    if (!this.owns(username)) return { events: [], hasMore: false };
    const oldest = eventTransport.now() - EVENT_RETENTION_MS;
    const after =
      since === undefined
        ? 0
        : (this.sql.exec<{ seq: number }>('SELECT seq FROM events WHERE event_id = ?', since).toArray()[0]?.seq ?? 0);
    const rows = this.sql
      .exec<EventRow>(
        'SELECT * FROM events WHERE seq > ? AND created_at > ? ORDER BY seq LIMIT ?',
        ...[after, oldest, EVENT_PAGE_SIZE + 1],
      )
      .toArray();
    const page = rows.slice(0, EVENT_PAGE_SIZE);
    const deliveries = new Map<number, DeliveryView[]>();
    if (page.length > 0) {
      for (const d of this.sql.exec<DeliveryRow>(
        'SELECT * FROM deliveries WHERE seq BETWEEN ? AND ? ORDER BY seq, rowid',
        ...[page[0]!.seq, page[page.length - 1]!.seq],
      )) {
        deliveries.set(d.seq, [...(deliveries.get(d.seq) ?? []), deliveryView(d)]);
      }
    }
    return {
      events: page.map((row) => ({
        ...(JSON.parse(row.body) as ReturnType<typeof eventBody>),
        deliveries: deliveries.get(row.seq) ?? [],
      })),
      hasMore: rows.length > EVENT_PAGE_SIZE,
    };
  }

  /**
   * Sends the merchant's event again to each endpoint that takes it now, whatever its state: a new
   * delivery with its own retry window, in the same order as any other (after the earlier events
   * of its subject still pending there). `notFound` for an event not here (another merchant's,
   * unknown, or older than 30 days).
   */
  async redeliver(username: string, eventId: string): Promise<'redelivered' | 'notFound'> {
    if (!this.owns(username)) return 'notFound';
    const now = eventTransport.now();
    const event = this.sql
      .exec<EventRow>('SELECT * FROM events WHERE event_id = ? AND created_at > ?', eventId, now - EVENT_RETENTION_MS)
      .toArray()[0];
    if (!event) return 'notFound';
    for (const endpoint of eventTransport.endpointsOf(this.env, username)) {
      if (!subscribes(endpoint, event.event_type)) continue;
      this.sql.exec(
        `INSERT INTO deliveries (seq, endpoint, subject, state, window_start, next_at) VALUES (?, ?, ?, 'pending', ?, ?)
         ON CONFLICT (seq, endpoint) DO UPDATE SET state = 'pending', round = round + 1, failures = 0,
           window_start = excluded.window_start, next_at = excluded.next_at`,
        ...[event.seq, endpoint.url, event.subject, now, now],
      );
    }
    await this.deliverSoon();
    return 'redelivered';
  }

  /** Appends a `ping` event (subject `ping`), sent to every endpoint of the merchant. */
  async ping(username: string, entity: string): Promise<{ eventId: string }> {
    const eventId = `evt_ping_${crypto.randomUUID().replaceAll('-', '')}`;
    const createdAt = eventTransport.now();
    await this.append(username, [{ eventId, eventType: PING, subject: PING, createdAt, entity, data: {} }]);
    return { eventId };
  }

  /** The alarm: drops events past 30 days, sends what is due, and is set again for what is left. */
  override async alarm(): Promise<void> {
    await this.alarms.run(
      async () => {
        const oldest = eventTransport.now() - EVENT_RETENTION_MS;
        this.sql.exec('DELETE FROM deliveries WHERE seq IN (SELECT seq FROM events WHERE created_at <= ?)', oldest);
        this.sql.exec('DELETE FROM events WHERE created_at <= ?', oldest);
        await this.deliverDue();
      },
      () => this.schedule(),
    );
  }

  /** Resolves once no delivery is in flight (for the tests: the attempts an alarm or an append started are over). */
  async whenIdle(): Promise<void> {
    while (this.runs.size > 0 || this.running.size > 0) await Promise.allSettled([...this.runs, ...this.running]);
  }

  // --- ownership -------------------------------------------------------------------------------

  /** The object's merchant is set by its first append; its name holds the username (clients.ts). */
  private claim(username: string): void {
    this.sql.exec('INSERT OR IGNORE INTO owner (id, username) VALUES (1, ?)', username);
    if (!this.owns(username)) throw new Error("an event log named for one merchant was asked to append another's");
  }

  private owns(username: string): boolean {
    return this.sql.exec('SELECT 1 FROM owner WHERE username = ?', username).toArray().length > 0;
  }

  private owner(): string | undefined {
    return this.sql.exec<{ username: string }>('SELECT username FROM owner').toArray()[0]?.username;
  }

  // --- delivery --------------------------------------------------------------------------------

  /**
   * After an append or a redelivery: the alarm is set a moment ahead as the safety net, and the
   * deliveries are tried at once, after the answer (not awaited). The alarm's setting is a storage
   * write: the answer leaves once it is stored (the output gate), never later.
   */
  private async deliverSoon(): Promise<void> {
    const at = eventTransport.now() + DELIVERY_SAFETY_MS;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
    void this.deliverDue()
      .then(() => this.schedule())
      .catch((e: unknown) => logLine({ level: 'error', event: 'event.deliver', cause: describeError(e) }));
  }

  /** The first pending delivery of each subject to each endpoint: the only ones that may be sent. */
  private heads(): (Head & { seq: number })[] {
    return this.sql
      .exec<{ seq: number; endpoint: string; next_at: number }>(
        `SELECT d.seq, d.endpoint, d.next_at FROM deliveries d JOIN
           (SELECT endpoint, subject, MIN(seq) AS seq FROM deliveries WHERE state = 'pending' GROUP BY endpoint, subject) h
         ON d.seq = h.seq AND d.endpoint = h.endpoint`,
      )
      .toArray()
      .map((r) => ({ key: `${r.seq} ${r.endpoint}`, seq: r.seq, endpoint: r.endpoint, nextAt: r.next_at }));
  }

  /**
   * Sends every head that is due, within the limits, starting the next as each ends (so the next
   * event of a subject follows its predecessor at once); returns once nothing is in flight and
   * nothing more is due, or after {@link MAX_ATTEMPTS_PER_RUN}.
   */
  private deliverDue(): Promise<void> {
    const run: Promise<void> = this.deliverRun().finally(() => this.runs.delete(run));
    this.runs.add(run);
    return run;
  }

  private async deliverRun(): Promise<void> {
    let started = 0;
    for (;;) {
      const due = started < MAX_ATTEMPTS_PER_RUN ? pickDue(this.heads(), this.inFlight, eventTransport.now()) : [];
      for (const head of due.slice(0, MAX_ATTEMPTS_PER_RUN - started)) {
        started++;
        this.inFlight.set(head.key, head.endpoint);
        const attempt: Promise<void> = this.attempt(head.seq, head.endpoint)
          .catch((e: unknown) => logLine({ level: 'error', event: 'event.delivery', cause: describeError(e) }))
          .finally(() => {
            this.inFlight.delete(head.key);
            this.running.delete(attempt);
          });
        this.running.add(attempt);
      }
      if (this.running.size === 0) return;
      await Promise.race(this.running);
    }
  }

  /** One attempt of one delivery; its outcome is recorded on it (never throws for the endpoint's sake). */
  private async attempt(seq: number, endpoint: string): Promise<void> {
    const row = this.sql
      .exec<DeliveryRow & EventRow>(
        `SELECT d.*, e.event_id, e.event_type, e.body FROM deliveries d JOIN events e ON e.seq = d.seq
         WHERE d.seq = ? AND d.endpoint = ? AND d.state = 'pending'`,
        seq,
        endpoint,
      )
      .toArray()[0];
    const username = this.owner();
    if (!row || username === undefined) return;
    const configured = eventTransport.endpointsOf(this.env, username).find((e) => e.url === endpoint);
    if (!configured || !subscribes(configured, row.event_type)) {
      this.record(row, { delivered: false, error: 'endpointRemoved' }, true);
      return;
    }
    let secrets: readonly string[] = [];
    try {
      secrets = eventTransport.secretsOf(this.env, username);
    } catch (e) {
      logLine({ level: 'error', event: 'event.secrets', cause: describeError(e) });
    }
    const outcome: AttemptOutcome =
      secrets.length === 0
        ? { delivered: false, error: 'noSigningSecret' }
        : await sendEvent(endpoint, row.body, secrets);
    this.record(row, outcome);
  }

  /** Records an attempt's outcome on its delivery (unless a redelivery began meanwhile: then only that it was made). */
  private record(row: DeliveryRow & EventRow, outcome: AttemptOutcome, final = false): void {
    const now = eventTransport.now();
    const key = [row.seq, row.endpoint, row.round];
    const status = outcome.status ?? null;
    const error = outcome.delivered ? null : outcome.error;
    this.sql.exec(
      'UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = ?, last_status = ?, last_error = ? WHERE seq = ? AND endpoint = ?',
      ...[now, status, error, row.seq, row.endpoint],
    );
    let state: DeliveryState;
    if (outcome.delivered) {
      state = 'delivered';
      this.sql.exec(
        "UPDATE deliveries SET state = 'delivered', delivered_at = ?, failures = 0 WHERE seq = ? AND endpoint = ? AND round = ?",
        now,
        ...key,
      );
    } else {
      const next = final
        ? ({ state: 'failed' } as const)
        : afterFailure({ windowStart: row.window_start, failures: row.failures + 1 }, now);
      state = next.state;
      this.sql.exec(
        'UPDATE deliveries SET state = ?, failures = failures + 1, next_at = ? WHERE seq = ? AND endpoint = ? AND round = ?',
        ...[next.state, next.state === 'pending' ? next.nextAt : now],
        ...key,
      );
    }
    // The endpoint's origin only: a URL's path or query may hold the merchant's own secret.
    logLine({
      level: outcome.delivered ? 'info' : 'warn',
      event: 'event.delivery',
      eventId: row.event_id,
      eventType: row.event_type,
      endpoint: new URL(row.endpoint).origin,
      attempts: row.attempts + 1,
      state,
      ...(status !== null ? { status } : {}),
      ...(error !== null ? { error } : {}),
    });
  }

  /** The alarm: at the next delivery due, else when the oldest event is to be dropped; none when the log is empty. */
  private async schedule(): Promise<void> {
    const now = eventTransport.now();
    const due = nextDue(this.heads(), this.inFlight, now, eventTransport.timeoutMs);
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(created_at) AS at FROM events').one().at;
    const times = [due, oldest === null ? undefined : oldest + EVENT_RETENTION_MS].filter(
      (t): t is number => t !== undefined,
    );
    if (times.length > 0) await this.ctx.storage.setAlarm(Math.min(...times));
    else await this.ctx.storage.deleteAlarm();
  }
}

function deliveryView(d: DeliveryRow): DeliveryView {
  const iso = (ms: number | null) => (ms === null ? undefined : new Date(ms).toISOString());
  return {
    url: d.endpoint,
    state: d.state,
    attempts: d.attempts,
    ...(d.last_status !== null ? { lastStatus: d.last_status } : {}),
    ...(d.last_error !== null ? { lastError: d.last_error as DeliveryError } : {}),
    ...(d.last_attempt_at !== null ? { lastAttemptAt: iso(d.last_attempt_at) } : {}),
    ...(d.state === 'pending' ? { nextAttemptAt: iso(d.next_at) } : {}),
    ...(d.delivered_at !== null ? { deliveredAt: iso(d.delivered_at) } : {}),
  };
}
