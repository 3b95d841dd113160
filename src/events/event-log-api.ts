import { objectClient, type ObjectNamespace, type Remote } from '../storage/object-client';
import { objectStorage } from '../storage/object-storage';
import type { EventPage, NewEvent } from './event-types';

/**
 * The RPC interface of a merchant's event log (src/events/event-log.ts, docs/events.md): what
 * the owners append to and the events routes read, in a file below both the log and its callers.
 */
export interface EventLogMethods {
  append(username: string, events: NewEvent[]): Promise<{ appended: number }>;
  list(username: string, since?: string): EventPage;
  redeliver(username: string, eventId: string): Promise<'redelivered' | 'notFound'>;
  ping(username: string, entity: string): Promise<{ eventId: string }>;
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
