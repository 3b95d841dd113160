import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import { burst, quiet } from './helpers';
import {
  Clock,
  DAY,
  deliveriesOf,
  MINUTE,
  newEvent,
  Receiver,
  releaseInside,
  restoreTransport,
  runAlarm,
  testMerchant,
  signedWith,
} from './event-helpers';
import { eventTransport } from '../../src/events/event-transport';

const DEFAULT_TIMEOUT_MS = eventTransport.timeoutMs;

/**
 * A merchant's EventLog (docs/events.md "Delivery"), called as an owner calls it: appends are
 * idempotent and never wait on a delivery; each event reaches each endpoint that takes it, signed,
 * in order per subject, retried with backoff through every kind of failure, failed after its
 * window. The receiver is in the test (`eventTransport`), and so is the clock: retries are driven
 * by running the alarm after moving the clock, never by waiting.
 */

afterEach(async () => {
  await restoreTransport();
  vi.restoreAllMocks();
});

const A = 'https://a.merchant.test/hooks';
const B = 'https://b.merchant.test/tokens-only';

describe('append', () => {
  it('keeps one event and one delivery per endpoint for a burst of 20 identical appends', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock, [
      { url: A },
      { url: B, events: ['tokens.token.updated', 'tokens.token.deleted'] },
    ]);
    const event = newEvent(clock);
    const answers = await burst(20, () => stub.append(username, [event]));
    expect(answers.reduce((n, a) => n + a.appended, 0)).toBe(1);
    await stub.whenIdle();
    const { events } = await stub.list(username);
    expect(events.map((e) => e.eventId)).toEqual([event.eventId]);
    expect(events[0]!.deliveries.map((d) => [d.url, d.state, d.attempts])).toEqual([
      [A, 'delivered', 1],
      [B, 'delivered', 1],
    ]);
    expect(receiver.received.map((r) => r.url).sort()).toEqual([A, B]);
    // Retried later, as an owner's alarm would: nothing more.
    expect(await stub.append(username, [event])).toEqual({ appended: 0 });
    await runAlarm(stub);
    expect(receiver.received).toHaveLength(2);
  });

  it('delivers each type only to the endpoints that take it', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock, [
      { url: A },
      { url: B, events: ['tokens.token.deleted'] },
    ]);
    const completed = newEvent(clock, { eventType: 'threeDS.authentication.completed', subject: 'tx:1' });
    const deleted = newEvent(clock, { eventType: 'tokens.token.deleted' });
    await stub.append(username, [completed, deleted]);
    await stub.whenIdle();
    expect(receiver.idsAt(A).sort()).toEqual([completed.eventId, deleted.eventId].sort());
    expect(receiver.idsAt(B)).toEqual([deleted.eventId]);
    expect(Object.keys(await deliveriesOf(stub, username, completed.eventId))).toEqual([A]);
  });

  it('refuses what is not an event (a bug in its owner), and another merchant in its log', async () => {
    const clock = new Clock();
    const { object, stub, username } = await testMerchant(new Receiver(), clock);
    // Inside the object: a refused RPC would also reach the tests' isolate as an unhandled rejection.
    await runInDurableObject(object, async (log: EventLog) => {
      await expect(log.append(username, [newEvent(clock, { eventId: 'has space' })])).rejects.toThrow(/eventId/);
      await expect(log.append(username, [newEvent(clock, { eventType: 'nope' as never })])).rejects.toThrow(
        /eventType/,
      );
      await log.append(username, [newEvent(clock)]);
      await expect(log.append('someone-else', [newEvent(clock)])).rejects.toThrow(/another/);
    });
    expect((await stub.list('someone-else')).events).toEqual([]);
    expect((await stub.list(username)).events).toHaveLength(1);
  });
});

