import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventTransport } from '../../src/events/event-transport';
import type { EndpointView } from '../../src/events/endpoint-rules';
import type { EventView } from '../../src/events/event-types';
import { StorageHarness } from './faulty-env';
import { settingsOf } from '../../src/config/settings';
import { webhookProblems } from './openapi-compat';
import { burst, call, OTHER_AUTH, quiet, TEST_AUTH, type Fetch } from './helpers';
import { logStub, Receiver, releaseInside, restoreTransport, shardsIdle } from './event-helpers';

/**
 * The events routes (docs/events.md) through the Worker with Basic auth: the merchant makes its
 * endpoints (each with its own secret, shown once), pings, lists, reads, redelivers and recovers,
 * against its own EventLog, whose requests reach the in-test receiver instead of the network.
 * Each route is one call to that object and answers at once, whatever the endpoint does.
 */

const testMerchantLog = () => logStub(env.EVENT_LOG.get(env.EVENT_LOG.idFromName('test-merchant')));

afterEach(async () => {
  await restoreTransport();
  // The test merchant's log outlives a test: its endpoints do not.
  for (const auth of [TEST_AUTH, OTHER_AUTH]) {
    const { endpoints } = await (
      await eventsCall('/events/endpoints', 'GET', auth)
    ).json<{ endpoints: EndpointView[] }>();
    for (const e of endpoints) await eventsCall(`/events/endpoints/${e.endpointId}`, 'DELETE', auth);
  }
  await shardsIdle('test-merchant');
  vi.restoreAllMocks();
});

function eventsCall(
  path: string,
  method: string,
  auth = TEST_AUTH,
  via?: Fetch,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Response> {
  return call(path, {
    method,
    headers: { Authorization: auth, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body } : {}),
    via,
  });
}

const A = 'https://a.merchant.test/hooks';
const B = 'https://b.merchant.test/hooks';

/** A new endpoint of the merchant through the API: what it answered, the secret given to the receiver. */
async function createEndpoint(
  receiver: Receiver | undefined,
  body: Record<string, unknown>,
  auth = TEST_AUTH,
): Promise<EndpointView & { secret: string }> {
  const response = await eventsCall('/events/endpoints', 'POST', auth, undefined, {}, body);
  expect(response.status).toBe(201);
  const created = await response.json<EndpointView & { secret: string }>();
  receiver?.secrets.set(created.url, [created.secret]);
  return created;
}

/** Every event the merchant's GET /events lists, page after page. */
async function listed(auth = TEST_AUTH, query = ''): Promise<EventView[]> {
  const events: EventView[] = [];
  for (let since = ''; ;) {
    const response = await eventsCall(`/events?${query}${since && `&since=${since}`}`, 'GET', auth);
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe('application/json');
    const page = await response.json<{ events: EventView[]; hasMore: boolean }>();
    events.push(...page.events);
    if (!page.hasMore) return events;
    since = page.events[page.events.length - 1]!.eventId;
  }
}

async function ping(endpointId: string, auth = TEST_AUTH, via?: Fetch): Promise<string> {
  const response = await eventsCall(`/events/endpoints/${endpointId}/ping`, 'POST', auth, via);
  expect(response.status).toBe(202);
  return (await response.json<{ eventId: string }>()).eventId;
}

