import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyEventSignature } from '../../examples/verify-event-signature.mjs';
import { settingsOf } from '../../src/config/settings';
import { eventTransport } from '../../src/events/event-transport';
import type { EventView } from '../../src/events/event-types';
import { StorageHarness } from './faulty-env';
import { webhookProblems } from './openapi-compat';
import { call, OTHER_AUTH, quiet, TEST_AUTH, type Fetch } from './helpers';
import { logStub, Receiver, releaseInside, restoreTransport, withTestEndpoint } from './event-helpers';

/**
 * The events routes (docs/events.md): `GET /events`, `POST /events/{eventId}/redeliver` and, in
 * `test` only, `POST /events/ping`, through the Worker with Basic auth, against the local test
 * merchant's own EventLog and its configured endpoint (data/merchants.json), whose requests reach
 * the in-test receiver instead of the network. Each answers at once, whatever the endpoint does.
 */

afterEach(() => {
  restoreTransport();
  vi.restoreAllMocks();
});

/** The test merchant's endpoint in these tests (the local configuration has none). */
const ENDPOINT = 'https://events.merchant.test/hooks';
beforeEach(() => {
  withTestEndpoint(ENDPOINT);
});
const testMerchantLog = () => logStub(env.EVENT_LOG.get(env.EVENT_LOG.idFromName('test-merchant')));

function eventsCall(path: string, method: string, auth = TEST_AUTH, via?: Fetch, headers = {}): Promise<Response> {
  return call(path, { method, headers: { Authorization: auth, ...headers }, via });
}

/** Every event the merchant's GET /events lists, page after page. */
async function listed(auth = TEST_AUTH): Promise<EventView[]> {
  const events: EventView[] = [];
  for (let since = ''; ;) {
    const response = await eventsCall(`/events${since && `?since=${since}`}`, 'GET', auth);
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe('application/json');
    const page = await response.json<{ events: EventView[]; hasMore: boolean }>();
    events.push(...page.events);
    if (!page.hasMore) return events;
    since = page.events[page.events.length - 1]!.eventId;
  }
}

async function ping(auth = TEST_AUTH): Promise<string> {
  const response = await eventsCall('/events/ping', 'POST', auth);
  expect(response.status).toBe(202);
  return (await response.json<{ eventId: string }>()).eventId;
}

describe('the events routes', () => {
  it("pings the merchant's endpoint, signed with its secret, and lists the ping with its delivery", async () => {
    const receiver = new Receiver();
    eventTransport.fetch = receiver.fetch;
    const eventId = await ping();
    expect(eventId).toMatch(/^evt_ping_[0-9a-f]{32}$/);
    await receiver.until((r) => r.some((x) => x.event.eventId === eventId));
    await testMerchantLog().whenIdle();
    const [request] = receiver.received.filter((r) => r.event.eventId === eventId);
    expect(request!.url).toBe(ENDPOINT);
    expect(request!.event).toMatchObject({ eventType: 'ping', merchant: { entity: 'default' }, data: {} });
    expect(webhookProblems(request!.headers, request!.body)).toEqual([]);
    const secrets = settingsOf(env).eventSigningSecrets.get('test-merchant')!;
    expect(await verifyEventSignature(request!.body, request!.headers.get('Event-Signature'), [...secrets])).toBe(true);
    const event = (await listed()).find((e) => e.eventId === eventId)!;
    expect(event).toMatchObject({ eventType: 'ping', merchant: { entity: 'default' } });
    expect(event.deliveries).toEqual([
      {
        url: ENDPOINT,
        state: 'delivered',
        attempts: 1,
        lastStatus: 200,
        lastAttemptAt: expect.any(String),
        deliveredAt: expect.any(String),
      },
    ]);
  });

  it("lists only the merchant's own events, and redelivers only its own: another's is not found", async () => {
    const receiver = new Receiver();
    eventTransport.fetch = receiver.fetch;
    const eventId = await ping();
    await receiver.until((r) => r.some((x) => x.event.eventId === eventId));
    expect((await listed(OTHER_AUTH)).map((e) => e.eventId)).not.toContain(eventId);
    const theirs = await eventsCall(`/events/${eventId}/redeliver`, 'POST', OTHER_AUTH);
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toMatchObject({ errorName: 'resourceNotFound' });
    for (const unknown of ['evt_unknown', 'not%20an%20id']) {
      expect((await eventsCall(`/events/${unknown}/redeliver`, 'POST')).status).toBe(404);
    }
    const mine = await eventsCall(`/events/${eventId}/redeliver`, 'POST');
    expect(mine.status).toBe(202);
    expect(await mine.text()).toBe('');
    await receiver.until((r) => r.filter((x) => x.event.eventId === eventId).length === 2);
    await testMerchantLog().whenIdle();
    expect((await listed()).find((e) => e.eventId === eventId)!.deliveries[0]).toMatchObject({
      state: 'delivered',
      attempts: 2,
    });
  });

  it('lists the events after `since`, and refuses a `since` that cannot be an event id', async () => {
    eventTransport.fetch = new Receiver().fetch;
    const first = await ping();
    const second = await ping();
    const response = await eventsCall(`/events?since=${first}`, 'GET');
    const ids = (await response.json<{ events: EventView[] }>()).events.map((e) => e.eventId);
    expect(ids).toContain(second);
    expect(ids).not.toContain(first);
    const bad = await eventsCall('/events?since=a%20b', 'GET');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      errorName: 'urlContainsInvalidValue',
      validationErrors: [{ jsonPath: '$.since' }],
    });
    await testMerchantLog().whenIdle();
  });

  it('takes Basic credentials and any Accept that allows JSON', async () => {
    expect((await eventsCall('/events', 'GET', 'Basic eDp5')).status).toBe(401);
    expect((await eventsCall('/events', 'GET', TEST_AUTH, undefined, { Accept: '*/*' })).status).toBe(200);
    expect((await eventsCall('/events', 'GET', TEST_AUTH, undefined, { Accept: 'application/xml' })).status).toBe(406);
    expect((await eventsCall('/events', 'DELETE')).status).toBe(405);
  });

  it('answers every route at once while the endpoint hangs: no request waits for a delivery', async () => {
    const held: (() => void)[] = [];
    const receiver = new Receiver(
      () => new Promise<Response>((resolve) => held.push(() => resolve(new Response('ok')))),
    );
    eventTransport.fetch = receiver.fetch;
    // Longer than the test: the endpoint hangs until released.
    eventTransport.timeoutMs = 10 * 60_000;
    const eventId = await ping();
    await receiver.until((r) => r.some((x) => x.event.eventId === eventId));
    const pending = (await listed()).find((e) => e.eventId === eventId)!;
    expect(pending.deliveries[0]).toMatchObject({ state: 'pending', attempts: 0 });
    expect((await eventsCall(`/events/${eventId}/redeliver`, 'POST')).status).toBe(202);
    expect(await ping()).not.toBe(eventId);
    // The endpoint recovers: what it held is answered, and what comes next at once.
    receiver.answer = () => new Response('ok');
    const log = testMerchantLog();
    await releaseInside(log, held);
    await log.whenIdle();
    expect((await listed()).find((e) => e.eventId === eventId)!.deliveries[0]!.state).toBe('delivered');
  });
});