describe('the request', () => {
  it("posts the event as JSON with its subject and sequence, signed the Standard Webhooks way with its endpoint's own secret", async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username, endpoints } = await testMerchant(receiver, clock, [{ url: A }, { url: B }]);
    const event = newEvent(clock, { entity: 'nonpci' });
    await stub.append(username, [event]);
    await stub.whenIdle();
    const r = receiver.received.find((x) => x.url === A)!;
    expect(r.method).toBe('POST');
    expect(r.redirect).toBe('manual');
    expect(r.headers.get('Content-Type')).toBe('application/json');
    const body = JSON.parse(r.body);
    expect(body).toEqual({
      eventId: event.eventId,
      eventType: event.eventType,
      createdAt: new Date(event.createdAt).toISOString(),
      subject: event.subject,
      sequence: expect.any(Number),
      merchant: { entity: 'nonpci' },
      data: event.data,
    });
    expect(r.headers.get('webhook-id')).toBe(event.eventId);
    expect(r.headers.get('webhook-timestamp')).toBe(String(Math.floor(clock.now / 1000)));
    expect(r.headers.get('webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // Each endpoint verifies with its own secret only: A's secret cannot sign for B.
    const [a, b] = endpoints;
    expect(r.verifiedWith).toEqual([a!.secret]);
    expect(receiver.received.find((x) => x.url === B)!.verifiedWith).toEqual([b!.secret]);
    expect(a!.secret).not.toBe(b!.secret);
  });

  it('signs with both secrets while a rotated-out one is valid, then with the new one alone', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username, endpoints } = await testMerchant(receiver, clock);
    const [{ endpointId, secret: old }] = endpoints as [(typeof endpoints)[0]];
    const rotated = (await stub.rotateSecret(username, endpointId, 3600))!;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.endpoint.previousSecretExpiresAt).toBe(new Date(clock.now + 3_600_000).toISOString());
    receiver.secrets.set(A, [old, rotated.secret]);
    await stub.append(username, [newEvent(clock)]);
    await stub.whenIdle();
    expect(receiver.received[0]!.headers.get('webhook-signature')!.split(' ')).toHaveLength(2);
    expect(receiver.received[0]!.verifiedWith).toEqual([old, rotated.secret]);
    clock.advance(3_600_000);
    await stub.append(username, [newEvent(clock)]);
    await stub.whenIdle();
    expect(receiver.received[1]!.verifiedWith).toEqual([rotated.secret]);
    // A rotation with no overlap: only the newest signs at once.
    const again = (await stub.rotateSecret(username, endpointId, 0))!;
    receiver.secrets.set(A, [rotated.secret, again.secret]);
    await stub.append(username, [newEvent(clock)]);
    await stub.whenIdle();
    expect(receiver.received[2]!.verifiedWith).toEqual([again.secret]);
    expect(again.endpoint.previousSecretExpiresAt).toBeUndefined();
  });

  it('gives each later event of a subject a greater sequence, also after older ones were dropped', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const first = newEvent(clock, { subject: 'token:S' });
    const second = newEvent(clock, { subject: 'token:S' });
    await stub.append(username, [first, second]);
    await stub.whenIdle();
    const [s1, s2] = receiver.received.map((r) => r.event.sequence);
    expect(s2!).toBeGreaterThan(s1!);
    clock.advance(31 * DAY);
    await runAlarm(stub);
    expect((await stub.list(username)).events).toEqual([]);
    const later = newEvent(clock, { subject: 'token:S' });
    await stub.append(username, [later]);
    await stub.whenIdle();
    expect(receiver.received[2]!.event.sequence).toBeGreaterThan(s2!);
  });

  it('never logs a body or an endpoint beyond its origin', async () => {
    const logs: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => logs.push(line));
    vi.spyOn(console, 'error').mockImplementation((line: string) => logs.push(line));
    const receiver = new Receiver(() => new Response('no', { status: 500 }));
    const clock = new Clock();
    const url = 'https://a.merchant.test/hooks?key=merchant-own-secret';
    const { stub, username } = await testMerchant(receiver, clock, [{ url }]);
    const event = newEvent(clock, { data: { marker: 'body-marker-never-logged' } });
    await stub.append(username, [event]);
    await stub.whenIdle();
    const line = logs.find((l) => l.includes('event.delivery') && l.includes(event.eventId));
    expect(line).toContain('"endpoint":"https://a.merchant.test"');
    expect(logs.join('\n')).not.toMatch(/body-marker-never-logged|merchant-own-secret/);
  });

  it('never shows a secret in a list, a GET, a log line or an event', async () => {
    const logs: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => logs.push(line));
    vi.spyOn(console, 'error').mockImplementation((line: string) => logs.push(line));
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username, endpoints } = await testMerchant(receiver, clock);
    const { endpointId, secret } = endpoints[0]!;
    const rotated = (await stub.rotateSecret(username, endpointId))!;
    await stub.ping(username, endpointId, 'default');
    await stub.whenIdle();
    const shown = JSON.stringify([
      await stub.listEndpoints(username),
      await stub.getEndpoint(username, endpointId),
      await stub.list(username),
      receiver.received.map((r) => r.body),
      logs,
    ]);
    const stored = await runInDurableObject(stub.raw, (_o, state) =>
      JSON.stringify(state.storage.sql.exec('SELECT * FROM endpoints').toArray()),
    );
    for (const s of [secret, rotated.secret]) {
      expect(shown).not.toContain(s);
      expect(shown).not.toContain(s.slice('whsec_'.length));
      expect(stored).not.toContain(s.slice('whsec_'.length));
    }
  });
});

