import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settingsOf } from '../../src/config/settings';
import { eventSink, merchantEventLog, shardLinks, type EventLogApi } from '../../src/events/event-log-api';
import { shardOf } from '../../src/events/event-shards';
import { EVENT_PAGE_SIZE, type EventView } from '../../src/events/event-types';
import { burst, quiet } from './helpers';
import {
  Clock,
  DAY,
  newEvent,
  Receiver,
  restoreTransport,
  shardStub,
  shardStubs,
  shardsIdle,
  testMerchant,
} from './event-helpers';

/**
 * A merchant's event log split by subject (src/events/event-shards.ts, docs/events.md "Scale"):
 * appends go to the shard of their subject; shard 0 owns the endpoints and sends the whole set to
 * every shard before it answers (or from its alarm, to a shard it could not reach); a shard that
 * meets a `410` asks shard 0, which alone disables; the routes read every shard and merge.
 */

const DEFAULT_LINKS = { ...shardLinks };

afterEach(async () => {
  Object.assign(shardLinks, DEFAULT_LINKS);
  await restoreTransport();
  vi.restoreAllMocks();
});

const A = 'https://a.merchant.test/hooks';
const B = 'https://b.merchant.test/hooks';
const SHARDS = settingsOf(env).eventLogShards;

/** A subject that lives in `shard`. */
function subjectIn(shard: number, salt = ''): string {
  for (let k = 0; ; k++) {
    const subject = `token:${salt}${k}`;
    if (shardOf(subject, SHARDS) === shard) return subject;
  }
}

/** The endpoint rows (id, url, state, set version) a shard has. */
async function copyIn(username: string, shard: number) {
  return runInDurableObject(shardStub(username, shard).raw, (_o, state) => ({
    version: state.storage.sql.exec<{ version: number }>('SELECT version FROM endpoint_set').toArray()[0]?.version,
    endpoints: state.storage.sql
      .exec<{ endpoint_id: string; url: string; state: string }>(
        'SELECT endpoint_id, url, state FROM endpoints ORDER BY endpoint_id',
      )
      .toArray(),
  }));
}

/** The deliveries of each event over all shards, as `GET /events` lists them. */
async function listedAll(username: string, order: 'asc' | 'desc' = 'asc'): Promise<EventView[]> {
  const log = merchantEventLog(env, username, 5_000);
  const all: EventView[] = [];
  for (let since: string | undefined; ;) {
    const page = await log.list({ order, ...(since ? { since } : {}) });
    all.push(...page.events);
    if (!page.hasMore) return all;
    since = page.events.at(-1)!.eventId;
  }
}

