import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { comparePositions, mergePages, shardName, shardOf, type ShardPage } from '../../src/events/event-shards';
import { EVENT_PAGE_SIZE, type EventView } from '../../src/events/event-types';

describe('shardOf', () => {
  it('is stable, within range, and puts the subjects shard 0 makes itself in shard 0', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.integer({ min: 1, max: 32 }), (subject, shards) => {
        const shard = shardOf(subject, shards);
        expect(shard).toBe(shardOf(subject, shards));
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(shards);
      }),
    );
    expect(shardOf('ping:evt_ping_1', 8)).toBe(0);
    expect(shardOf('endpoint:ep_x', 8)).toBe(0);
    expect(shardOf('token:anything', 1)).toBe(0);
  });

  it('spreads the subjects of real shapes evenly: 40,000 over 8, each shard within 5% of its share', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 20_000; i++) {
      counts[shardOf(`threeDS:tx-${i}`, 8)]!++;
      counts[shardOf(`token:TN${(i * 7919).toString(36).toUpperCase()}`, 8)]!++;
    }
    for (const n of counts) expect(Math.abs(n - 5_000)).toBeLessThan(250);
  });

  it('names shard 0 by the username, so a log from before the split is its shard 0', () => {
    expect(shardName('acme', 0)).toBe('acme');
    expect(shardName('acme', 3)).toBe('acme:3');
  });
});

describe('mergePages', () => {
  const event = (id: string, at: number, shard: number, seq: number) =>
    ({ eventId: id, deliveries: [], position: { at, shard, seq } }) as unknown as EventView & {
      position: { at: number; shard: number; seq: number };
    };

  it('orders by append time, then shard, then seq, and strips the positions', () => {
    const pages: ShardPage[] = [
      { events: [event('a', 1, 0, 1), event('d', 3, 0, 2)] },
      { events: [event('b', 1, 1, 1), event('c', 2, 1, 2)] },
    ];
    expect(mergePages(pages, false).events.map((e) => e.eventId)).toEqual(['a', 'b', 'c', 'd']);
    const desc = pages.map((p) => ({ events: [...p.events].reverse() }));
    const merged = mergePages(desc, true);
    expect(merged.events.map((e) => e.eventId)).toEqual(['d', 'c', 'b', 'a']);
    expect(merged.events[0]).not.toHaveProperty('position');
    expect(merged.hasMore).toBe(false);
  });

  it('cuts to a page and says more follow', () => {
    const many = Array.from({ length: EVENT_PAGE_SIZE + 1 }, (_, i) => event(`e${i}`, i, i % 2, i));
    const merged = mergePages(
      [{ events: many.filter((_, i) => i % 2 === 0) }, { events: many.filter((_, i) => i % 2) }],
      false,
    );
    expect(merged.events).toHaveLength(EVENT_PAGE_SIZE);
    expect(merged.events.at(-1)!.eventId).toBe(`e${EVENT_PAGE_SIZE - 1}`);
    expect(merged.hasMore).toBe(true);
    expect(comparePositions({ at: 1, shard: 2, seq: 0 }, { at: 1, shard: 1, seq: 9 })).toBeGreaterThan(0);
  });
});