describe('retries', () => {
  const cases: [string, string, (release: Promise<void>) => Response | Promise<Response>][] = [
    ['answers 500', 'status', () => new Response('no', { status: 500 })],
    ['answers 404', 'status', () => new Response('no', { status: 404 })],
    ['hangs past the deadline', 'timeout', () => new Promise<Response>(() => {})],
    ['answers 200 after the deadline', 'timeout', (release) => release.then(() => new Response('ok'))],
    [
      'redirects',
      'redirect',
      () => new Response(null, { status: 307, headers: { Location: 'https://elsewhere.test/hooks' } }),
    ],
    ['cannot be reached', 'network', () => Promise.reject(new TypeError('Network connection lost.'))],
  ];

  it.each(cases)('retries an endpoint that %s, until it takes the event', async (_, error, failing) => {
    quiet();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const receiver = new Receiver(() => (++calls === 1 ? failing(released) : new Response('ok')));
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    // A short deadline where the receiver hangs or answers late, so that the attempt ends at once
    // (what is tested is that a late or missing answer is a failure, not how long the deadline
    // is); the usual one otherwise, so that a quick answer cannot time out on a busy machine.
    if (error === 'timeout') eventTransport.timeoutMs = 50;
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    await releaseInside(stub, [release]);
    // The usual deadline again: the retry's quick answer must not depend on the machine's speed.
    eventTransport.timeoutMs = DEFAULT_TIMEOUT_MS;
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastError: error,
      nextAttemptAt: new Date(clock.now + 30_000).toISOString(),
    });
    // Not due yet: nothing is sent.
    await runAlarm(stub);
    expect(receiver.received).toHaveLength(1);
    clock.advance(30_000);
    await runAlarm(stub);
    expect(receiver.idsAt(A)).toEqual([event.eventId, event.eventId]);
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({
      state: 'delivered',
      attempts: 2,
      lastStatus: 200,
      deliveredAt: new Date(clock.now).toISOString(),
    });
  });

  it('backs off exponentially with jitter; after 3 days without a success the endpoint is disabled, not its events failed', async () => {
    quiet();
    const receiver = new Receiver((r) => (r.url === A ? new Response('no', { status: 503 }) : new Response('ok')));
    const clock = new Clock();
    const { stub, username, idOf } = await testMerchant(receiver, clock, [{ url: A }, { url: B }]);
    const event = newEvent(clock, { eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [event]);
    await stub.whenIdle();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { nextAttemptAt } = (await deliveriesOf(stub, username, event.eventId))[A]!;
      waits.push(Date.parse(nextAttemptAt!) - clock.now);
      clock.now = Date.parse(nextAttemptAt!);
      await runAlarm(stub);
    }
    // The jitter at its top in these tests (eventTransport.random = 1): the full backoff.
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000]);
    eventTransport.random = () => 0;
    clock.now = Date.parse((await deliveriesOf(stub, username, event.eventId))[A]!.nextAttemptAt!);
    await runAlarm(stub);
    // At the bottom: half of it (the 6th failure's 16 min).
    expect(Date.parse((await deliveriesOf(stub, username, event.eventId))[A]!.nextAttemptAt!) - clock.now).toBe(
      8 * MINUTE,
    );
    clock.now = event.createdAt + 3 * DAY - 1;
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]!.state).toBe('pending');
    clock.now = Date.parse((await deliveriesOf(stub, username, event.eventId))[A]!.nextAttemptAt!);
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({ state: 'held', lastStatus: 503 });
    expect(await stub.getEndpoint(username, idOf(A))).toMatchObject({ state: 'disabled', disabledReason: 'failing' });
    // B (which takes every type) is told; A is not sent it.
    const told = receiver.received.filter((r) => r.event.eventType === 'events.endpoint.disabled');
    expect(told.map((r) => [r.url, r.event.data])).toEqual([
      [B, { endpointId: idOf(A), url: A, disabledReason: 'failing' }],
    ]);
    // Held: nothing more is sent to A, whatever happens.
    const sent = receiver.idsAt(A).length;
    const later = newEvent(clock, { eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [later]);
    clock.advance(DAY);
    await runAlarm(stub);
    expect(receiver.idsAt(A)).toHaveLength(sent);
    expect((await deliveriesOf(stub, username, later.eventId))[A]!.state).toBe('held');
  });

  it('disables an endpoint that answers 410 at once; enabled again, it gets what was held, once, in order per subject', async () => {
    quiet();
    let gone = true;
    const receiver = new Receiver((r) =>
      r.url === A && gone ? new Response('gone', { status: 410 }) : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username, idOf } = await testMerchant(receiver, clock, [{ url: A }, { url: B }]);
    const first = newEvent(clock, { subject: 'token:H1' });
    await stub.append(username, [first]);
    await stub.whenIdle();
    expect(await stub.getEndpoint(username, idOf(A))).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    const held = [
      newEvent(clock, { subject: 'token:H1' }),
      newEvent(clock, { subject: 'token:H2' }),
      newEvent(clock, { subject: 'token:H1' }),
    ];
    await stub.append(username, held);
    clock.advance(DAY);
    await runAlarm(stub);
    expect(receiver.idsAt(A)).toEqual([first.eventId]);
    const listed = await stub.list(username, { deliveryState: 'held', endpointId: idOf(A) });
    expect(listed.events.map((e) => e.eventId)).toEqual([first, ...held].map((e) => e.eventId));
    gone = false;
    await stub.updateEndpoint(username, idOf(A), { state: 'enabled' });
    await stub.whenIdle();
    const after = receiver.idsAt(A).slice(1);
    expect([...after].sort()).toEqual([first, ...held].map((e) => e.eventId).sort());
    const order = (subject: string) =>
      after.filter((id) => [first, ...held].find((e) => e.eventId === id)!.subject === subject);
    expect(order('token:H1')).toEqual([first.eventId, held[0]!.eventId, held[2]!.eventId]);
    expect((await stub.getEndpoint(username, idOf(A)))!.disabledReason).toBeUndefined();
  });

  it('waits as long as Retry-After says on a 429 or 503, up to the backoff ceiling', async () => {
    quiet();
    const answers = [
      new Response('slow down', { status: 429, headers: { 'Retry-After': '600' } }),
      new Response('busy', { status: 503, headers: { 'Retry-After': '86400' } }),
      new Response('ok'),
    ];
    const receiver = new Receiver(() => answers.shift()!);
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    const next = async () => Date.parse((await deliveriesOf(stub, username, event.eventId))[A]!.nextAttemptAt!);
    expect((await next()) - clock.now).toBe(600_000);
    clock.now = await next();
    await runAlarm(stub);
    expect((await next()) - clock.now).toBe(60 * MINUTE);
    clock.now = await next();
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]!.state).toBe('delivered');
  });

  it('gives an event appended late its full 3 days from when it was appended, and then fails it while its endpoint works', async () => {
    quiet();
    const receiver = new Receiver((r) =>
      r.event.subject === 'tx:late' ? new Response('no', { status: 400 }) : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    // An owner's outbox appended it two days after it happened.
    const late = newEvent(clock, { subject: 'tx:late', createdAt: clock.now - 2 * DAY });
    await stub.append(username, [late]);
    await stub.whenIdle();
    const appendedAt = clock.now;
    // Another subject's event goes through every day: the endpoint works.
    for (let day = 1; day <= 3; day++) {
      clock.now = appendedAt + day * DAY - MINUTE;
      await stub.append(username, [newEvent(clock)]);
      await runAlarm(stub);
      expect((await deliveriesOf(stub, username, late.eventId))[A]!.state).toBe('pending');
    }
    clock.now = appendedAt + 3 * DAY + 2 * 60 * MINUTE;
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, late.eventId))[A]).toMatchObject({ state: 'failed', lastStatus: 400 });
  });
});

