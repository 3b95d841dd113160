import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import type { DeliveryView, EventType, NewEvent } from '../../src/events/event-types';
import { eventTransport } from '../../src/events/event-transport';
import type { EventEndpoint } from '../../src/merchants/event-endpoints';
import { eventSink, type EventLogApi } from '../../src/events/event-log-api';
import type { EventLog } from '../../src/events/event-log';
import type { SubscribableEventType } from '../../src/events/event-types';

/**
 * The events in the Worker tests (docs/events.md): the objects run in the tests' isolate, so the
 * `eventTransport` seam puts an in-test receiver where the network would be, a clock the tests
 * move forward (retries and the retry window without waiting), and per-test merchants with their
 * own endpoints and secrets, each with an EventLog of its own.
 */

const DEFAULT_TRANSPORT = { ...eventTransport };

/** Puts the seam back (call it in `afterEach`). */
export function restoreTransport(): void {
  Object.assign(eventTransport, DEFAULT_TRANSPORT);
}

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

/** The test merchant's endpoint in the tests that give it one, and its local signing secret (.dev.vars.example). */
export const TEST_ENDPOINT = 'https://events.merchant.test/hooks';
export const TEST_MERCHANT_SECRET = 'evt_test_merchant_local_secret_not_for_live_0001';

/** An in-test receiver at the test merchant's endpoint (`restoreTransport` puts the seam back). */
export function receivingAtTestEndpoint(): Receiver {
  const receiver = new Receiver();
  eventTransport.fetch = receiver.fetch;
  withTestEndpoint(TEST_ENDPOINT);
  return receiver;
}

/** Gives the local test merchant one endpoint for every event type (its configuration has none). */
export function withTestEndpoint(url: string): void {
  const configured = eventTransport.endpointsOf;
  eventTransport.endpointsOf = (e, username) =>
    username === 'test-merchant' ? [{ url, events: 'all' }] : configured(e, username);
}

/** One request an endpoint received. */
export interface Received {
  url: string;
  method: string;
  redirect: string;
  headers: Headers;
  body: string;
  event: { eventId: string; eventType: EventType; createdAt: string; merchant: { entity: string }; data: any };
}

type Answer = Response | Promise<Response>;

/**
 * Every endpoint in one: records each request (in order of arrival) and answers it as `answer`
 * says (200 by default); a pending answer is a receiver that hangs, or answers late.
 */
export class Receiver {
  readonly received: Received[] = [];

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

/** A clock for the objects, a day ahead of the machine's: no alarm they set fires by itself during a test. */
export class Clock {
  now = Date.now() + 24 * 60 * 60 * 1000;
  advance(ms: number): void {
    this.now += ms;
  }
}

export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/** A signing secret of at least 32 bytes. */
export const secret = (n: number): string => `whsec_test_${n}_${'x'.repeat(32)}`;

/** A merchant of one test: its endpoints and secrets, its own EventLog, and the seam pointed at `receiver`. */
export function testMerchant(
  receiver: Receiver,
  clock: Clock,
  endpoints: { url: string; events?: 'all' | SubscribableEventType[] }[] = [{ url: 'https://a.merchant.test/hooks' }],
  secrets: string[] = [secret(1)],
) {
  const username = `events-${crypto.randomUUID()}`;
  const configured: EventEndpoint[] = endpoints.map((e) => ({
    url: e.url,
    events: e.events === undefined || e.events === 'all' ? 'all' : new Set(e.events),
  }));
  const merchant = { username, endpoints: configured, secrets };
  const { endpointsOf, secretsOf } = eventTransport;
  eventTransport.fetch = (request) => receiver.fetch(request);
  eventTransport.now = () => clock.now;
  eventTransport.endpointsOf = (e, u) => (u === username ? merchant.endpoints : endpointsOf(e, u));
  eventTransport.secretsOf = (e, u) => (u === username ? merchant.secrets : secretsOf(e, u));
  const object = env.EVENT_LOG.get(env.EVENT_LOG.idFromName(username));
  return { ...merchant, merchant, object, stub: logStub(object) };
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

/** An EventLog's stub, typed as its callers see it (the runtime's RPC types lose `data`'s unknowns). */
export type LogStub = EventLogApi & { whenIdle(): Promise<void>; raw: DurableObjectStub<EventLog> };

export function logStub(object: DurableObjectStub<EventLog>): LogStub {
  const api = object as unknown as EventLogApi & { whenIdle(): Promise<void> };
  return {
    append: (...args) => api.append(...args),
    list: (...args) => api.list(...args),
    redeliver: (...args) => api.redeliver(...args),
    ping: (...args) => api.ping(...args),
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

/** The deliveries of an event, by endpoint URL. */
export async function deliveriesOf(
  stub: LogStub,
  username: string,
  eventId: string,
): Promise<Record<string, DeliveryView>> {
  const { events } = await stub.list(username);
  const event = events.find((e) => e.eventId === eventId);
  if (!event) throw new Error(`${eventId} is not listed`);
  return Object.fromEntries(event.deliveries.map((d) => [d.url, d]));
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
  await logStub(env.EVENT_LOG.get(env.EVENT_LOG.idFromName('test-merchant'))).whenIdle();
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
