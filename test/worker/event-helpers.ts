import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { Webhook } from 'standardwebhooks';
import type { DeliveryView, EventBody, NewEvent, SubscribableEventType } from '../../src/events/event-types';
import { eventTransport } from '../../src/events/event-transport';
import type { EndpointView, Subscription } from '../../src/events/endpoint-rules';
import { eventLogShard, eventSink, merchantEventLog, type EventLogApi } from '../../src/events/event-log-api';
import type { EventPage, EventQuery } from '../../src/events/event-types';
import { settingsOf } from '../../src/config/settings';
import { shardName } from '../../src/events/event-shards';
import type { EventLog } from '../../src/events/event-log';

/**
 * The events in the Worker tests (docs/events.md): the objects run in the tests' isolate, so the
 * `eventTransport` seam puts an in-test receiver where the network would be, a clock the tests
 * move forward (retries and the retry window without waiting), and per-test merchants with their
 * own endpoints, made through their EventLog as the API makes them. The receiver checks every
 * request it gets with the `standardwebhooks` library, as a merchant's receiver would.
 */

const DEFAULT_TRANSPORT = { ...eventTransport };

/** The objects' appends to the merchants' event logs as the service has them. */
export const DEFAULT_SINK = { ...eventSink };

/** Puts the event log's seam back (call it in `afterEach` after {@link failingAppends}). */
export function restoreSink(): void {
  Object.assign(eventSink, DEFAULT_SINK);
}

/**
 * Makes the objects' first `times` appends to the event log fail, then lets them through:
 * `refused` (they throw), `hang` (they never answer), or `late` (they land, and their answer is
 * lost). `faults` counts those failed so far.
 */
export function failingAppends(how: 'refused' | 'hang' | 'late', times = 1): { readonly faults: number } {
  const counter = { faults: 0 };
  eventSink.append = async (e, username, events) => {
    if (counter.faults >= times) return DEFAULT_SINK.append(e, username, events);
    counter.faults++;
    if (how === 'refused') throw new Error(`refused ${counter.faults}`);
    if (how === 'hang') return new Promise(() => {});
    await DEFAULT_SINK.append(e, username, events);
    throw new Error('the answer was lost');
  };
  return counter;
}

/** The test merchant's endpoint in the tests that give it one. */
export const TEST_ENDPOINT = 'https://events.merchant.test/hooks';

/**
 * An in-test receiver at a new endpoint of the local test merchant, for every event type (its log
 * has none otherwise); the endpoint is deleted again by {@link restoreTransport}.
 */
export async function receivingAtTestEndpoint(url = TEST_ENDPOINT): Promise<Receiver> {
  const receiver = new Receiver();
  eventTransport.fetch = receiver.fetch;
  const log = eventLogShard(env.EVENT_LOG, 'test-merchant', 0, 5_000);
  const created = await log.createEndpoint('test-merchant', { url, events: 'all' });
  if (created === 'tooMany') throw new Error('the test merchant has 10 endpoints: a test did not restore the seam');
  receiver.secrets.set(url, [created.secret]);
  testEndpoints.push(created.endpoint.endpointId);
  return receiver;
}

const testEndpoints: string[] = [];

/** Puts the seam back and deletes the test merchant's endpoints a test made (call it in `afterEach`). */
export async function restoreTransport(): Promise<void> {
  Object.assign(eventTransport, DEFAULT_TRANSPORT);
  const log = eventLogShard(env.EVENT_LOG, 'test-merchant', 0, 5_000);
  for (const endpointId of testEndpoints.splice(0)) await log.deleteEndpoint('test-merchant', endpointId);
}

/** One request an endpoint received. */
export interface Received {
  url: string;
  method: string;
  redirect: string;
  headers: Headers;
  body: string;
  /** The body as sent, its data of whatever shape the test reads. */
  event: Omit<EventBody, 'data'> & { data: any };
  /** Which of the secrets known for its URL its `webhook-signature` verifies with (standardwebhooks). */
  verifiedWith: string[];
}

type Answer = Response | Promise<Response>;

