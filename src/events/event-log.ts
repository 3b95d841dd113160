import { DurableObject } from 'cloudflare:workers';
import { settingsOf } from '../config/settings';
import { describeError, logLine } from '../log';
import { AlarmRunner } from '../storage/alarm-runner';
import {
  afterFailure,
  ENDPOINT_FAILING_MS,
  MAX_IN_FLIGHT,
  MAX_IN_FLIGHT_PER_ENDPOINT,
  RETRY_WINDOW_MS,
  type AttemptOutcome,
} from './delivery-rules';
import { shardLinks, type EventLogMethods } from './event-log-api';
import { EndpointTable } from './endpoint-table';
import { endpointUrlProblem, type DisabledReason, type EndpointChange, type NewEndpoint } from './endpoint-rules';
import { audienceText, EventStore, inAudience, type Audience, type SendableRow } from './event-store';
import { eventTransport } from './event-transport';
import type { EndpointReport, EndpointSet, ShardQuery } from './event-shards';
import { EVENT_RETENTION_MS, newEventProblem, PING, type EventView, type NewEvent } from './event-types';
import { sendEvent } from './send-event';

/**
 * A shard of a merchant's event log (docs/events.md): the log is split by subject into
 * `EVENT_LOG_SHARDS` objects (src/events/event-shards.ts), and each owns the events of its
 * subjects: the owners of what events are about (the 3DS transaction and token objects) append to
 * it from their own alarms; it keeps each event for 30 days with one delivery per endpoint that
 * takes it, and delivers them itself, after the answer, from its alarm. Shard 0 (named by the
 * username) also owns the merchant's endpoints: made, changed and rotated through the API, and
 * sent as a whole set to every other shard before the answer (effective at once everywhere; a
 * shard it could not reach gets it from shard 0's alarm, or asks for it before its first append).
 * A shard that meets a `410` or 3 days of failures tells shard 0, which alone disables.
 *
 * - `append` is idempotent by eventId and only writes SQLite and the alarm: it never waits on a delivery;
 * - a delivery is a POST signed the Standard Webhooks way with its endpoint's own secrets; a 2xx
 *   within the deadline is delivered, anything else tried again with backoff and jitter (longer when
 *   the endpoint says `Retry-After`) until its 3 days are over, then it is failed;
 * - an endpoint that answers `410`, or has had no success for 3 days, is disabled: its deliveries
 *   are held until the merchant enables it again, and the merchant's other endpoints are told;
 * - per endpoint, a subject's events go in the order they were appended, each once the one before
 *   ended; other subjects and endpoints go in parallel, within limits per endpoint and per object.
 */

/** The alarm behind deliveries tried at once: it sends what that try could not. */
const DELIVERY_SAFETY_MS = 2_000;
/** Attempts one run starts at most; the alarm goes on with the rest at once (bounds an alarm's length). */
const MAX_ATTEMPTS_PER_RUN = 200;
/** A delivery being sent is not due again before its deadline and this margin (also after a reset). */
const SENDING_MARGIN_MS = 5_000;
/** Shard 0 sends the endpoints again this long after a shard could not take them. */
const COPY_RETRY_MS = 5_000;
/** A shard other than 0 tells shard 0 of a success at most this often per endpoint. */
const SUCCESS_REPORT_MS = 60 * 60 * 1000;