describe('endpoints', () => {
  it('are made with a secret shown once, read and listed without it, changed, and deleted', async () => {
    const created = await createEndpoint(undefined, {
      url: A,
      events: ['tokens.token.updated'],
      description: 'CRM',
    });
    expect(created).toEqual({
      endpointId: expect.stringMatching(/^ep_[a-z2-7]{26}$/),
      url: A,
      events: ['tokens.token.updated'],
      description: 'CRM',
      state: 'enabled',
      createdAt: expect.stringMatching(/Z$/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...shown } = created;
    const path = `/events/endpoints/${created.endpointId}`;
    expect(await (await eventsCall(path, 'GET')).json()).toEqual(shown);
    expect(await (await eventsCall('/events/endpoints', 'GET')).json()).toEqual({ endpoints: [shown] });
    const patched = await eventsCall(
      path,
      'PATCH',
      TEST_AUTH,
      undefined,
      {},
      { url: B, events: 'all', state: 'disabled' },
    );
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({
      ...shown,
      url: B,
      events: 'all',
      state: 'disabled',
      disabledReason: 'merchant',
    });
    const rotated = await eventsCall(`${path}/rotateSecret`, 'POST', TEST_AUTH, undefined, {}, {});
    expect(rotated.status).toBe(200);
    const r = await rotated.json<EndpointView & { secret: string }>();
    expect(r.secret).not.toBe(secret);
    expect(Date.parse(r.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(JSON.stringify(await (await eventsCall(path, 'GET')).json())).not.toContain('whsec_');
    expect((await eventsCall(path, 'DELETE')).status).toBe(204);
    expect((await eventsCall(path, 'GET')).status).toBe(404);
    expect((await eventsCall(path, 'DELETE')).status).toBe(404);
  });

  it('are at most 10 a merchant, also for 20 creates at once', async () => {
    const answers = await burst(20, (i) =>
      eventsCall('/events/endpoints', 'POST', TEST_AUTH, undefined, {}, { url: `${A}/${i}`, events: 'all' }),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual(Array(10).fill(409));
    expect(await refused[0]!.json()).toMatchObject({ errorName: 'tooManyEndpoints' });
    const { endpoints } = await (await eventsCall('/events/endpoints', 'GET')).json<{ endpoints: EndpointView[] }>();
    expect(endpoints).toHaveLength(10);
  });

  it.each([
    ['http://merchant.test/hooks', 'http to another host'],
    ['https://user:pw@merchant.test/hooks', 'credentials'],
    ['https://merchant.test/hooks#x', 'a fragment'],
    ['https://10.0.0.1/hooks', 'a private address'],
    ['https://169.254.169.254/latest', 'a link-local address'],
    ['https://100.64.0.1/', 'a shared address'],
    ['https://[::1]/hooks', 'IPv6 loopback'],
    ['https://[fd00::1]/hooks', 'IPv6 unique local'],
    ['https://[::ffff:192.168.0.1]/', 'an IPv4-mapped private address'],
    ['https://0x0a000001/', 'a private address in hex'],
    ['ftp://merchant.test/', 'another scheme'],
    ['not a url', 'no URL'],
  ])('refuse %s (%s): 400 at $.url', async (url) => {
    const response = await eventsCall('/events/endpoints', 'POST', TEST_AUTH, undefined, {}, { url, events: 'all' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      errorName: 'bodyDoesNotMatchSchema',
      validationErrors: [{ jsonPath: '$.url' }],
    });
  });

  it('take http://localhost and 127.0.0.1 in test, and refuse them and local names in live', async () => {
    await createEndpoint(undefined, { url: 'http://localhost:9999/hooks', events: 'all' });
    await createEndpoint(undefined, { url: 'http://127.0.0.1:9999/hooks', events: 'all' });
    const live = new StorageHarness({ ENVIRONMENT: 'live' });
    for (const url of [
      'http://localhost:9999/hooks',
      'https://localhost/hooks',
      'https://hooks.internal/',
      'https://printer.local/',
    ]) {
      const response = await eventsCall(
        '/events/endpoints',
        'POST',
        TEST_AUTH,
        (r) => live.fetch(r),
        {},
        { url, events: 'all' },
      );
      expect(response.status, url).toBe(400);
    }
  });

  it("are another merchant's to nobody: 404 for every route", async () => {
    const theirs = await createEndpoint(undefined, { url: A, events: 'all' }, OTHER_AUTH);
    const path = `/events/endpoints/${theirs.endpointId}`;
    expect((await eventsCall(path, 'GET')).status).toBe(404);
    expect((await eventsCall(path, 'PATCH', TEST_AUTH, undefined, {}, { state: 'disabled' })).status).toBe(404);
    expect((await eventsCall(path, 'DELETE')).status).toBe(404);
    expect((await eventsCall(`${path}/rotateSecret`, 'POST', TEST_AUTH, undefined, {}, {})).status).toBe(404);
    expect((await eventsCall(`${path}/ping`, 'POST')).status).toBe(404);
    expect(
      (await eventsCall(`${path}/recover`, 'POST', TEST_AUTH, undefined, {}, { since: '2026-01-01T00:00:00Z' })).status,
    ).toBe(404);
    expect((await (await eventsCall('/events/endpoints', 'GET')).json<{ endpoints: unknown[] }>()).endpoints).toEqual(
      [],
    );
    expect((await eventsCall(path, 'GET', OTHER_AUTH)).status).toBe(200);
  });
});

describe('the events routes', () => {
  it('ping one endpoint, signed with its own secret, each ping its own subject; GET shows its attempts', async () => {
    const receiver = new Receiver();
    eventTransport.fetch = receiver.fetch;
    const a = await createEndpoint(receiver, { url: A, events: ['tokens.token.deleted'] });
    await createEndpoint(receiver, { url: B, events: 'all' });
    const eventId = await ping(a.endpointId);
    const again = await ping(a.endpointId);
    expect(eventId).toMatch(/^evt_ping_[0-9a-f]{32}$/);
    await receiver.until((r) => r.filter((x) => x.event.eventType === 'ping').length === 2);
    await shardsIdle('test-merchant');
    const pings = receiver.received.filter((x) => x.event.eventType === 'ping');
    expect(pings.map((r) => r.url)).toEqual([A, A]);
    expect(new Set(pings.map((r) => r.event.subject))).toEqual(new Set([`ping:${eventId}`, `ping:${again}`]));
    const request = pings.find((r) => r.event.eventId === eventId)!;
    expect(request.event).toMatchObject({
      eventType: 'ping',
      merchant: { entity: 'default' },
      data: { endpointId: a.endpointId },
    });
    expect(webhookProblems(request.headers, request.body)).toEqual([]);
    expect(request.verifiedWith).toEqual([a.secret]);
    const got = await eventsCall(`/events/${eventId}`, 'GET');
    expect(got.status).toBe(200);
    const event = await got.json<EventView>();
    expect(event).toMatchObject({ eventId, eventType: 'ping', subject: `ping:${eventId}` });
    expect(event.deliveries).toEqual([
      {
        endpointId: a.endpointId,
        url: A,
        state: 'delivered',
        attempts: 1,
        lastStatus: 200,
        lastAttemptAt: expect.any(String),
        deliveredAt: expect.any(String),
        history: [{ at: expect.any(String), status: 200, durationMs: expect.any(Number) }],
      },
    ]);
  });

  it("list and read only the merchant's own events, and redeliver only its own: another's is not found", async () => {
    const receiver = new Receiver();
    eventTransport.fetch = receiver.fetch;
    const { endpointId } = await createEndpoint(receiver, { url: A, events: 'all' });
    const eventId = await ping(endpointId);
    await receiver.until((r) => r.some((x) => x.event.eventId === eventId));
    expect((await listed(OTHER_AUTH)).map((e) => e.eventId)).not.toContain(eventId);
    expect((await eventsCall(`/events/${eventId}`, 'GET', OTHER_AUTH)).status).toBe(404);
    const theirs = await eventsCall(`/events/${eventId}/redeliver`, 'POST', OTHER_AUTH);
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toMatchObject({ errorName: 'resourceNotFound' });
    for (const unknown of ['evt_unknown', 'not%20an%20id']) {
      expect((await eventsCall(`/events/${unknown}/redeliver`, 'POST')).status).toBe(404);
      expect((await eventsCall(`/events/${unknown}`, 'GET')).status).toBe(404);
    }
    const mine = await eventsCall(`/events/${eventId}/redeliver`, 'POST');
    expect(mine.status).toBe(202);
    expect(await mine.text()).toBe('');
    await receiver.until((r) => r.filter((x) => x.event.eventId === eventId).length === 2);
    await shardsIdle('test-merchant');
    expect((await listed()).find((e) => e.eventId === eventId)!.deliveries[0]).toMatchObject({
      state: 'delivered',
      attempts: 2,
    });
  });

  it('filter by type, delivery state and endpoint, newest first on asking, and refuse what cannot be a filter', async () => {
    const receiver = new Receiver((r) => (r.url === B ? new Response('no', { status: 500 }) : new Response('ok')));
    eventTransport.fetch = receiver.fetch;
    const a = await createEndpoint(receiver, { url: A, events: 'all' });
    const b = await createEndpoint(receiver, { url: B, events: 'all' });
    const first = await ping(a.endpointId);
    const second = await ping(b.endpointId);
    await receiver.until((r) => r.length === 2);
    await shardsIdle('test-merchant');
    const ids = async (query: string) => (await listed(TEST_AUTH, query)).map((e) => e.eventId);
    expect(await ids(`endpointId=${b.endpointId}&deliveryState=pending`)).toEqual([second]);
    expect(await ids(`endpointId=${a.endpointId}&deliveryState=delivered`)).toEqual([first]);
    expect((await ids('type=ping&order=desc')).slice(0, 2)).toEqual([second, first]);
    expect(await ids(`type=ping&since=${first}`)).toContain(second);
    expect(await ids(`type=ping&order=desc&since=${second}`)).toContain(first);
    expect(await ids('type=tokens.token.deleted&deliveryState=held')).toEqual([]);
    for (const [query, path] of [
      ['since=a%20b', '$.since'],
      ['type=nope', '$.type'],
      ['deliveryState=lost', '$.deliveryState'],
      ['endpointId=ep_x', '$.endpointId'],
      ['order=sideways', '$.order'],
    ]) {
      const bad = await eventsCall(`/events?${query}`, 'GET');
      expect(bad.status, query).toBe(400);
      expect(await bad.json()).toMatchObject({
        errorName: 'urlContainsInvalidValue',
        validationErrors: [{ jsonPath: path }],
      });
    }
  });

  it('recover: queues again, in order per subject, every event since then that did not reach the endpoint, and says how many', async () => {
    const receiver = new Receiver();
    eventTransport.fetch = receiver.fetch;
    const before = Date.now();
    const since = new Date(before).toISOString();
    const log = testMerchantLog();
    const event = (n: number, subject: string) => ({
      eventId: `evt_recover_${before}_${n}`,
      eventType: 'tokens.token.updated' as const,
      subject,
      createdAt: before + n,
      entity: 'default',
      data: { n },
    });
    // Appended while the merchant had no endpoint: kept, sent nowhere.
    const events = [event(1, 'token:R1'), event(2, 'token:R2'), event(3, 'token:R1'), event(4, 'token:R1')];
    await log.append('test-merchant', events);
    const { endpointId } = await createEndpoint(receiver, { url: A, events: ['tokens.token.updated'] });
    const path = `/events/endpoints/${endpointId}/recover`;
    const recovered = await eventsCall(path, 'POST', TEST_AUTH, undefined, {}, { since });
    expect(recovered.status).toBe(202);
    expect(await recovered.json()).toEqual({ queued: 4 });
    await receiver.until((r) => r.length === 4);
    await log.whenIdle();
    const r1 = receiver.received.filter((r) => r.event.subject === 'token:R1').map((r) => r.event.eventId);
    expect(r1).toEqual([events[0]!.eventId, events[2]!.eventId, events[3]!.eventId]);
    expect(receiver.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
    // Delivered now: a second recover queues nothing; one from later, nothing either.
    expect(await (await eventsCall(path, 'POST', TEST_AUTH, undefined, {}, { since })).json()).toEqual({ queued: 0 });
    const bad = await eventsCall(path, 'POST', TEST_AUTH, undefined, {}, { since: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      validationErrors: [{ jsonPath: '$.since', errorName: 'dateHasInvalidFormat' }],
    });
  });

  it('take Basic credentials and any Accept that allows JSON', async () => {
    expect((await eventsCall('/events', 'GET', 'Basic eDp5')).status).toBe(401);
    expect((await eventsCall('/events', 'GET', TEST_AUTH, undefined, { Accept: '*/*' })).status).toBe(200);
    expect((await eventsCall('/events', 'GET', TEST_AUTH, undefined, { Accept: 'application/xml' })).status).toBe(406);
    expect((await eventsCall('/events', 'DELETE')).status).toBe(405);
    expect((await eventsCall('/events/endpoints', 'PUT')).status).toBe(405);
  });

  it('answer at once while the endpoint hangs: no request waits for a delivery', async () => {
    const held: (() => void)[] = [];
    const receiver = new Receiver(
      () => new Promise<Response>((resolve) => held.push(() => resolve(new Response('ok')))),
    );
    eventTransport.fetch = receiver.fetch;
    // Longer than the test: the endpoint hangs until released.
    eventTransport.timeoutMs = 10 * 60_000;
    const { endpointId } = await createEndpoint(receiver, { url: A, events: 'all' });
    const eventId = await ping(endpointId);
    await receiver.until((r) => r.some((x) => x.event.eventId === eventId));
    const pending = (await listed()).find((e) => e.eventId === eventId)!;
    expect(pending.deliveries[0]).toMatchObject({ state: 'pending', attempts: 0 });
    expect((await eventsCall(`/events/${eventId}/redeliver`, 'POST')).status).toBe(202);
    expect(await ping(endpointId)).not.toBe(eventId);
    expect(
      (await eventsCall(`/events/endpoints/${endpointId}`, 'PATCH', TEST_AUTH, undefined, {}, { description: 'x' }))
        .status,
    ).toBe(200);
    receiver.answer = () => new Response('ok');
    const log = testMerchantLog();
    await releaseInside(log, held);
    await log.whenIdle();
    expect((await listed()).find((e) => e.eventId === eventId)!.deliveries[0]!.state).toBe('delivered');
  });
});

describe('the events routes with one of their object calls failing', () => {
  // [name, method, path, the object method, body, whether it asks every shard]
  const routes = [
    ['GET /events', 'GET', () => '/events', 'page', undefined, true],
    ['GET /events/{id}', 'GET', (id: string) => `/events/${id}`, 'event', undefined, true],
    ['POST /events/{id}/redeliver', 'POST', (id: string) => `/events/${id}/redeliver`, 'redeliver', undefined, true],
    ['GET /events/endpoints', 'GET', () => '/events/endpoints', 'listEndpoints', undefined, false],
    [
      'PATCH /events/endpoints/{id}',
      'PATCH',
      (_: string, ep: string) => `/events/endpoints/${ep}`,
      'updateEndpoint',
      { description: 'x' },
      false,
    ],
    ['POST …/ping', 'POST', (_: string, ep: string) => `/events/endpoints/${ep}/ping`, 'ping', undefined, false],
    [
      'POST …/recover',
      'POST',
      (_: string, ep: string) => `/events/endpoints/${ep}/recover`,
      'recover',
      { since: '2026-01-01T00:00:00Z' },
      true,
    ],
  ] as const;
  // A route that asks every shard is failed at shard 0 and at another shard.
  const cases = routes.flatMap(([name, method, path, op, body, everyShard]) =>
    (everyShard ? [0, 5] : [0]).flatMap((nth) =>
      (['before', 'after', 'hang'] as const).map(
        (when) =>
          [
            `${name}${everyShard ? ` (shard ${nth})` : ''}`,
            when === 'hang' ? 'hanging' : `failing ${when}`,
            when,
            method,
            path,
            op,
            body,
            everyShard,
            nth,
          ] as const,
      ),
    ),
  );

  it.each(cases)(
    '%s, the call %s: 503 with Retry-After, and the retry answers',
    async (_n, _w, when, method, path, op, body, everyShard, nth) => {
      quiet();
      eventTransport.fetch = new Receiver().fetch;
      const { endpointId } = await createEndpoint(undefined, { url: A, events: 'all' });
      const known = await ping(endpointId);
      const h = new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '1000' } : {}).failOn({
        nth,
        of: 'do',
        when,
      });
      const failed = await eventsCall(path(known, endpointId), method, TEST_AUTH, (r) => h.fetch(r), {}, body);
      expect(failed.status).toBe(503);
      expect(failed.headers.get('Retry-After')).toMatch(/^\d+$/);
      const shards = settingsOf(env).eventLogShards;
      expect(h.calls.map((c) => `${c.store}.${c.op}`)).toEqual(Array(everyShard ? shards : 1).fill(`do.${op}`));
      const retried = await eventsCall(path(known, endpointId), method, TEST_AUTH, (r) => h.fetch(r), {}, body);
      expect(retried.status).toBe(method === 'GET' || method === 'PATCH' ? 200 : 202);
    },
  );

  it.each(['before', 'after', 'hang'] as const)(
    'POST /events/endpoints, the call %s: 503, and the retry makes it (at most one more endpoint than asked, never a lost one)',
    async (when) => {
      quiet();
      const h = new StorageHarness(when === 'hang' ? { STORAGE_TIMEOUT_MS: '1000' } : {}).failOn({
        nth: 0,
        of: 'do',
        when,
      });
      const body = { url: A, events: 'all' };
      const failed = await eventsCall('/events/endpoints', 'POST', TEST_AUTH, (r) => h.fetch(r), {}, body);
      expect(failed.status).toBe(503);
      const retried = await eventsCall('/events/endpoints', 'POST', TEST_AUTH, (r) => h.fetch(r), {}, body);
      expect(retried.status).toBe(201);
      const { endpoints } = await (await eventsCall('/events/endpoints', 'GET')).json<{ endpoints: EndpointView[] }>();
      expect(endpoints.length).toBe(when === 'before' ? 1 : endpoints.length);
      expect(endpoints.map((e) => e.endpointId)).toContain((await retried.json<EndpointView>()).endpointId);
    },
  );
});

describe('the events routes in live', () => {
  const live = new StorageHarness({ ENVIRONMENT: 'live' });

  it('ping, list and redeliver as in test', async () => {
    eventTransport.fetch = new Receiver().fetch;
    const { endpointId } = await createEndpoint(undefined, { url: A, events: 'all' });
    const known = await ping(endpointId, TEST_AUTH, (r) => live.fetch(r));
    const response = await eventsCall('/events', 'GET', TEST_AUTH, (r) => live.fetch(r));
    expect(response.status).toBe(200);
    expect((await eventsCall('/events/evt_unknown/redeliver', 'POST', TEST_AUTH, (r) => live.fetch(r))).status).toBe(
      404,
    );
    expect((await eventsCall(`/events/${known}/redeliver`, 'POST', TEST_AUTH, (r) => live.fetch(r))).status).toBe(202);
  });
});