/**
 * Every endpoint in one: records each request (in order of arrival) and answers it as `answer`
 * says (200 by default); a pending answer is a receiver that hangs, or answers late.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** The secrets of each endpoint URL, as the merchant keeps them: each request is checked with them. */
  readonly secrets = new Map<string, string[]>();

  constructor(public answer: (r: Received) => Answer = () => new Response('ok')) {}

  readonly fetch = async (request: Request): Promise<Response> => {
    const body = await request.text();
    const r: Received = {
      url: request.url,
      method: request.method,
      redirect: request.redirect,
      headers: request.headers,
      body,
      event: JSON.parse(body),
      verifiedWith: (this.secrets.get(request.url) ?? []).filter((secret) => signedWith(request.headers, body, secret)),
    };
    this.received.push(r);
    return this.answer(r);
  };

  /** The events an endpoint received, by eventId, in order. */
  idsAt(url: string): string[] {
    return this.received.filter((r) => r.url === url).map((r) => r.event.eventId);
  }

  /**
   * Resolves once the requests received satisfy `predicate`. It looks again every few milliseconds
   * rather than being resolved by the receiver: the receiver runs in the object's request context,
   * and a promise of the test's context resolved from there may never wake the test up.
   */
  async until(predicate: (received: Received[]) => boolean): Promise<void> {
    while (!predicate(this.received)) await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The `threeDS.authentication.completed` events of one transaction that the test endpoint received. */
export function completedEvents(receiver: Receiver, transactionReference: string): Received['event'][] {
  return receiver.received
    .filter((r) => r.url === TEST_ENDPOINT && r.event.eventType === 'threeDS.authentication.completed')
    .map((r) => r.event)
    .filter((e) => e.data?.transactionReference === transactionReference);
}

/**
 * The outcomes of a transaction's completed events, once one has arrived and `owner` (the
 * transaction's object) has none left to send: a second event, were there one, would be among them.
 */
export async function settledOutcomes(
  receiver: Receiver,
  transactionReference: string,
  owner: DurableObjectStub,
): Promise<string[]> {
  await receiver.until(() => completedEvents(receiver, transactionReference).length > 0);
  await settledOwner(owner);
  return completedEvents(receiver, transactionReference).map((e) => e.data.outcome as string);
}

/** A clock for the objects, a day ahead of the machine's: no alarm they set fires by itself during a test. */
export class Clock {
  now = Date.now() + 24 * 60 * 60 * 1000;
  advance(ms: number): void {
    this.now += ms;
  }
}

export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/**
 * Whether a request's Standard Webhooks signature verifies with a secret, through the
 * `standardwebhooks` library: its `sign` for the request's own id and timestamp must be one of the
 * header's signatures. (Its `verify` also checks the timestamp against the machine's clock, which
 * the objects' test clock runs a day ahead of; the served tests use `verify` itself.)
 */
export function signedWith(headers: Headers, body: string, secret: string): boolean {
  const id = headers.get('webhook-id');
  const timestamp = Number(headers.get('webhook-timestamp'));
  const signatures = (headers.get('webhook-signature') ?? '').split(' ');
  if (id === null || !Number.isInteger(timestamp)) return false;
  return signatures.includes(new Webhook(secret).sign(id, new Date(timestamp * 1000), body));
}

/** A merchant's endpoint in a test: what the API showed, and its secret. */
export type TestEndpoint = EndpointView & { secret: string };

/**
 * A merchant of one test, with its own EventLog and the endpoints given, made through the log as
 * the API makes them (their secrets given to the receiver); the seam pointed at `receiver` and
 * `clock`, and the jitter at its top (retries at the full backoff, so that times can be asserted).
 */
export async function testMerchant(
  receiver: Receiver,
  clock: Clock,
  endpoints: { url: string; events?: Subscription }[] = [{ url: 'https://a.merchant.test/hooks' }],
) {
  const username = `events-${crypto.randomUUID()}`;
  eventTransport.fetch = (request) => receiver.fetch(request);
  eventTransport.now = () => clock.now;
  eventTransport.random = () => 1;
  const object = env.EVENT_LOG.get(env.EVENT_LOG.idFromName(username));
  const stub = logStub(object);
  const made: TestEndpoint[] = [];
  for (const { url, events = 'all' } of endpoints) {
    const created = await stub.createEndpoint(username, { url, events: events as 'all' | SubscribableEventType[] });
    if (created === 'tooMany') throw new Error('more than 10 endpoints');
    receiver.secrets.set(url, [...(receiver.secrets.get(url) ?? []), created.secret]);
    made.push({ ...created.endpoint, secret: created.secret });
  }
  const idOf = (url: string): string => made.find((e) => e.url === url)!.endpointId;
  return { username, object, stub, endpoints: made, idOf };
}

let counter = 0;

/** An event to append (a new eventId each time unless given). */
export function newEvent(clock: Clock, over: Partial<NewEvent> = {}): NewEvent {
  counter++;
  return {
    eventId: `evt_${crypto.randomUUID().slice(0, 8)}_${counter}`,
    eventType: 'tokens.token.updated',
    subject: `token:${counter}`,
    createdAt: clock.now,
    entity: 'default',
    data: { tokenId: `TN${counter}`, paymentInstrument: { cardNumber: '444433******1111' } },
    ...over,
  };
}

/**
 * An EventLog's stub, typed as its callers see it (the runtime's RPC types lose `data`'s
 * unknowns), and `list`: the merchant's events over all its shards, as `GET /events` lists them.
 */
export type LogStub = EventLogApi & {
  whenIdle(): Promise<void>;
  list(username: string, query?: EventQuery): Promise<EventPage>;
  raw: DurableObjectStub<EventLog>;
};

export function logStub(object: DurableObjectStub<EventLog>): LogStub {
  const api = object as unknown as EventLogApi & { whenIdle(): Promise<void> };
  return {
    append: (...args) => api.append(...args),
    list: (username, query = {}) => merchantEventLog(env, username, 5_000).list(query),
    page: (...args) => api.page(...args),
    position: (...args) => api.position(...args),
    endpointSet: (...args) => api.endpointSet(...args),
    reportEndpoint: (...args) => api.reportEndpoint(...args),
    syncEndpoints: (...args) => api.syncEndpoints(...args),
    event: (...args) => api.event(...args),
    redeliver: (...args) => api.redeliver(...args),
    createEndpoint: (...args) => api.createEndpoint(...args),
    listEndpoints: (...args) => api.listEndpoints(...args),
    getEndpoint: (...args) => api.getEndpoint(...args),
    updateEndpoint: (...args) => api.updateEndpoint(...args),
    deleteEndpoint: (...args) => api.deleteEndpoint(...args),
    rotateSecret: (...args) => api.rotateSecret(...args),
    ping: (...args) => api.ping(...args),
    recover: (...args) => api.recover(...args),
    whenIdle: () => api.whenIdle(),
    raw: object,
  };
}

/**
 * Lets held answers of a receiver go, from inside the object that waits for them: an attempt goes
 * on where its answer was resolved, and an object's storage can be used only from its own context.
 */
export async function releaseInside(stub: LogStub, releases: (() => void)[]): Promise<void> {
  await runInDurableObject(stub.raw, () => {
    for (const release of releases.splice(0)) release();
  });
}

/** Runs the object's alarm, then waits until no delivery is in flight. */
export async function runAlarm(stub: LogStub) {
  await runDurableObjectAlarm(stub.raw);
  await stub.whenIdle();
}

/** The deliveries of an event, by endpoint URL (by endpointId for one deleted since). */
export async function deliveriesOf(
  stub: LogStub,
  username: string,
  eventId: string,
): Promise<Record<string, DeliveryView>> {
  const { events } = await stub.list(username);
  const event = events.find((e) => e.eventId === eventId);
  if (!event) throw new Error(`${eventId} is not listed`);
  return Object.fromEntries(event.deliveries.map((d) => [d.url ?? d.endpointId, d]));
}

/**
 * Until an owner (a token's or a transaction's object) has no event staged, and the test
 * merchant's log nothing in flight: after it, no more of its events are on their way.
 */
export async function settledOwner(owner: DurableObjectStub): Promise<void> {
  const staged = (_o: unknown, state: DurableObjectState): number => rowsIn(state, 'events_out');
  for (;;) {
    const left = await runInDurableObject(owner, staged);
    if (left === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await shardsIdle('test-merchant');
}

/** One shard of a merchant's event log (shard 0 owns its endpoints). */
export function shardStub(username: string, shard: number): LogStub {
  return logStub(env.EVENT_LOG.get(env.EVENT_LOG.idFromName(shardName(username, shard))));
}

/** Every shard of a merchant's event log. */
export function shardStubs(username: string): LogStub[] {
  return Array.from({ length: settingsOf(env).eventLogShards }, (_, i) => shardStub(username, i));
}

/** Until no shard of the merchant's log has a delivery in flight. */
export async function shardsIdle(username: string): Promise<void> {
  await Promise.all(shardStubs(username).map((s) => s.whenIdle()));
}

/**
 * The rows of one of an object's tables; 0 when the table is not there (the object has not needed
 * it yet, or its storage was freed once nothing was left: docs/storage.md "Storage freed").
 */
export function rowsIn(state: DurableObjectState, table: string): number {
  const exists = state.storage.sql
    .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", table)
    .toArray().length;
  return exists ? state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM "${table}"`).one().n : 0;
}