describe('a secret the keys cannot open', () => {
  it('waits a minute at a time, sends nothing, and fails once its 3 days are over; recover sends it then', async () => {
    quiet();
    const receiver = new Receiver(() => new Response('ok'));
    const clock = new Clock();
    const { stub, username, object, idOf } = await testMerchant(receiver, clock, [{ url: A }]);
    // Sealed with a key the Worker no longer has (white-box): as when TOKEN_ENCRYPTION_KEYS lost it.
    const sealed = await runInDurableObject(object, (_o, state) => {
      const row = state.storage.sql.exec<{ secret: string }>('SELECT secret FROM endpoints').one();
      state.storage.sql.exec("UPDATE endpoints SET secret = 'v1.broken'");
      return row.secret;
    });
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({
      state: 'pending',
      nextAttemptAt: new Date(clock.now + MINUTE).toISOString(),
    });
    clock.advance(3 * DAY);
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({ state: 'failed' });
    expect(receiver.received).toHaveLength(0);
    // The keys back: recover sends what failed.
    await runInDurableObject(object, (_o, state) => state.storage.sql.exec('UPDATE endpoints SET secret = ?', sealed));
    await stub.recover(username, idOf(A), 0);
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([event.eventId]);
  });
});

describe('order and parallelism', () => {
  it("keeps a subject's events in order while its first keeps failing; another subject's go on", async () => {
    quiet();
    let failing = true;
    const receiver = new Receiver((r) =>
      failing && r.event.eventId === first.eventId ? new Response('no', { status: 500 }) : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const first = newEvent(clock, { subject: 'token:T1' });
    const second = newEvent(clock, { subject: 'token:T1', eventType: 'tokens.token.deleted' });
    const other = newEvent(clock, { subject: 'token:T2' });
    await stub.append(username, [first, second, other]);
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([first.eventId, other.eventId]);
    for (let i = 0; i < 3; i++) {
      clock.advance(10 * MINUTE);
      await runAlarm(stub);
    }
    expect(receiver.idsAt(A)).toEqual([first.eventId, other.eventId, first.eventId, first.eventId, first.eventId]);
    expect((await deliveriesOf(stub, username, second.eventId))[A]).toMatchObject({ state: 'pending', attempts: 0 });
    // A later event of the waiting subject waits too; one of the other subject goes at once.
    const third = newEvent(clock, { subject: 'token:T1' });
    const another = newEvent(clock, { subject: 'token:T2' });
    await stub.append(username, [third, another]);
    await stub.whenIdle();
    expect(receiver.idsAt(A).slice(5)).toEqual([another.eventId]);
    failing = false;
    clock.advance(10 * MINUTE);
    await runAlarm(stub);
    expect(receiver.idsAt(A).slice(6)).toEqual([first.eventId, second.eventId, third.eventId]);
    const { events } = await stub.list(username);
    expect(events.map((e) => e.deliveries[0]!.state)).toEqual(Array(5).fill('delivered'));
  });

  it("sends a subject's next event once the one before it failed for good", async () => {
    quiet();
    const receiver = new Receiver((r) =>
      r.event.eventId === doomed.eventId ? new Response('no', { status: 400 }) : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const doomed = newEvent(clock, { subject: 'tx:1', eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [doomed]);
    await stub.whenIdle();
    clock.advance(10_000);
    const next = newEvent(clock, { subject: 'tx:1', eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [next]);
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([doomed.eventId]);
    // Another subject's event goes through: the endpoint works, so it is not disabled.
    clock.now = doomed.createdAt + 2 * DAY;
    const other = newEvent(clock, { subject: 'tx:2', eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [other]);
    await stub.whenIdle();
    clock.now = doomed.createdAt + 3 * DAY + MINUTE;
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, doomed.eventId))[A]!.state).toBe('failed');
    // Its window is over too, yet it gets its attempt, which succeeds: after every attempt of the one before.
    const sent = receiver.idsAt(A).filter((id) => id !== other.eventId);
    expect(sent.at(-1)).toBe(next.eventId);
    expect(new Set(sent.slice(0, -1))).toEqual(new Set([doomed.eventId]));
    expect((await deliveriesOf(stub, username, next.eventId))[A]).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it("lets an endpoint that hangs hold only its own share: the merchant's other endpoint gets every event", async () => {
    const hung: (() => void)[] = [];
    const receiver = new Receiver((r) =>
      r.url === B
        ? new Promise<Response>((resolve) => hung.push(() => resolve(new Response('ok'))))
        : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock, [{ url: B }, { url: A }]);
    // A deadline longer than the test: B hangs until released.
    eventTransport.timeoutMs = 10 * MINUTE;
    const events = Array.from({ length: 20 }, () => newEvent(clock));
    await stub.append(username, events);
    await receiver.until((received) => received.filter((r) => r.url === A).length === 20);
    // B holds its 4 slots (MAX_IN_FLIGHT_PER_ENDPOINT); A's 20 deliveries went through the others.
    expect(receiver.idsAt(B)).toHaveLength(4);
    expect(receiver.idsAt(A).sort()).toEqual(events.map((e) => e.eventId).sort());
    // B answers: the rest of its events follow, at most 4 at a time.
    while (receiver.idsAt(B).length < 20 || hung.length > 0) {
      await receiver.until(() => hung.length > 0);
      expect(hung.length).toBeLessThanOrEqual(4);
      await releaseInside(stub, hung);
    }
    await stub.whenIdle();
    const { events: listed } = await stub.list(username);
    expect(listed.flatMap((e) => e.deliveries.map((d) => d.state))).toEqual(Array(40).fill('delivered'));
  });

  it("delivers one merchant's events while another merchant's endpoint hangs", async () => {
    const receiver = new Receiver((r) =>
      r.url === B
        ? new Promise<Response>((resolve) => (releaseSlow = () => resolve(new Response('ok'))))
        : new Response('ok'),
    );
    let releaseSlow = () => {};

    const clock = new Clock();
    eventTransport.timeoutMs = 10 * MINUTE;
    const slow = await testMerchant(receiver, clock, [{ url: B }]);
    const fast = await testMerchant(receiver, clock, [{ url: A }]);
    await slow.stub.append(slow.username, [newEvent(clock)]);
    await receiver.until((received) => received.some((r) => r.url === B));
    const event = newEvent(clock);
    await fast.stub.append(fast.username, [event]);
    await fast.stub.whenIdle();
    expect((await deliveriesOf(fast.stub, fast.username, event.eventId))[A]!.state).toBe('delivered');
    await releaseInside(slow.stub, [releaseSlow]);
    await slow.stub.whenIdle();
    expect((await slow.stub.list(slow.username)).events[0]!.deliveries[0]!.state).toBe('delivered');
  });
});

describe('redelivery, retention, listing', () => {
  it('redelivers an event, whatever its state, with the same body; an unknown one is not found', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    clock.advance(DAY);
    expect(await stub.redeliver(username, event.eventId)).toBe('redelivered');
    await stub.whenIdle();
    const [first, again] = receiver.received;
    expect(again!.body).toBe(first!.body);
    expect(again!.headers.get('webhook-id')).toBe(first!.headers.get('webhook-id'));
    expect(again!.headers.get('webhook-timestamp')).not.toBe(first!.headers.get('webhook-timestamp'));
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({
      state: 'delivered',
      attempts: 2,
      deliveredAt: new Date(clock.now).toISOString(),
    });
    expect(await stub.redeliver(username, 'evt_unknown')).toBe('notFound');
    expect(await stub.redeliver('someone-else', event.eventId)).toBe('notFound');
  });

  it('gives a failed delivery a new window when redelivered', async () => {
    quiet();
    let up = false;
    const receiver = new Receiver((r) =>
      up || r.event.eventId !== event.eventId ? new Response('ok') : new Response('no', { status: 400 }),
    );
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    // The endpoint takes other events meanwhile: it works, and only this delivery fails.
    clock.now = event.createdAt + 2 * DAY;
    await stub.append(username, [newEvent(clock)]);
    await stub.whenIdle();
    clock.now = event.createdAt + 4 * DAY;
    await runAlarm(stub);
    const failed = (await deliveriesOf(stub, username, event.eventId))[A]!;
    expect(failed.state).toBe('failed');
    await stub.redeliver(username, event.eventId);
    await stub.whenIdle();
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({
      state: 'pending',
      attempts: failed.attempts + 1,
    });
    up = true;
    clock.advance(MINUTE);
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({
      state: 'delivered',
      attempts: failed.attempts + 2,
    });
  });

  it('ends the deliveries of a deleted endpoint without sending them, and counts no attempt for them', async () => {
    quiet();
    const receiver = new Receiver(() => new Response('no', { status: 500 }));
    const clock = new Clock();
    const { stub, username, idOf } = await testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    expect(await stub.deleteEndpoint(username, idOf(A))).toBe(true);
    expect(await stub.deleteEndpoint(username, idOf(A))).toBe(false);
    clock.advance(MINUTE);
    await runAlarm(stub);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveriesOf(stub, username, event.eventId))[idOf(A)]).toMatchObject({
      state: 'failed',
      attempts: 1,
      lastError: 'endpointRemoved',
    });
  });

  it('lists at most 100 events a page, oldest first, after `since`', async () => {
    const clock = new Clock();
    const { stub, username } = await testMerchant(new Receiver(), clock, []);
    const events = Array.from({ length: 101 }, () => newEvent(clock));
    await stub.append(username, events);
    const page = await stub.list(username);
    expect(page.events.map((e) => e.eventId)).toEqual(events.slice(0, 100).map((e) => e.eventId));
    expect(page.hasMore).toBe(true);
    expect(page.events[0]!.deliveries).toEqual([]);
    const next = await stub.list(username, { since: events[99]!.eventId });
    expect(next).toMatchObject({ events: [{ eventId: events[100]!.eventId }], hasMore: false });
    expect((await stub.list(username, { since: events[100]!.eventId })).events).toEqual([]);
    // An id that is not (or no longer) here: everything kept.
    expect((await stub.list(username, { since: 'evt_gone' })).events).toHaveLength(100);
  });

  it('keeps the events of a merchant with no endpoint, sending nothing, and drops them after 30 days too', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock, []);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    expect((await stub.list(username)).events.map((e) => [e.eventId, e.deliveries])).toEqual([[event.eventId, []]]);
    // Its only alarm is the retention's.
    const alarm = await runInDurableObject(stub.raw, (_o, state) => state.storage.getAlarm());
    expect(alarm).toBe(event.createdAt + 30 * DAY);
    clock.now = event.createdAt + 30 * DAY;
    await runAlarm(stub);
    expect((await stub.list(username)).events).toEqual([]);
    expect(receiver.received).toEqual([]);
  });

  it('drops events 30 days after they happened, and their deliveries', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const old = newEvent(clock);
    await stub.append(username, [old]);
    clock.advance(DAY);
    const recent = newEvent(clock);
    await stub.append(username, [recent]);
    await stub.whenIdle();
    clock.now = old.createdAt + 30 * DAY;
    await runAlarm(stub);
    expect((await stub.list(username)).events.map((e) => e.eventId)).toEqual([recent.eventId]);
    expect(await stub.redeliver(username, old.eventId)).toBe('notFound');
    // Appended again (an owner's very late retry), it is not sent again: it is past its 30 days.
    await stub.append(username, [old]);
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([old.eventId, recent.eventId]);
  });
});

