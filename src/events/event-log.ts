import { DurableObject } from 'cloudflare:workers';
import { settingsOf } from '../config/settings';
import { describeError, logLine } from '../log';
import { SchemaVersion } from '../storage/schema-version';
import { AlarmRunner } from '../storage/alarm-runner';
import { DeliveryAttempts } from './delivery-attempt';
import { DeliveryLoop } from './delivery-loop';
import { shardLinks, type EventLogMethods } from './event-log-api';
import { COPY_RETRY_MS, EndpointCopies } from './endpoint-copies';
import { EndpointHealth } from './endpoint-health';
import { EndpointTable } from './endpoint-table';
import { endpointUrlProblem, type EndpointChange, type NewEndpoint } from './endpoint-rules';
import { audienceText, EventStore, inAudience, type Audience } from './event-store';
import { eventTransport } from './event-transport';
import type { EndpointReport, EndpointSet, ShardQuery } from './event-shards';
import { EVENT_RETENTION_MS, newEventProblem, PING, type EventView, type NewEvent } from './event-types';

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
 *
 * The class is the RPC surface; it is split by what it decides: the endpoints (endpoint-table.ts)
 * and their copies in the other shards (endpoint-copies.ts), the events and their deliveries
 * (event-store.ts), which deliveries are sent now (delivery-loop.ts), one attempt and its outcome
 * (delivery-attempt.ts), and when an endpoint is disabled (endpoint-health.ts).
 */

/** The alarm behind deliveries tried at once: it sends what that try could not. */
const DELIVERY_SAFETY_MS = 2_000;

/**
 * The version of the log's tables (src/storage/schema-version.ts): raise it with every change to
 * them, and keep the upgrade of the older layouts in EventStore's and EndpointTable's createTables.
 */
export const EVENT_LOG_TABLES_VERSION = 1;

export class EventLog extends DurableObject<Env> implements EventLogMethods {
  private readonly sql: SqlStorage;
  private readonly store: EventStore;
  private readonly endpoints: EndpointTable;
  /** The alarm's runner: never dropped after a failure, never spinning (src/storage/alarm-runner.ts). */
  private readonly alarms: AlarmRunner;
  private readonly copies: EndpointCopies;
  private readonly health: EndpointHealth;
  private readonly loop: DeliveryLoop;
  /** This object's shard, once its owner row says (see {@link shardIndex}). */
  private shardNo: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.alarms = new AlarmRunner(ctx, 'EventLog');
    this.sql = ctx.storage.sql;
    this.store = new EventStore(this.sql);
    this.endpoints = new EndpointTable(this.sql, env);
    // One row says which version of its tables the log has (src/storage/schema-version.ts): a start
    // reads it, and creates or upgrades the tables only when they are not current.
    const tables = new SchemaVersion(this.sql, EVENT_LOG_TABLES_VERSION, 'events');
    if (tables.found() !== 'current') {
      this.store.createTables();
      this.endpoints.createTables();
      tables.record();
    }
    const self = { owner: () => this.owner(), shard: (index: number) => this.shard(index) };
    this.copies = new EndpointCopies(env, this.endpoints, this.store, { ...self, alarmBy: (at) => this.alarmBy(at) });
    this.health = new EndpointHealth(this.endpoints, this.store, {
      ...self,
      add: (event, audience, now) => this.add(event, audience, now),
      copyToShards: () => this.copies.copyToShards(),
      deliverSoon: () => this.deliverSoon(),
    });
    const attempts = new DeliveryAttempts(this.endpoints, this.store, this.health, {
      owner: () => this.owner(),
      shardIndex: () => this.shardIndex(),
    });
    this.loop = new DeliveryLoop(this.endpoints, this.store, (seq, endpointId) => attempts.attempt(seq, endpointId));
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
      this.copies.take(set);
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
    await this.copies.copyToShards();
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
    if (updated) await this.copies.copyToShards();
    if (updated?.stateChange === 'enabled') await this.deliverSoon();
    return updated?.endpoint;
  }

  /** Deletes an endpoint: its deliveries not ended are ended (`endpointRemoved`), in every shard. */
  async deleteEndpoint(username: string, endpointId: string): Promise<boolean> {
    if (!this.ownsEndpoints(username) || !this.endpoints.remove(endpointId)) return false;
    this.store.endAll(endpointId);
    await this.copies.copyToShards();
    return true;
  }

  async rotateSecret(username: string, endpointId: string, previousValidForSeconds?: number) {
    if (!this.ownsEndpoints(username)) return undefined;
    const rotated = await this.endpoints.rotate(username, endpointId, previousValidForSeconds, eventTransport.now());
    if (rotated) await this.copies.copyToShards();
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
    if (this.copies.take(set)) await this.deliverSoon();
  }

  /**
   * Shard 0: what another shard met at an endpoint. `gone` disables it; `failing` (3 days there)
   * disables it unless a success is known since; `delivered` is such a success. Answers the last
   * success known, from which the shard counts its failures again.
   */
  async reportEndpoint(username: string, endpointId: string, report: EndpointReport) {
    if (!this.ownsEndpoints(username)) throw new Error('EventLog.reportEndpoint: not shard 0 of this merchant');
    return this.health.reported(endpointId, report, eventTransport.now());
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
        if (this.shardIndex() === 0) await this.copies.copyToShards();
        await this.loop.deliverDue();
      },
      () => this.schedule(),
    );
  }

  /** Resolves once no delivery is in flight (for the tests: the attempts an alarm or an append started are over). */
  whenIdle(): Promise<void> {
    return this.loop.whenIdle();
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
    void this.loop
      .deliverDue()
      .then(() => this.schedule())
      .catch((e: unknown) => logLine({ level: 'error', event: 'event.deliver', cause: describeError(e) }));
  }

  /** The alarm at `at` at the latest. */
  private async alarmBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /** The alarm: at the next delivery due, else when the oldest event is to be dropped; none when the log is empty. */
  private async schedule(): Promise<void> {
    const times = this.endpoints
      .list()
      .filter((e) => e.state === 'enabled')
      .map((e) => this.store.nextDue(e.endpointId));
    times.push(this.store.nextExpiry());
    if (this.shardIndex() === 0 && this.copies.shardsBehind().length > 0)
      times.push(eventTransport.now() + COPY_RETRY_MS);
    const defined = times.filter((t): t is number => t !== undefined);
    if (defined.length > 0) await this.ctx.storage.setAlarm(Math.min(...defined));
    else await this.ctx.storage.deleteAlarm();
  }
}