describe('a log split by subject', () => {
  it('spreads subjects over the shards: every shard gets events, and each reaches the endpoint once', async () => {
    expect(SHARDS).toBeGreaterThan(1);
    const receiver = new Receiver();
    const clock = new Clock();
    const { username } = await testMerchant(receiver, clock, [{ url: A }]);
    const events = Array.from({ length: SHARDS * 3 }, (_, i) =>
      newEvent(clock, { subject: subjectIn(i % SHARDS, 's1-') + `-${i}` }),
    );
    await eventSink.append(env, username, events);
    await receiver.until((r) => r.length >= events.length);
    await shardsIdle(username);
    expect(receiver.idsAt(A).sort()).toEqual(events.map((e) => e.eventId).sort());
    expect(receiver.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
    const counts = await Promise.all(
      shardStubs(username).map((s) =>
        runInDurableObject(
          s.raw,
          (_o, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM events').one().n,
        ),
      ),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(events.length);
    expect(counts.filter((n) => n > 0).length).toBeGreaterThan(1);
  });

  it('keeps a subject in one shard, in order, through 20 appends of it at once', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { username } = await testMerchant(receiver, clock, [{ url: A }]);
    const subject = subjectIn(SHARDS - 1, 'order-');
    const events = Array.from({ length: 20 }, () => newEvent(clock, { subject }));
    await burst(20, () => eventSink.append(env, username, events));
    await receiver.until((r) => r.length >= 20);
    await shardsIdle(username);
    expect(receiver.idsAt(A)).toEqual(events.map((e) => e.eventId));
    const sequences = receiver.received.map((r) => r.event.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  });

  it('lists every shard as one log, in append order, a page at a time both ways', async () => {
    const receiver = new Receiver(() => new Response('no', { status: 500 }));
    const clock = new Clock();
    const { username } = await testMerchant(receiver, clock, []);
    const events = Array.from({ length: EVENT_PAGE_SIZE + 30 }, (_, i) =>
      newEvent(clock, { subject: `token:list-${i}` }),
    );
    // Appended in several calls, the clock moving: the merchant's order is the append order.
    for (let i = 0; i < events.length; i += 10) {
      await eventSink.append(env, username, events.slice(i, i + 10));
      clock.advance(1);
    }
    const ids = events.map((e) => e.eventId);
    // Within one call (one millisecond), the shards' events come shard by shard: the order is the same both ways.
    const asc = (await listedAll(username)).map((e) => e.eventId);
    const desc = (await listedAll(username, 'desc')).map((e) => e.eventId);
    expect(asc).toHaveLength(ids.length);
    expect(new Set(asc)).toEqual(new Set(ids));
    expect(desc).toEqual([...asc].reverse());
    for (let i = 0; i < events.length; i += 10)
      expect(new Set(asc.slice(i, i + 10))).toEqual(new Set(ids.slice(i, i + 10)));
  });

  it('finds, redelivers and recovers an event in any shard', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { username, idOf } = await testMerchant(receiver, clock, [{ url: A }]);
    const event = newEvent(clock, { subject: subjectIn(SHARDS - 1, 'find-') });
    await eventSink.append(env, username, [event]);
    await receiver.until((r) => r.length >= 1);
    await shardsIdle(username);
    const log = merchantEventLog(env, username, 5_000);
    expect((await log.event(event.eventId))?.deliveries[0]?.state).toBe('delivered');
    expect(await log.redeliver(event.eventId)).toBe('redelivered');
    await receiver.until((r) => r.length >= 2);
    expect(await log.redeliver('evt_nowhere')).toBe('notFound');
    // Delivered twice: nothing to recover; an unknown endpoint is none.
    expect(await log.recover(idOf(A), clock.now - DAY)).toEqual({ queued: 0 });
    expect(await log.recover('ep_aaaaaaaaaaaaaaaaaaaaaaaaaa', clock.now - DAY)).toBeUndefined();
  });
});

describe('the endpoints, owned by shard 0 and copied to every shard', () => {
  it('are in every shard when the change answers, at the same version after 20 PATCHes at once', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { username, stub, idOf } = await testMerchant(receiver, clock, [{ url: A }]);
    const urls = Array.from({ length: 20 }, (_, i) => `https://p${i}.merchant.test/hooks`);
    await Promise.all(urls.map((url) => stub.updateEndpoint(username, idOf(A), { url })));
    const owner = await copyIn(username, 0);
    for (let shard = 1; shard < SHARDS; shard++) expect(await copyIn(username, shard)).toEqual(owner);
    expect(urls).toContain(owner.endpoints[0]!.url);
  });

  it('a deleted endpoint ends its deliveries in every shard', async () => {
    quiet();
    const receiver = new Receiver(() => new Response('no', { status: 500 }));
    const clock = new Clock();
    const { username, stub, idOf } = await testMerchant(receiver, clock, [{ url: A }]);
    const events = Array.from({ length: SHARDS }, (_, i) => newEvent(clock, { subject: subjectIn(i, 'del-') }));
    await eventSink.append(env, username, events);
    await receiver.until((r) => r.length >= SHARDS);
    await shardsIdle(username);
    expect(await stub.deleteEndpoint(username, idOf(A))).toBe(true);
    const states = (await listedAll(username)).map((e) => [e.deliveries[0]!.state, e.deliveries[0]!.lastError]);
    expect(states).toEqual(Array(SHARDS).fill(['failed', 'endpointRemoved']));
  });

  it('a 410 met in another shard disables the endpoint at shard 0, holds it everywhere and tells the other endpoints', async () => {
    quiet();
    const receiver = new Receiver((r) => new Response(null, { status: r.url === A ? 410 : 200 }));
    const clock = new Clock();
    const { username, stub, idOf } = await testMerchant(receiver, clock, [{ url: A }, { url: B }]);
    const gone = newEvent(clock, { subject: subjectIn(SHARDS - 1, 'gone-') });
    await eventSink.append(env, username, [gone]);
    await receiver.until((r) => r.some((x) => x.event.eventType === 'events.endpoint.disabled'));
    await shardsIdle(username);
    expect(await stub.getEndpoint(username, idOf(A))).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    for (let shard = 1; shard < SHARDS; shard++)
      expect((await copyIn(username, shard)).endpoints.find((e) => e.endpoint_id === idOf(A))?.state).toBe('disabled');
    // Later events to A, in any shard, are held; B gets them.
    const later = Array.from({ length: SHARDS }, (_, i) => newEvent(clock, { subject: subjectIn(i, 'later-') }));
    await eventSink.append(env, username, later);
    await receiver.until(() => later.every((e) => receiver.idsAt(B).includes(e.eventId)));
    await shardsIdle(username);
    const log = merchantEventLog(env, username, 5_000);
    for (const e of later) {
      const view = await log.event(e.eventId);
      expect(view?.deliveries.find((d) => d.endpointId === idOf(A))?.state).toBe('held');
    }
    expect(receiver.idsAt(A)).toEqual([gone.eventId]);
  });

  it('3 days of failures in one shard do not disable an endpoint another shard delivers to', async () => {
    quiet();
    const failing = subjectIn(SHARDS - 1, 'sick-');
    const receiver = new Receiver((r) => new Response(null, { status: r.event.subject === failing ? 500 : 200 }));
    const clock = new Clock();
    const { username, stub, idOf } = await testMerchant(receiver, clock, [{ url: A }]);
    const sick = newEvent(clock, { subject: failing });
    await eventSink.append(env, username, [sick]);
    await receiver.until((r) => r.length >= 1);
    for (let day = 1; day <= 4; day++) {
      clock.advance(DAY);
      // A success in another shard each day, and the failing delivery tried again.
      await eventSink.append(env, username, [newEvent(clock, { subject: subjectIn(1, `well-${day}-`) })]);
      await shardsIdle(username);
      await runDurableObjectAlarm(shardStub(username, SHARDS - 1).raw);
      await shardsIdle(username);
    }
    expect(await stub.getEndpoint(username, idOf(A))).toMatchObject({ state: 'enabled' });
  });

  it('a shard the copy could not reach gets it from shard 0’s alarm; a copy whose answer was lost is taken once', async () => {
    quiet();
    const receiver = new Receiver();
    const clock = new Clock();
    const { username, stub } = await testMerchant(receiver, clock, []);
    const missed = SHARDS - 1;
    const late = 1;
    shardLinks.shard = (e, user, shard, timeoutMs): EventLogApi => {
      const real = DEFAULT_LINKS.shard(e, user, shard, timeoutMs);
      if (shard !== missed && shard !== late) return real;
      return new Proxy(real, {
        get(target, property, receiverArg) {
          if (property !== 'syncEndpoints') return Reflect.get(target, property, receiverArg);
          return async (...args: Parameters<EventLogApi['syncEndpoints']>) => {
            if (shard === missed) throw new Error('unreachable');
            await target.syncEndpoints(...args);
            throw new Error('the answer was lost');
          };
        },
      });
    };
    const created = await stub.createEndpoint(username, { url: A, events: 'all' });
    if (created === 'tooMany') throw new Error('tooMany');
    receiver.secrets.set(A, [created.secret]);
    expect((await copyIn(username, missed)).endpoints).toEqual([]);
    expect((await copyIn(username, late)).endpoints).toHaveLength(1);
    Object.assign(shardLinks, DEFAULT_LINKS);
    await runDurableObjectAlarm(stub.raw);
    expect(await copyIn(username, missed)).toEqual(await copyIn(username, 0));
    const event = newEvent(clock, { subject: subjectIn(missed, 'after-') });
    await eventSink.append(env, username, [event]);
    await receiver.until((r) => r.length >= 1);
    expect(receiver.idsAt(A)).toEqual([event.eventId]);
  });

  it('a shard that never had the endpoints (a log from before the split) asks shard 0 before its first append', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { username } = await testMerchant(receiver, clock, [{ url: A }]);
    const shard = SHARDS - 1;
    // As before the split: shard 0 has endpoints and no set version, the shard nothing.
    await runInDurableObject(shardStub(username, 0).raw, (_o, state) => {
      state.storage.sql.exec('DELETE FROM endpoint_set');
      state.storage.sql.exec('DELETE FROM endpoint_copies');
    });
    await runInDurableObject(shardStub(username, shard).raw, (_o, state) => {
      state.storage.sql.exec('DELETE FROM endpoint_set');
      state.storage.sql.exec('DELETE FROM endpoints');
    });
    const event = newEvent(clock, { subject: subjectIn(shard, 'old-') });
    await eventSink.append(env, username, [event]);
    await receiver.until((r) => r.length >= 1);
    expect(receiver.idsAt(A)).toEqual([event.eventId]);
    expect((await copyIn(username, shard)).endpoints.map((e) => e.url)).toEqual([A]);
  });

  it('a shard whose ask for the endpoints fails refuses the append, and the retry delivers', async () => {
    quiet();
    const receiver = new Receiver();
    const clock = new Clock();
    const { username } = await testMerchant(receiver, clock, [{ url: A }]);
    const shard = SHARDS - 1;
    await runInDurableObject(shardStub(username, shard).raw, (_o, state) => {
      state.storage.sql.exec('DELETE FROM endpoint_set');
      state.storage.sql.exec('DELETE FROM endpoints');
    });
    let asks = 0;
    shardLinks.shard = (e, user, index, timeoutMs): EventLogApi => {
      const real = DEFAULT_LINKS.shard(e, user, index, timeoutMs);
      return new Proxy(real, {
        get(target, property, receiverArg) {
          if (property !== 'endpointSet') return Reflect.get(target, property, receiverArg);
          return async (...args: Parameters<EventLogApi['endpointSet']>) => {
            if (asks++ === 0) throw new Error('shard 0 unreachable');
            return target.endpointSet(...args);
          };
        },
      });
    };
    const event = newEvent(clock, { subject: subjectIn(shard, 'ask-') });
    await expect(eventSink.append(env, username, [event])).rejects.toThrow();
    // Nothing was kept: the owner appends again (its outbox), and that one goes through.
    await eventSink.append(env, username, [event]);
    await receiver.until((r) => r.length >= 1);
    expect(receiver.idsAt(A)).toEqual([event.eventId]);
    expect(asks).toBe(2);
  });

  it('a 410 whose report to shard 0 fails is reported again at the next attempt', async () => {
    quiet();
    const receiver = new Receiver((r) => new Response(null, { status: r.url === A ? 410 : 200 }));
    const clock = new Clock();
    const { username, stub, idOf } = await testMerchant(receiver, clock, [{ url: A }]);
    let reports = 0;
    shardLinks.shard = (e, user, index, timeoutMs): EventLogApi => {
      const real = DEFAULT_LINKS.shard(e, user, index, timeoutMs);
      return new Proxy(real, {
        get(target, property, receiverArg) {
          if (property !== 'reportEndpoint') return Reflect.get(target, property, receiverArg);
          return async (...args: Parameters<EventLogApi['reportEndpoint']>) => {
            if (reports++ === 0) throw new Error('shard 0 unreachable');
            return target.reportEndpoint(...args);
          };
        },
      });
    };
    const shard = SHARDS - 1;
    await eventSink.append(env, username, [newEvent(clock, { subject: subjectIn(shard, 'gone2-') })]);
    await receiver.until((r) => r.length >= 1);
    await shardsIdle(username);
    expect(await stub.getEndpoint(username, idOf(A))).toMatchObject({ state: 'enabled' });
    // The retry, after its backoff: 410 again, reported, disabled.
    clock.advance(60_000);
    await runDurableObjectAlarm(shardStub(username, shard).raw);
    await shardsIdle(username);
    expect(reports).toBe(2);
    expect(await stub.getEndpoint(username, idOf(A))).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    expect(receiver.idsAt(A)).toHaveLength(2);
  });
});