describe('defects of the first log, each fixed', () => {
  it('a ping does not wait behind an earlier ping that keeps failing: each has its own subject', async () => {
    quiet();
    let first = true;
    const receiver = new Receiver(() => {
      const answer = first ? new Response('no', { status: 500 }) : new Response('ok');
      first = false;
      return answer;
    });
    const clock = new Clock();
    const { stub, username, idOf } = await testMerchant(receiver, clock);
    const failing = (await stub.ping(username, idOf(A), 'default'))!;
    await stub.whenIdle();
    const next = (await stub.ping(username, idOf(A), 'default'))!;
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([failing.eventId, next.eventId]);
    expect((await deliveriesOf(stub, username, next.eventId))[A]!.state).toBe('delivered');
    expect((await deliveriesOf(stub, username, failing.eventId))[A]!.state).toBe('pending');
  });

  it('a ping is redelivered to its endpoint, also one that lists the types it takes', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username, idOf } = await testMerchant(receiver, clock, [
      { url: A, events: ['tokens.token.deleted'] },
      { url: B },
    ]);
    const { eventId } = (await stub.ping(username, idOf(A), 'default'))!;
    await stub.whenIdle();
    expect(await stub.redeliver(username, eventId)).toBe('redelivered');
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([eventId, eventId]);
    expect(receiver.idsAt(B)).toEqual([]);
  });

  it("an attempt begun before a redelivery writes nothing onto the new round's delivery", async () => {
    quiet();
    const held: (() => void)[] = [];
    const receiver = new Receiver(
      () => new Promise<Response>((resolve) => held.push(() => resolve(new Response('ok')))),
    );
    const clock = new Clock();
    eventTransport.timeoutMs = 10 * MINUTE;
    const { stub, username } = await testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await receiver.until((r) => r.length === 1);
    // A redelivery while the first attempt is out: a new round.
    expect(await stub.redeliver(username, event.eventId)).toBe('redelivered');
    // The first attempt's 200 lands: it is recorded as an attempt, not as the new round's outcome.
    await releaseInside(stub, held);
    await receiver.until((r) => r.length === 2);
    const during = await stub.event(username, event.eventId);
    expect(during!.deliveries[0]).toMatchObject({ state: 'pending', attempts: 1 });
    expect(during!.deliveries[0]!.lastStatus).toBeUndefined();
    expect(during!.deliveries[0]!.history).toEqual([
      { at: expect.any(String), status: 200, durationMs: expect.any(Number) },
    ]);
    await releaseInside(stub, held);
    await stub.whenIdle();
    expect((await stub.event(username, event.eventId))!.deliveries[0]).toMatchObject({
      state: 'delivered',
      attempts: 2,
      lastStatus: 200,
    });
  });

  it('keeps the last 10 attempts of a delivery, newest first, each with its status or error', async () => {
    quiet();
    const receiver = new Receiver((r) =>
      r.event.subject === 'token:flaky' ? new Response('no', { status: 502 }) : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username } = await testMerchant(receiver, clock);
    const event = newEvent(clock, { subject: 'token:flaky' });
    await stub.append(username, [event]);
    await stub.whenIdle();
    for (let i = 0; i < 11; i++) {
      clock.now = Date.parse((await deliveriesOf(stub, username, event.eventId))[A]!.nextAttemptAt!);
      // Another subject's success keeps the endpoint enabled.
      await stub.append(username, [newEvent(clock)]);
      await runAlarm(stub);
    }
    const { deliveries } = (await stub.event(username, event.eventId))!;
    expect(deliveries[0]!.attempts).toBe(12);
    expect(deliveries[0]!.history).toHaveLength(10);
    const times = deliveries[0]!.history!.map((a) => Date.parse(a.at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(deliveries[0]!.history![0]).toEqual({
      at: new Date(clock.now).toISOString(),
      status: 502,
      error: 'status',
      durationMs: 0,
    });
  });
});

