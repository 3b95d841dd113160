import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import { verifyEventSignature } from '../../examples/verify-event-signature.mjs';
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
  secret,
  testMerchant,
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

afterEach(() => {
  restoreTransport();
  vi.restoreAllMocks();
});

const A = 'https://a.merchant.test/hooks';
const B = 'https://b.merchant.test/tokens-only';

describe('append', () => {
  it('keeps one event and one delivery per endpoint for a burst of 20 identical appends', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = testMerchant(receiver, clock, [
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
    const { stub, username } = testMerchant(receiver, clock, [
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
    const { object, stub, username } = testMerchant(new Receiver(), clock);
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
  it('posts the event as JSON, signed: the receiver example verifies it, also with two secrets during a rotation', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const merchant = testMerchant(receiver, clock, [{ url: A }], [secret(2), secret(1)]);
    const event = newEvent(clock, { entity: 'nonpci' });
    await merchant.stub.append(merchant.username, [event]);
    await merchant.stub.whenIdle();
    const [r] = receiver.received;
    expect(r!.method).toBe('POST');
    expect(r!.redirect).toBe('manual');
    expect(r!.headers.get('Content-Type')).toBe('application/json');
    expect(JSON.parse(r!.body)).toEqual({
      eventId: event.eventId,
      eventType: event.eventType,
      createdAt: new Date(event.createdAt).toISOString(),
      merchant: { entity: 'nonpci' },
      data: event.data,
    });
    const header = r!.headers.get('Event-Signature')!;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const t = Number(/^t=(\d+)/.exec(header)![1]);
    expect(t).toBe(Math.floor(clock.now / 1000));
    // The receiver's clock: the same time, 5 minutes later (still valid), 5 minutes and a second (a replay).
    expect(await verifyEventSignature(r!.body, header, secret(1), t)).toBe(true);
    expect(await verifyEventSignature(r!.body, header, [secret(2)], t + 300)).toBe(true);
    expect(await verifyEventSignature(r!.body, header, [secret(3), secret(1)], t)).toBe(true);
    expect(await verifyEventSignature(r!.body, header, secret(3), t)).toBe(false);
    expect(await verifyEventSignature(r!.body, header, secret(1), t + 301)).toBe(false);
    expect(await verifyEventSignature(r!.body.replace('nonpci', 'default'), header, secret(1), t)).toBe(false);
    expect(await verifyEventSignature(r!.body, header.replace(/^t=\d+/, `t=${t + 1}`), secret(1), t)).toBe(false);
    expect(await verifyEventSignature(r!.body, null, secret(1), t)).toBe(false);

    // Rotation over: the old secret is gone, events are signed with the new one alone.
    merchant.merchant.secrets = [secret(2)];
    const next = newEvent(clock);
    await merchant.stub.append(merchant.username, [next]);
    await merchant.stub.whenIdle();
    const second = receiver.received[1]!;
    expect(second.headers.get('Event-Signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifyEventSignature(second.body, second.headers.get('Event-Signature'), secret(2), t)).toBe(true);
    expect(await verifyEventSignature(second.body, second.headers.get('Event-Signature'), secret(1), t)).toBe(false);
  });

  it('never logs a body or an endpoint beyond its origin', async () => {
    const logs: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => logs.push(line));
    vi.spyOn(console, 'error').mockImplementation((line: string) => logs.push(line));
    const receiver = new Receiver(() => new Response('no', { status: 500 }));
    const clock = new Clock();
    const url = 'https://a.merchant.test/hooks?key=merchant-own-secret';
    const { stub, username } = testMerchant(receiver, clock, [{ url }]);
    const event = newEvent(clock, { data: { marker: 'body-marker-never-logged' } });
    await stub.append(username, [event]);
    await stub.whenIdle();
    const line = logs.find((l) => l.includes('event.delivery') && l.includes(event.eventId));
    expect(line).toContain('"endpoint":"https://a.merchant.test"');
    expect(logs.join('\n')).not.toMatch(/body-marker-never-logged|merchant-own-secret/);
  });

  it('sends nothing without a signing secret, and delivers once the secret is there', async () => {
    quiet();
    const receiver = new Receiver();
    const clock = new Clock();
    const merchant = testMerchant(receiver, clock, [{ url: A }], []);
    const event = newEvent(clock);
    await merchant.stub.append(merchant.username, [event]);
    await merchant.stub.whenIdle();
    expect(receiver.received).toEqual([]);
    expect((await deliveriesOf(merchant.stub, merchant.username, event.eventId))[A]).toMatchObject({
      state: 'pending',
      attempts: 1,
      lastError: 'noSigningSecret',
    });
    merchant.merchant.secrets = [secret(1)];
    clock.advance(MINUTE);
    await runAlarm(merchant.stub);
    expect(receiver.idsAt(A)).toEqual([event.eventId]);
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
    const { stub, username } = testMerchant(receiver, clock);
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

  it('backs off exponentially, and marks the delivery failed once 3 days have passed since the event', async () => {
    quiet();
    const receiver = new Receiver(() => new Response('no', { status: 503 }));
    const clock = new Clock();
    const { stub, username } = testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { nextAttemptAt } = (await deliveriesOf(stub, username, event.eventId))[A]!;
      waits.push(Date.parse(nextAttemptAt!) - clock.now);
      clock.now = Date.parse(nextAttemptAt!);
      await runAlarm(stub);
    }
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000]);
    // Just before the window ends: still retried.
    clock.now = event.createdAt + 3 * DAY - 1;
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]!.state).toBe('pending');
    const last = (await deliveriesOf(stub, username, event.eventId))[A]!;
    expect(last.attempts).toBe(6);
    clock.now = Date.parse(last.nextAttemptAt!);
    await runAlarm(stub);
    const delivery = (await deliveriesOf(stub, username, event.eventId))[A]!;
    expect(delivery).toMatchObject({ state: 'failed', attempts: 7, lastStatus: 503, lastError: 'status' });
    expect(delivery.nextAttemptAt).toBeUndefined();
    // Failed is final: no more attempts.
    clock.advance(DAY);
    await runAlarm(stub);
    expect(receiver.received).toHaveLength(7);
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
    const { stub, username } = testMerchant(receiver, clock);
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
      r.event.eventId === doomed.eventId ? new Response('no', { status: 410 }) : new Response('ok'),
    );
    const clock = new Clock();
    const { stub, username } = testMerchant(receiver, clock);
    const doomed = newEvent(clock, { subject: 'tx:1', eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [doomed]);
    await stub.whenIdle();
    clock.advance(10_000);
    const next = newEvent(clock, { subject: 'tx:1', eventType: 'threeDS.authentication.completed' });
    await stub.append(username, [next]);
    await stub.whenIdle();
    expect(receiver.idsAt(A)).toEqual([doomed.eventId]);
    clock.now = doomed.createdAt + 3 * DAY + MINUTE;
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, doomed.eventId))[A]!.state).toBe('failed');
    // Its window (from its own event) is over too, yet it gets its attempt, which succeeds.
    expect(receiver.idsAt(A)).toEqual([doomed.eventId, doomed.eventId, next.eventId]);
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
    const { stub, username } = testMerchant(receiver, clock, [{ url: B }, { url: A }]);
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
    const slow = testMerchant(receiver, clock, [{ url: B }]);
    const fast = testMerchant(receiver, clock, [{ url: A }]);
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
    const { stub, username } = testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    clock.advance(DAY);
    expect(await stub.redeliver(username, event.eventId)).toBe('redelivered');
    await stub.whenIdle();
    const [first, again] = receiver.received;
    expect(again!.body).toBe(first!.body);
    expect(again!.headers.get('Event-Signature')).not.toBe(first!.headers.get('Event-Signature'));
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
    const receiver = new Receiver(() => (up ? new Response('ok') : new Response('no', { status: 500 })));
    const clock = new Clock();
    const { stub, username } = testMerchant(receiver, clock);
    const event = newEvent(clock);
    await stub.append(username, [event]);
    await stub.whenIdle();
    clock.now = event.createdAt + 4 * DAY;
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]!.state).toBe('failed');
    await stub.redeliver(username, event.eventId);
    await stub.whenIdle();
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({ state: 'pending', attempts: 3 });
    up = true;
    clock.advance(MINUTE);
    await runAlarm(stub);
    expect((await deliveriesOf(stub, username, event.eventId))[A]).toMatchObject({ state: 'delivered', attempts: 4 });
  });

  it('fails a pending delivery whose endpoint is no longer configured, without sending it', async () => {
    quiet();
    const receiver = new Receiver(() => new Response('no', { status: 500 }));
    const clock = new Clock();
    const merchant = testMerchant(receiver, clock);
    const event = newEvent(clock);
    await merchant.stub.append(merchant.username, [event]);
    await merchant.stub.whenIdle();
    merchant.merchant.endpoints = [];
    clock.advance(MINUTE);
    await runAlarm(merchant.stub);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveriesOf(merchant.stub, merchant.username, event.eventId))[A]).toMatchObject({
      state: 'failed',
      lastError: 'endpointRemoved',
    });
  });

  it('lists at most 100 events a page, oldest first, after `since`', async () => {
    const clock = new Clock();
    const { stub, username } = testMerchant(new Receiver(), clock, []);
    const events = Array.from({ length: 101 }, () => newEvent(clock));
    await stub.append(username, events);
    const page = await stub.list(username);
    expect(page.events.map((e) => e.eventId)).toEqual(events.slice(0, 100).map((e) => e.eventId));
    expect(page.hasMore).toBe(true);
    expect(page.events[0]!.deliveries).toEqual([]);
    const next = await stub.list(username, events[99]!.eventId);
    expect(next).toMatchObject({ events: [{ eventId: events[100]!.eventId }], hasMore: false });
    expect((await stub.list(username, events[100]!.eventId)).events).toEqual([]);
    // An id that is not (or no longer) here: everything kept.
    expect((await stub.list(username, 'evt_gone')).events).toHaveLength(100);
  });

  it('keeps the events of a merchant with no endpoint, sending nothing, and drops them after 30 days too', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { stub, username } = testMerchant(receiver, clock, []);
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
    const { stub, username } = testMerchant(receiver, clock);
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