export class EventLog extends DurableObject<Env> implements EventLogMethods {
  private readonly sql: SqlStorage;
  private readonly store: EventStore;
  private readonly endpoints: EndpointTable;
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  /** Deliveries being sent (key → endpoint): the immediate run and the alarm's may overlap. */
  private readonly inFlight = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  /** The one run of {@link deliverDue} under way, if any: every caller shares it. */
  private run: Promise<void> | undefined;
  /** Wakes the run's wait: new work arrived while its attempts are out. */
  private wake: (() => void) | undefined;
  /** When this shard last told shard 0 of a success, per endpoint (kept in memory: a reset only reports again). */
  private readonly successReported = new Map<string, number>();
  /** This object's shard, once its owner row says (see {@link shardIndex}). */
  private shardNo: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'EventLog');
    this.sql = ctx.storage.sql;
    this.store = new EventStore(this.sql);
    this.endpoints = new EndpointTable(this.sql, env);
  }

  // --- events ----------------------------------------------------------------------------------

  /**
   * Appends the merchant's events, each with one delivery per endpoint that takes its type
   * (held for a disabled one), and sends them after the answer. An eventId already here is
   * skipped (a retried append, a burst of the same), so an owner may append from its alarm until a
   * call succeeds; an event whose 30 days are over is skipped. Append a subject's events in the
   * order they happened: that is the order they are sent in, and their `sequence`.
   *
   * @example
   * ```ts
   * await eventLog(env.EVENT_LOG, 'test-merchant', 5_000).append('test-merchant', [
   *   { eventId: 'tok_TN…_v2', eventType: 'tokens.token.updated', subject: 'token:TN…', createdAt: Date.now(), entity: 'default', data: token },
   * ]); // { appended: 1 }, then { appended: 0 } when sent again
   * ```
   */
  async append(username: string, events: NewEvent[], shard = 0): Promise<{ appended: number }> {
    for (const event of events) {
      const problem = newEventProblem(event);
      if (problem !== undefined) throw new Error(`EventLog.append: ${problem}`);
    }
    this.claim(username, shard);
    // A shard that never had the endpoints asks shard 0 first (once in its life): a log from
    // before the split has endpoints its new shards were never sent.
    if (shard !== 0 && this.endpoints.setVersion() === undefined) {
      const set = await this.shard(0).endpointSet(username, shard);
      this.applySet(set);
    }
    const now = eventTransport.now();
    let appended = 0;
    for (const event of events) if (this.add(event, undefined, now)) appended++;
    if (appended > 0) await this.deliverSoon();
    return { appended };
  }

  /** This shard's part of a page of `GET /events` (docs/events.md "Listing"); the caller merges the shards'. */
  page(username: string, query: ShardQuery) {
    if (!this.owns(username)) return { events: [] };
    return this.store.page(query, this.shardIndex(), this.urlOf, eventTransport.now());
  }

  /** Where an event stands here (the cursor of `GET /events`), or undefined for one not here. */
  position(username: string, eventId: string) {
    return this.owns(username) ? this.store.position(eventId, eventTransport.now()) : undefined;
  }

  /** One event with each delivery's last attempts; undefined for one not here (another merchant's, unknown, older than 30 days). */
  event(username: string, eventId: string): EventView | undefined {
    if (!this.owns(username)) return undefined;
    return this.store.view(eventId, this.urlOf, eventTransport.now());
  }

  /**
   * Sends the event again to each endpoint that takes it now, whatever its state: a new round
   * with its own retry window, after the earlier events of its subject still pending there.
   */
  async redeliver(username: string, eventId: string): Promise<'redelivered' | 'notFound'> {
    if (!this.owns(username)) return 'notFound';
    const now = eventTransport.now();
    const event = this.store.event(eventId, now);
    if (!event) return 'notFound';
    for (const { endpointId, state } of this.targets(event.event_type, event.audience))
      this.store.resend(event.seq, endpointId, event.subject, state !== 'enabled', now);
    await this.deliverSoon();
    return 'redelivered';
  }

  // --- endpoints -------------------------------------------------------------------------------

  /** A new endpoint and its secret (shown this once), or `tooMany` when the merchant has its ten. */
  async createEndpoint(username: string, input: NewEndpoint) {
    this.claim(username, 0);
    const created = await this.endpoints.create(username, this.checked(input), eventTransport.now());
    await this.copyToShards();
    return created;
  }

  listEndpoints(username: string) {
    return this.ownsEndpoints(username) ? this.endpoints.list() : [];
  }

  getEndpoint(username: string, endpointId: string) {
    return this.ownsEndpoints(username) ? this.endpoints.get(endpointId) : undefined;
  }

  /** Changes an endpoint; disabling holds its deliveries, enabling sends what was held, in order (in every shard). */
  async updateEndpoint(username: string, endpointId: string, change: EndpointChange) {
    if (!this.ownsEndpoints(username)) return undefined;
    const now = eventTransport.now();
    const updated = this.endpoints.update(endpointId, this.checked(change));
    if (updated?.stateChange === 'disabled') this.store.hold(endpointId);
    if (updated?.stateChange === 'enabled') this.store.release(endpointId, now);
    if (updated) await this.copyToShards();
    if (updated?.stateChange === 'enabled') await this.deliverSoon();
    return updated?.endpoint;
  }

  /** Deletes an endpoint: its deliveries not ended are ended (`endpointRemoved`), in every shard. */
  async deleteEndpoint(username: string, endpointId: string): Promise<boolean> {
    if (!this.ownsEndpoints(username) || !this.endpoints.remove(endpointId)) return false;
    this.store.endAll(endpointId);
    await this.copyToShards();
    return true;
  }

  async rotateSecret(username: string, endpointId: string, previousValidForSeconds?: number) {
    if (!this.ownsEndpoints(username)) return undefined;
    const rotated = await this.endpoints.rotate(username, endpointId, previousValidForSeconds, eventTransport.now());
    if (rotated) await this.copyToShards();
    return rotated;
  }

  /** A `ping` to one endpoint, with a subject of its own, kept in shard 0 (docs/events.md "Ping"). */
  async ping(username: string, endpointId: string, entity: string): Promise<{ eventId: string } | undefined> {
    if (!this.ownsEndpoints(username) || !this.endpoints.get(endpointId)) return undefined;
    const eventId = `evt_ping_${crypto.randomUUID().replaceAll('-', '')}`;
    const now = eventTransport.now();
    const ping: NewEvent = {
      eventId,
      eventType: PING,
      subject: `ping:${eventId}`,
      createdAt: now,
      entity,
      data: { endpointId },
    };
    this.add(ping, { only: endpointId }, now);
    await this.deliverSoon();
    return { eventId };
  }

  /** Shard 0: the set of endpoints, for a shard that never had it (it has it now). */
  endpointSet(username: string, shard: number): EndpointSet {
    // Named by the username: shard 0 of this merchant, though it may have nothing yet.
    this.claim(username, 0);
    const set = this.endpoints.copy();
    this.endpoints.copied(shard, set.version);
    return set;
  }

  /** Another shard: shard 0's set of endpoints, taken unless the copy here is as new. */
  async syncEndpoints(username: string, shard: number, set: EndpointSet): Promise<void> {
    if (shard === 0) throw new Error('EventLog.syncEndpoints: shard 0 owns the endpoints');
    this.claim(username, shard);
    if (this.applySet(set)) await this.deliverSoon();
  }

  /**
   * Shard 0: what another shard met at an endpoint. `gone` disables it; `failing` (3 days there)
   * disables it unless a success is known since; `delivered` is such a success. Answers the last
   * success known, from which the shard counts its failures again.
   */
  async reportEndpoint(username: string, endpointId: string, report: EndpointReport) {
    if (!this.ownsEndpoints(username)) throw new Error('EventLog.reportEndpoint: not shard 0 of this merchant');
    const now = eventTransport.now();
    if (report.kind === 'delivered') this.endpoints.delivered(endpointId, report.at);
    else if (report.kind === 'gone' || this.failingLongEnough(endpointId, report.since, now))
      await this.disable(endpointId, report.kind, now);
    const lastSuccessAt = this.endpoints.lastSuccessAt(endpointId);
    return lastSuccessAt !== undefined ? { lastSuccessAt } : {};
  }

  /**
   * Queues again to an endpoint every event since `since` that did not reach it, in order per
   * subject; returns how many, or undefined for an endpoint not here.
   */
  async recover(username: string, endpointId: string, since: number): Promise<{ queued: number } | undefined> {
    const endpoint = this.owns(username) ? this.endpoints.get(endpointId) : undefined;
    if (!endpoint) return undefined;
    // The endpoint as shard 0 last sent it (a shard not yet sent it has none of its events to recover).
    const now = eventTransport.now();
    const queued = this.store.recover(endpointId, endpoint.events, since, endpoint.state !== 'enabled', now);
    if (queued > 0) await this.deliverSoon();
    return { queued };
  }

  /** The alarm: drops events past 30 days, sends what is due, and is set again for what is left. */
  override async alarm(): Promise<void> {
    await this.alarms.run(
      async () => {
        this.store.prune(eventTransport.now());
        if (this.shardIndex() === 0) await this.copyToShards();
        await this.deliverDue();
      },
      () => this.schedule(),
    );
  }

  /** Resolves once no delivery is in flight (for the tests: the attempts an alarm or an append started are over). */
  async whenIdle(): Promise<void> {
    while (this.run !== undefined || this.running.size > 0)
      await Promise.allSettled([...(this.run ? [this.run] : []), ...this.running]);
  }

  // --- ownership -------------------------------------------------------------------------------

  /** The object's merchant and shard are set by its first write; its name holds both (event-shards.ts). */
  private claim(username: string, shard: number): void {
    this.sql.exec('INSERT OR IGNORE INTO owner (id, username, shard) VALUES (1, ?, ?)', username, shard);
    if (!this.owns(username) || this.shardIndex() !== shard)
      throw new Error("an event log shard named for one merchant and shard was asked to write another's");
  }

  /** Shard 0 of this merchant: the owner of its endpoints. */
  private ownsEndpoints(username: string): boolean {
    return this.owns(username) && this.shardIndex() === 0;
  }

  /** This object's shard: set by its first write and never changed, so read once (it is on every delivery's path). */
  private shardIndex(): number {
    this.shardNo ??= this.sql.exec<{ shard: number }>('SELECT shard FROM owner').toArray()[0]?.shard;
    return this.shardNo ?? 0;
  }

  private shard(index: number) {
    return shardLinks.shard(this.env, this.owner()!, index, settingsOf(this.env).storageTimeoutMs);
  }

  private owns(username: string): boolean {
    return this.sql.exec('SELECT 1 FROM owner WHERE username = ?', username).toArray().length > 0;
  }

  private owner(): string | undefined {
    return this.sql.exec<{ username: string }>('SELECT username FROM owner').toArray()[0]?.username;
  }

  /** The Worker validated it; in `live` the URL rules are checked again where it is stored. */
  private checked<T extends { url?: string }>(input: T): T {
    const live = settingsOf(this.env).environment === 'live';
    if (input.url !== undefined && endpointUrlProblem(input.url, live) !== undefined)
      throw new Error('EventLog: an endpoint URL the rules refuse');
    return input;
  }

  private readonly urlOf = (endpointId: string): string | undefined => this.endpoints.get(endpointId)?.url;

  // --- the endpoints' copies ---------------------------------------------------------------------

  /**
   * Shard 0, after each change of the endpoints (and from its alarm): sends the set to every shard
   * that has an older one, at once, and waits for them. A shard it cannot reach gets it from the
   * alarm, a moment later; the change itself is made, and answered, either way.
   */
  private async copyToShards(): Promise<void> {
    const username = this.owner();
    const shards = settingsOf(this.env).eventLogShards;
    // No change yet (none made, or a log from before the split): the shards ask for it instead.
    if (username === undefined || shards <= 1 || this.endpoints.setVersion() === undefined) return;
    const set = this.endpoints.copy();
    const behind = this.shardsBehind(set.version);
    const sent = await Promise.allSettled(behind.map((i) => this.shard(i).syncEndpoints(username, i, set)));
    let missed = 0;
    sent.forEach((r, k) => {
      if (r.status === 'fulfilled') this.endpoints.copied(behind[k]!, set.version);
      else {
        missed++;
        logLine({ level: 'warn', event: 'event.endpoints.copy', shard: behind[k], cause: describeError(r.reason) });
      }
    });
    if (missed > 0) await this.alarmBy(eventTransport.now() + COPY_RETRY_MS);
  }

  /** Takes shard 0's set here; true when deliveries were released (to be sent). */
  private applySet(set: EndpointSet): boolean {
    const change = this.endpoints.replace(set);
    if (!change) return false;
    const now = eventTransport.now();
    for (const id of change.removed) this.store.endAll(id);
    for (const id of change.disabled) this.store.hold(id);
    for (const id of change.enabled) this.store.release(id, now);
    return change.enabled.length > 0;
  }

  /** Shard 0: an endpoint failing since `since` (in some shard) with no success known for 3 days. */
  private failingLongEnough(endpointId: string, since: number, now: number): boolean {
    const lastSuccess = this.endpoints.lastSuccessAt(endpointId) ?? -Infinity;
    return now - since >= ENDPOINT_FAILING_MS && now - lastSuccess >= ENDPOINT_FAILING_MS;
  }

  /**
   * Tells shard 0 what this shard met at an endpoint (shard 0 acts on it itself); a report that
   * fails is made again at the next attempt's outcome. Never throws.
   */
  private async report(endpointId: string, report: EndpointReport): Promise<void> {
    const username = this.owner()!;
    try {
      const answer = await this.shard(0).reportEndpoint(username, endpointId, report);
      if (report.kind === 'delivered') this.successReported.set(endpointId, report.at);
      if (answer.lastSuccessAt !== undefined) this.endpoints.failingNoEarlierThan(endpointId, answer.lastSuccessAt);
    } catch (e) {
      logLine({ level: 'warn', event: 'event.endpoint.report', endpointId, cause: describeError(e) });
    }
  }

  /** One event and its deliveries, in one synchronous block; false when it was here already or is too old. */
  private add(event: NewEvent, audience: Audience, now: number): boolean {
    if (event.createdAt <= now - EVENT_RETENTION_MS) return false;
    const seq = this.store.addEvent(event, audience, now);
    if (seq === undefined) return false;
    for (const { endpointId, state } of this.targets(event.eventType, audienceText(audience)))
      this.store.addDelivery(seq, endpointId, event.subject, state !== 'enabled', now);
    return true;
  }

  /** The endpoints an event goes to: the one it was made for (a ping), or those that take its type (all but one). */
  private targets(eventType: string, audience: string | null): { endpointId: string; state: string }[] {
    if (audience?.startsWith('only:')) {
      const endpoint = this.endpoints.get(audience.slice('only:'.length));
      return endpoint ? [endpoint] : [];
    }
    return this.endpoints.subscribers(eventType).filter((e) => inAudience(audience, e.endpointId));
  }

  // --- delivery --------------------------------------------------------------------------------

  /**
   * After a change that made deliveries due: the alarm is set a moment ahead as the safety net,
   * and they are tried at once, after the answer (not awaited). The alarm's setting is a storage
   * write: the answer leaves once it is stored (the output gate), never later.
   */
  private async deliverSoon(): Promise<void> {
    await this.alarmBy(eventTransport.now() + DELIVERY_SAFETY_MS);
    void this.deliverDue()
      .then(() => this.schedule())
      .catch((e: unknown) => logLine({ level: 'error', event: 'event.deliver', cause: describeError(e) }));
  }

  /** The alarm at `at` at the latest. */
  private async alarmBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /**
   * One delivery loop per object: a call while one runs wakes it (to look for what is due now)
   * and shares it, so appends in a burst never stack loops that each wake on every attempt.
   */
  private deliverDue(): Promise<void> {
    if (this.run !== undefined) {
      this.wake?.();
      return this.run;
    }
    const run = this.deliverRun().finally(() => {
      if (this.run === run) this.run = undefined;
    });
    this.run = run;
    return run;
  }

  /**
   * Sends what is due, each endpoint within its share of the slots, starting the next as each
   * ends (so the next event of a subject follows its predecessor at once); returns once nothing is
   * in flight and nothing more is due, or once it started {@link MAX_ATTEMPTS_PER_RUN} (its
   * attempts still out finish by themselves; the alarm, set for what is due, goes on).
   */
  private async deliverRun(): Promise<void> {
    let started = 0;
    for (;;) {
      const now = eventTransport.now();
      for (const endpoint of this.endpoints.list()) {
        if (endpoint.state !== 'enabled') continue;
        const busy = [...this.inFlight.values()].filter((e) => e === endpoint.endpointId).length;
        const room = Math.min(
          MAX_IN_FLIGHT_PER_ENDPOINT - busy,
          MAX_IN_FLIGHT - this.inFlight.size,
          MAX_ATTEMPTS_PER_RUN - started,
        );
        for (const { seq, endpointId } of this.store.due(endpoint.endpointId, now, room)) {
          const key = `${seq} ${endpointId}`;
          if (this.inFlight.has(key)) continue;
          started++;
          this.inFlight.set(key, endpointId);
          const attempt: Promise<void> = this.attempt(seq, endpointId)
            .catch((e: unknown) => logLine({ level: 'error', event: 'event.delivery', cause: describeError(e) }))
            .finally(() => {
              this.inFlight.delete(key);
              this.running.delete(attempt);
            });
          this.running.add(attempt);
        }
      }
      if (this.running.size === 0 || started >= MAX_ATTEMPTS_PER_RUN) return;
      const woken = new Promise<void>((resolve) => (this.wake = resolve));
      await Promise.race([...this.running, woken]);
      this.wake = undefined;
    }
  }

  /**
   * One attempt of one delivery: the delivery and its endpoint read in one synchronous block (one
   * version of the endpoint: its URL and secrets), marked as being sent, sent, and its outcome
   * recorded. Never throws for the endpoint's sake.
   */
  private async attempt(seq: number, endpointId: string): Promise<void> {
    const username = this.owner();
    const row = this.store.sendable(seq, endpointId);
    const now = eventTransport.now();
    const endpoint = row && username !== undefined ? this.endpoints.sending(username, endpointId, now) : undefined;
    if (!row || !endpoint) return;
    this.store.sending(row, now + eventTransport.timeoutMs + SENDING_MARGIN_MS);
    let keys: CryptoKey[];
    try {
      keys = await endpoint.keys;
    } catch (e) {
      // The token keys that seal the secret are missing or broken: the Worker is misconfigured. The
      // delivery waits a minute at a time, within its 3 days (then it fails: `recover` resends it).
      logLine({ level: 'error', event: 'event.secrets', cause: describeError(e) });
      const at = eventTransport.now();
      if (at - row.window_start >= RETRY_WINDOW_MS) this.store.failed(row, at);
      else this.store.retryAt(row, at + 60_000);
      return;
    }
    const outcome = await sendEvent(endpoint.endpoint.url, row.event_id, row.body, keys);
    await this.record(row, endpoint.endpoint.version, outcome);
  }

  /**
   * Records an attempt's outcome on its delivery and its endpoint's health. A `410`, or 3 days
   * of failures here, disables the endpoint: shard 0 does it, another shard asks shard 0 (whose
   * new set then holds the deliveries here); meanwhile the delivery goes on with its backoff.
   */
  private async record(row: SendableRow, version: number, outcome: AttemptOutcome): Promise<void> {
    const now = eventTransport.now();
    const status = outcome.status;
    const error = outcome.delivered ? undefined : outcome.error;
    const current = this.store.attempted(row, version, {
      at: now,
      ...(status !== undefined ? { status } : {}),
      ...(error !== undefined ? { error } : {}),
      durationMs: outcome.durationMs ?? 0,
    });
    let state: string = 'stale';
    if (outcome.delivered) {
      this.endpoints.health(row.endpoint_id, true, now);
      if (current) this.store.delivered(row, now);
      state = 'delivered';
    } else if (current) {
      const failingSince = this.endpoints.health(row.endpoint_id, false, now) ?? now;
      const report: EndpointReport | undefined =
        status === 410
          ? { kind: 'gone' }
          : now - failingSince >= ENDPOINT_FAILING_MS
            ? { kind: 'failing', since: failingSince }
            : undefined;
      if (
        report &&
        this.shardIndex() === 0 &&
        (report.kind === 'gone' || this.failingLongEnough(row.endpoint_id, failingSince, now))
      ) {
        // Disabled here: the delivery is held with the endpoint's others, not failed.
        await this.disable(row.endpoint_id, report.kind, now);
        state = 'held';
      } else {
        // Another shard asks shard 0 first: once disabled, shard 0's new set has held it here.
        if (report && this.shardIndex() !== 0) await this.report(row.endpoint_id, report);
        const next = afterFailure(
          { windowStart: row.window_start, failures: row.failures + 1, retryAfterMs: outcome.retryAfterMs },
          now,
          eventTransport.random(),
        );
        if (next.state === 'failed') this.store.failed(row, now);
        else this.store.retryAt(row, next.nextAt);
        state = next.state;
      }
    }
    if (outcome.delivered && this.shardIndex() !== 0) {
      const reported = this.successReported.get(row.endpoint_id);
      if (reported === undefined || now - reported >= SUCCESS_REPORT_MS)
        await this.report(row.endpoint_id, { kind: 'delivered', at: now });
    }
    const url = this.endpoints.get(row.endpoint_id)?.url;
    // The endpoint's origin only: a URL's path or query may hold the merchant's own secret.
    logLine({
      level: outcome.delivered ? 'info' : 'warn',
      event: 'event.delivery',
      eventId: row.event_id,
      eventType: row.event_type,
      endpointId: row.endpoint_id,
      ...(url !== undefined ? { endpoint: new URL(url).origin } : {}),
      attempts: row.attempts + 1,
      state,
      ...(status !== undefined ? { status } : {}),
      ...(error !== undefined ? { error } : {}),
    });
  }

  /**
   * Shard 0: disables an endpoint for the log's own reason: its deliveries are held (here, and in
   * the other shards once they have the new set), and the merchant's other endpoints get an
   * `events.endpoint.disabled` event (one per disabling).
   */
  private async disable(endpointId: string, reason: DisabledReason, now: number): Promise<void> {
    if (!this.endpoints.disable(endpointId, reason)) return;
    this.store.hold(endpointId);
    const endpoint = this.endpoints.get(endpointId)!;
    const event: NewEvent = {
      eventId: `evt_disabled_${endpointId}_${now}`,
      eventType: 'events.endpoint.disabled',
      subject: `endpoint:${endpointId}`,
      createdAt: now,
      entity: '',
      data: { endpointId, url: endpoint.url, disabledReason: reason },
    };
    this.add(event, { except: endpointId }, now);
    logLine({
      level: 'warn',
      event: 'event.endpoint.disabled',
      endpointId,
      reason,
      endpoint: new URL(endpoint.url).origin,
    });
    await this.copyToShards();
    await this.deliverSoon();
  }

  /** Shard 0: the other shards that have not taken the set at `version` (none before the first change). */
  private shardsBehind(version = this.endpoints.setVersion()): number[] {
    if (version === undefined) return [];
    const shards = settingsOf(this.env).eventLogShards;
    return Array.from({ length: shards - 1 }, (_, i) => i + 1).filter((i) => this.endpoints.copyVersion(i) < version);
  }

  /** The alarm: at the next delivery due, else when the oldest event is to be dropped; none when the log is empty. */
  private async schedule(): Promise<void> {
    const times = this.endpoints
      .list()
      .filter((e) => e.state === 'enabled')
      .map((e) => this.store.nextDue(e.endpointId));
    times.push(this.store.nextExpiry());
    if (this.shardIndex() === 0 && this.shardsBehind().length > 0) times.push(eventTransport.now() + COPY_RETRY_MS);
    const defined = times.filter((t): t is number => t !== undefined);
    if (defined.length > 0) await this.ctx.storage.setAlarm(Math.min(...defined));
    else await this.ctx.storage.deleteAlarm();
  }
}