describe('the events routes with their one object call failing', () => {
  const routes = [
    ['GET /events', 'GET', () => '/events', 'list'],
    ['POST /events/ping', 'POST', () => '/events/ping', 'ping'],
    ['POST /events/{id}/redeliver', 'POST', (id: string) => `/events/${id}/redeliver`, 'redeliver'],
  ] as const;
  const cases = routes.flatMap(([name, method, path, op]) =>
    (['before', 'after', 'hang'] as const).map(
      (when) => [name, when === 'hang' ? 'hanging' : `failing ${when}`, when, method, path, op] as const,
    ),
  );

  it.each(cases)(
    '%s, the call %s: 503 with Retry-After, and the retry answers',
    async (_n, _w, when, method, path, op) => {
      quiet();
      eventTransport.fetch = new Receiver().fetch;
      const known = await ping();
      const h = new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '1000' } : {}).failOn({
        nth: 0,
        of: 'do',
        when,
      });
      const failed = await eventsCall(path(known), method, TEST_AUTH, (r) => h.fetch(r));
      expect(failed.status).toBe(503);
      expect(failed.headers.get('Retry-After')).toMatch(/^\d+$/);
      expect(h.calls.map((c) => `${c.store}.${c.op}`)).toEqual([`do.${op}`]);
      const retried = await eventsCall(path(known), method, TEST_AUTH, (r) => h.fetch(r));
      expect(retried.status).toBe(method === 'GET' ? 200 : 202);
    },
  );
});

describe('the events routes in live', () => {
  const live = new StorageHarness({ ENVIRONMENT: 'live' });

  it('refuses the ping: 403 sandboxIsNotEnabled, as the other sandbox controls', async () => {
    const response = await eventsCall('/events/ping', 'POST', TEST_AUTH, (r) => live.fetch(r));
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ errorName: 'sandboxIsNotEnabled' });
  });

  it('lists the events and redelivers them as in test', async () => {
    eventTransport.fetch = new Receiver().fetch;
    const response = await eventsCall('/events', 'GET', TEST_AUTH, (r) => live.fetch(r));
    expect(response.status).toBe(200);
    expect((await eventsCall('/events/evt_unknown/redeliver', 'POST', TEST_AUTH, (r) => live.fetch(r))).status).toBe(
      404,
    );
    // An event of the merchant's log (a ping, made in test) is redelivered in live too.
    const known = await ping();
    expect((await eventsCall(`/events/${known}/redeliver`, 'POST', TEST_AUTH, (r) => live.fetch(r))).status).toBe(202);
  });
});
