import { objectClient, type ObjectNamespace, type Remote } from '../storage/object-client';
import { objectStorage } from '../storage/object-storage';
import type { EndpointChange, EndpointView, NewEndpoint } from './endpoint-rules';
import type { EventPage, EventQuery, EventView, NewEvent } from './event-types';

/**
 * The RPC interface of a merchant's event log (src/events/event-log.ts, docs/events.md): what
 * the owners append to and the events routes read, in a file below both the log and its callers.
 */
export interface EventLogMethods {
  append(username: string, events: NewEvent[]): Promise<{ appended: number }>;
  list(username: string, query?: EventQuery): EventPage;
  event(username: string, eventId: string): EventView | undefined;
  redeliver(username: string, eventId: string): Promise<'redelivered' | 'notFound'>;
  createEndpoint(username: string, input: NewEndpoint): Promise<{ endpoint: EndpointView; secret: string } | 'tooMany'>;
  listEndpoints(username: string): EndpointView[];
  getEndpoint(username: string, endpointId: string): EndpointView | undefined;
  updateEndpoint(username: string, endpointId: string, change: EndpointChange): Promise<EndpointView | undefined>;
  deleteEndpoint(username: string, endpointId: string): boolean;
  rotateSecret(
    username: string,
    endpointId: string,
    previousValidForSeconds?: number,
  ): Promise<{ endpoint: EndpointView; secret: string } | undefined>;
  ping(username: string, endpointId: string, entity: string): Promise<{ eventId: string } | undefined>;
  recover(username: string, endpointId: string, since: number): Promise<{ queued: number } | undefined>;
}

export type EventLogApi = Remote<EventLogMethods>;

/** The name of a merchant's event log: its username (which holds no `:`). */
export const eventLogName = (username: string): string => username;

/**
 * The merchant's event log, each call with the deadline: an owner appending from its alarm gets a
 * StorageError on failure or timeout and appends again later (the append is idempotent by eventId).
 */
export function eventLog(ns: ObjectNamespace, username: string, timeoutMs: number): EventLogApi {
  const id = ns.idFromName(eventLogName(username));
  return objectClient<EventLogApi>(() => ns.get(id), 'EventLog', timeoutMs);
}

/**
 * How the owners reach the merchants' event logs: a seam for the tests only (to fail the appends
 * an object makes itself), as `objectStorage` is for its KV writes. Nothing in the service changes it.
 */
export const eventSink = {
  append: (env: Env, username: string, events: NewEvent[]): Promise<unknown> =>
    eventLog(env.EVENT_LOG, username, objectStorage.timeoutMs).append(username, events),
};
