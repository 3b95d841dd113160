import type { DisabledReason, EndpointState } from './endpoint-rules';
import { EVENT_PAGE_SIZE, type EventPage, type EventQuery, type EventView } from './event-types';

/**
 * How a merchant's event log is split (docs/events.md "Scale"): into `EVENT_LOG_SHARDS` EventLog
 * objects (8 by default), each the owner of the subjects that hash to it, so that one merchant's
 * appends, deliveries and 30 days of bodies are spread over objects instead of one. Shard 0 is
 * named by the username (the object of a log from before the split) and also owns the merchant's
 * endpoints: it alone changes them, and sends each shard a copy of the whole set (a few rows,
 * secrets sealed) before it answers. Pure functions and the types the shards exchange.
 */

/** Subjects that live in shard 0 whatever their hash: those shard 0 makes itself (a ping, an endpoint's events). */
const SHARD_ZERO_SUBJECTS = ['ping:', 'endpoint:'];

/** The shard that owns a subject: every event of a subject is in one object, in its order. */
export function shardOf(subject: string, shards: number): number {
  if (shards <= 1 || SHARD_ZERO_SUBJECTS.some((p) => subject.startsWith(p))) return 0;
  // FNV-1a (32 bits) over the UTF-16 code units: stable, cheap and well spread.
  let hash = 0x811c9dc5;
  for (let i = 0; i < subject.length; i++) hash = Math.imul(hash ^ subject.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % shards;
}

/** An object's name: the username for shard 0 (no username holds `:`), `<username>:<i>` for the others. */
export function shardName(username: string, shard: number): string {
  return shard === 0 ? username : `${username}:${shard}`;
}

/** An endpoint as shard 0 sends it to the others: its row, secrets sealed, without shard 0's own health. */
export interface EndpointCopy {
  endpointId: string;
  url: string;
  /** The subscription as stored (JSON). */
  events: string;
  description: string | null;
  state: EndpointState;
  disabledReason: DisabledReason | null;
  createdAt: number;
  version: number;
  secret: string;
  previousSecret: string | null;
  previousExpiresAt: number | null;
}

/** The merchant's whole set of endpoints at a version (bumped by every change): a shard applies a newer one only. */
export interface EndpointSet {
  version: number;
  endpoints: EndpointCopy[];
}

/**
 * What a shard tells shard 0 about an endpoint: it answered `410`; it has failed there since
 * `since` (3 days or more: shard 0 disables it unless another shard had a success since); or it
 * delivered (at most hourly: what lets shard 0 tell a dead endpoint from one that fails only some events).
 */
export type EndpointReport = { kind: 'gone' } | { kind: 'failing'; since: number } | { kind: 'delivered'; at: number };

/** Where an event stands in the merchant's order: appended at `at`, in shard `shard` at `seq`. */
export interface Position {
  at: number;
  shard: number;
  seq: number;
}

/** `GET /events` as each shard answers it: the cursor's position instead of its eventId. */
export type ShardQuery = Omit<EventQuery, 'since'> & { after?: Position };

export interface ShardPage {
  events: (EventView & { position: Position })[];
}

/** Compares positions: by append time, then shard, then the shard's own order. */
export function comparePositions(a: Position, b: Position): number {
  return a.at - b.at || a.shard - b.shard || a.seq - b.seq;
}

/**
 * One page of `GET /events` from the shards' pages (each at most a page and one, in the asked
 * order, after the cursor): merged by position, cut to a page.
 */
export function mergePages(pages: ShardPage[], desc: boolean): EventPage {
  const all = pages.flatMap((p) => p.events);
  all.sort((a, b) => (desc ? -1 : 1) * comparePositions(a.position, b.position));
  return {
    events: all.slice(0, EVENT_PAGE_SIZE).map(({ position: _position, ...event }) => event),
    hasMore: all.length > EVENT_PAGE_SIZE,
  };
}
