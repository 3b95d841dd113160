import { settingsOf } from '../config/settings';
import { objectClient, type ObjectNamespace, type Remote } from '../storage/object-client';
import { objectStorage } from '../storage/object-storage';
import type { EndpointChange, EndpointView, NewEndpoint } from './endpoint-rules';
import {
  mergePages,
  shardName,
  shardOf,
  type EndpointReport,
  type EndpointSet,
  type Position,
  type ShardPage,
  type ShardQuery,
} from './event-shards';
import type { EventPage, EventQuery, EventView, NewEvent } from './event-types';

/**
 * The RPC interface of the objects of a merchant's event log (src/events/event-log.ts,
 * docs/events.md), and how callers reach them: what the owners append to and the events routes
 * read, in a file below both the log and its callers. A log is split by subject into shards
 * (src/events/event-shards.ts); shard 0 also owns the merchant's endpoints.
 */
export interface EventLogMethods {
  append(username: string, events: NewEvent[], shard?: number): Promise<{ appended: number }>;
  page(username: string, query: ShardQuery): ShardPage;
  position(username: string, eventId: string): Omit<Position, 'shard'> | undefined;
  event(username: string, eventId: string): EventView | undefined;
  redeliver(username: string, eventId: string): Promise<'redelivered' | 'notFound'>;
  recover(username: string, endpointId: string, since: number): Promise<{ queued: number } | undefined>;
  // Shard 0 only: the merchant's endpoints.
  createEndpoint(username: string, input: NewEndpoint): Promise<{ endpoint: EndpointView; secret: string } | 'tooMany'>;
  listEndpoints(username: string): EndpointView[];
  getEndpoint(username: string, endpointId: string): EndpointView | undefined;
  updateEndpoint(username: string, endpointId: string, change: EndpointChange): Promise<EndpointView | undefined>;
  deleteEndpoint(username: string, endpointId: string): Promise<boolean>;
  rotateSecret(
    username: string,
    endpointId: string,
    previousValidForSeconds?: number,
  ): Promise<{ endpoint: EndpointView; secret: string } | undefined>;
  ping(username: string, endpointId: string, entity: string): Promise<{ eventId: string } | undefined>;
  endpointSet(username: string, shard: number): EndpointSet;
  reportEndpoint(username: string, endpointId: string, report: EndpointReport): Promise<{ lastSuccessAt?: number }>;
  // The other shards: shard 0's copy of the endpoints.
  syncEndpoints(username: string, shard: number, set: EndpointSet): Promise<void>;
}

export type EventLogApi = Remote<EventLogMethods>;

/**
 * One shard of the merchant's event log, each call with the deadline: an owner appending from
 * its alarm gets a StorageError on failure or timeout and appends again later (the append is
 * idempotent by eventId).
 */
export function eventLogShard(ns: ObjectNamespace, username: string, shard: number, timeoutMs: number): EventLogApi {
  const id = ns.idFromName(shardName(username, shard));
  return objectClient<EventLogApi>(() => ns.get(id), 'EventLog', timeoutMs);
}

/** The merchant's event log as the routes see it: its endpoints at shard 0, its events over every shard. */
export interface MerchantEventLog {
  /** Shard 0: the endpoints, and the pings. */
  owner: EventLogApi;
  list(query: EventQuery): Promise<EventPage>;
  event(eventId: string): Promise<EventView | undefined>;
  redeliver(eventId: string): Promise<'redelivered' | 'notFound'>;
  recover(endpointId: string, since: number): Promise<{ queued: number } | undefined>;
}

/** The merchant's event log; a shard failing or late fails the call (503 with Retry-After, like any storage call). */
export function merchantEventLog(env: Env, username: string, timeoutMs: number): MerchantEventLog {
  const shards = Array.from({ length: settingsOf(env).eventLogShards }, (_, i) =>
    eventLogShard(env.EVENT_LOG, username, i, timeoutMs),
  );
  const each = <T>(call: (log: EventLogApi) => Promise<T>): Promise<T[]> => Promise.all(shards.map(call));
  return {
    owner: shards[0]!,
    async list(query) {
      const { since, ...filters } = query;
      let after: Position | undefined;
      if (since !== undefined) {
        // The cursor's place in the merchant's order (an unknown cursor lists from the start).
        const found = await each((log) => log.position(username, since));
        const shard = found.findIndex((p) => p !== undefined);
        if (shard >= 0) after = { ...found[shard]!, shard };
      }
      const pages = await each((log) => log.page(username, { ...filters, ...(after ? { after } : {}) }));
      return mergePages(pages, query.order === 'desc');
    },
    async event(eventId) {
      return (await each((log) => log.event(username, eventId))).find((e) => e !== undefined);
    },
    async redeliver(eventId) {
      const answers = await each((log) => log.redeliver(username, eventId));
      return answers.includes('redelivered') ? 'redelivered' : 'notFound';
    },
    async recover(endpointId, since) {
      const answers = await each((log) => log.recover(username, endpointId, since));
      // Shard 0 owns the endpoint: the others know it from its copy.
      if (answers[0] === undefined) return undefined;
      return { queued: answers.reduce((n, a) => n + (a?.queued ?? 0), 0) };
    },
  };
}

/**
 * How a shard reaches another shard of its merchant's log (shard 0 sending the endpoints, a shard
 * reporting to shard 0): a seam for the tests only, to fail the calls an object makes itself.
 */
export const shardLinks = {
  shard: (env: Env, username: string, shard: number, timeoutMs: number): EventLogApi =>
    eventLogShard(env.EVENT_LOG, username, shard, timeoutMs),
};

/**
 * How the owners reach the merchants' event logs: each event to the shard of its subject, in one
 * call per shard (a subject's events keep their order). A seam for the tests only (to fail the
 * appends an object makes itself), as `objectStorage` is for its KV writes.
 */
export const eventSink = {
  append: async (env: Env, username: string, events: NewEvent[]): Promise<unknown> => {
    const shards = settingsOf(env).eventLogShards;
    const byShard = new Map<number, NewEvent[]>();
    for (const event of events) {
      const shard = shardOf(event.subject, shards);
      byShard.set(shard, [...(byShard.get(shard) ?? []), event]);
    }
    return Promise.all(
      [...byShard].map(([shard, batch]) =>
        eventLogShard(env.EVENT_LOG, username, shard, objectStorage.timeoutMs).append(username, batch, shard),
      ),
    );
  },
};