describe('endpoint changes racing deliveries', () => {
  /**
   * A receiver that holds every request until the test releases it: the endpoint's four slots are
   * in flight while the test changes the endpoint, and the other deliveries wait, whatever the
   * machine's speed (a receiver that merely answered late let a busy machine deliver all of them
   * before the change).
   */
  const heldReceiver = () => {
    let released = false;
    const receiver = new Receiver(async () => {
      while (!released) await new Promise((resolve) => setTimeout(resolve, 5));
      return new Response('ok');
    });
    return { receiver, release: () => void (released = true) };
  };

  it('a rotation while 20 deliveries go out: each request verifies with one version, and what follows with the new secret', async () => {
    const { receiver, release } = heldReceiver();
    const clock = new Clock();
    const { stub, username, endpoints } = await testMerchant(receiver, clock);
    const [{ endpointId, secret: old }] = endpoints as [(typeof endpoints)[0]];
    const events = Array.from({ length: 20 }, () => newEvent(clock));
    await stub.append(username, events);
    await receiver.until((r) => r.length >= 4);
    const rotated = (await stub.rotateSecret(username, endpointId, 0))!;
    const sentBefore = receiver.received.length;
    release();
    await receiver.until((r) => r.length === 20);
    await stub.whenIdle();
    // Checked once both secrets are known: the new one signs from the rotation's write, before its answer.
    const verifiedWith = receiver.received.map((r) =>
      [old, rotated.secret].filter((secret) => signedWith(r.headers, r.body, secret)),
    );
    expect(verifiedWith.every((v) => v.length === 1)).toBe(true);
    // Every request made after the rotation answered is signed with the new secret alone.
    expect(verifiedWith.slice(sentBefore).every((v) => v[0] === rotated.secret)).toBe(true);
    expect(sentBefore).toBeLessThan(20);
    expect(new Set(receiver.idsAt(A))).toEqual(new Set(events.map((e) => e.eventId)));
  });

  it('a PATCH of the URL while deliveries go out: each goes wholly to one URL, and those after the answer to the new one', async () => {
    const { receiver, release } = heldReceiver();
    const clock = new Clock();
    const { stub, username, idOf, endpoints } = await testMerchant(receiver, clock);
    receiver.secrets.set(B, [endpoints[0]!.secret]);
    const events = Array.from({ length: 12 }, () => newEvent(clock));
    await stub.append(username, events);
    await receiver.until((r) => r.length >= 4);
    await stub.updateEndpoint(username, idOf(A), { url: B });
    const sentBefore = receiver.received.length;
    release();
    await receiver.until((r) => r.length === 12);
    await stub.whenIdle();
    expect(receiver.received.slice(sentBefore).every((r) => r.url === B)).toBe(true);
    expect(receiver.idsAt(A).length + receiver.idsAt(B).length).toBe(12);
    expect(receiver.idsAt(B).length).toBeGreaterThan(0);
    expect(receiver.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
    const { events: listed } = await stub.list(username);
    expect(listed.map((e) => e.deliveries[0]!.state)).toEqual(Array(12).fill('delivered'));
  });
});
