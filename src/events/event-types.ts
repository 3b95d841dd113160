/**
 * What an event is (docs/events.md): its types, its id, what an owner appends and what
 * `GET /events` answers. Pure: shared by the merchant configuration, the EventLog object, the
 * routes and the OpenAPI document.
 */

/** The event types a merchant's endpoint may subscribe to (docs/events.md "Types"). */
export const SUBSCRIBABLE_EVENT_TYPES = [
  'threeDS.authentication.completed',
  'tokens.token.updated',
  'tokens.token.deleted',
  'tokens.token.extended',
  'events.endpoint.disabled',
] as const;

/** `ping` is sent to one endpoint when asked (`POST /events/endpoints/{endpointId}/ping`), whatever it takes. */
export const PING = 'ping';

export const EVENT_TYPES = [...SUBSCRIBABLE_EVENT_TYPES, PING] as const;

export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * An event id: 1–128 of letters, digits and `_ . : -`, chosen by the owner that appends the event
 * (a retried append under the same id adds nothing), so that it can be derived from what the
 * event is about (`tok_<tokenId>_v3`) and stand in a URL path unencoded.
 */
export const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The longest subject (a transaction's or a token's name in its owner). */
export const MAX_SUBJECT_LENGTH = 512;

/** Events are kept, listed and redeliverable for 30 days after their `createdAt`. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** `GET /events` answers at most this many events a page; `hasMore` says whether more follow. */
export const EVENT_PAGE_SIZE = 100;

/** What an owner appends (EventLog `append`). */
export interface NewEvent {
  eventId: string;
  eventType: EventType;
  /**
   * What the event is about (a 3DS transaction, a token): events of one subject reach each
   * endpoint in the order they were appended, each after the one before was delivered or failed.
   */
  subject: string;
  /** When it happened (ms since the epoch): sent as ISO 8601 UTC; the retry window and the retention count from it. */
  createdAt: number;
  /** The merchant entity it concerns (`merchant.entity` of the body). */
  entity: string;
  /** The event's data: masked card data only, never a full card number. */
  data: Record<string, unknown>;
}

/** The body an endpoint receives, byte for byte the same on every attempt and redelivery. */
export interface EventBody {
  eventId: string;
  eventType: EventType;
  createdAt: string;
  /** What the event is about: a 3DS transaction, a token, an endpoint, a ping. */
  subject: string;
  /** Greater for each later event of the same subject: a receiver drops one older than what it has. */
  sequence: number;
  merchant: { entity: string };
  data: Record<string, unknown>;
}

/** `held`: waiting for its endpoint to be enabled again (docs/events.md "Endpoint health"). */
export const DELIVERY_STATES = ['pending', 'held', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** One attempt of a delivery: a request was sent. */
export interface AttemptView {
  at: string;
  /** The HTTP status of the answer, when there was one. */
  status?: number;
  /** Why it was no success: `status`, `timeout`, `network`, `redirect`. */
  error?: DeliveryError;
  durationMs: number;
}

/** One endpoint's delivery of an event, as `GET /events` shows it. */
export interface DeliveryView {
  endpointId: string;
  /** The endpoint's URL now (absent once it was deleted). */
  url?: string;
  state: DeliveryState;
  /** Requests sent so far (every attempt and redelivery). */
  attempts: number;
  /** The HTTP status of the last answer, when the last attempt got one. */
  lastStatus?: number;
  /** Why the last attempt failed without a 2xx, or why the delivery ended (`endpointRemoved`). */
  lastError?: DeliveryError;
  lastAttemptAt?: string;
  /** When it will be tried next (pending and due after the one before it in its subject). */
  nextAttemptAt?: string;
  deliveredAt?: string;
  /** The last 10 attempts, newest first (`GET /events/{eventId}` only). */
  history?: AttemptView[];
}

export const DELIVERY_ERRORS = ['status', 'timeout', 'network', 'redirect', 'endpointRemoved'] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number];

/** An event of the log, with each endpoint's delivery. */
export interface EventView extends EventBody {
  deliveries: DeliveryView[];
}

/** A page of `GET /events`. */
export interface EventPage {
  events: EventView[];
  /** More events follow the last one: ask again with `since=<its eventId>` (and the same filters). */
  hasMore: boolean;
}

/** What `GET /events` filters by. */
export interface EventQuery {
  since?: string;
  type?: EventType;
  deliveryState?: DeliveryState;
  endpointId?: string;
  order?: 'asc' | 'desc';
}

/** The wire body of an event: the same keys in the same order, always. */
export function eventBody(event: NewEvent, sequence: number): EventBody {
  return {
    eventId: event.eventId,
    eventType: event.eventType,
    createdAt: new Date(event.createdAt).toISOString(),
    subject: event.subject,
    sequence,
    merchant: { entity: event.entity },
    data: event.data,
  };
}

/** Why an appended event is not one (a bug in its owner): undefined when it is. */
export function newEventProblem(event: NewEvent): string | undefined {
  if (typeof event.eventId !== 'string' || !EVENT_ID.test(event.eventId)) return 'eventId is not an event id';
  if (!(EVENT_TYPES as readonly string[]).includes(event.eventType)) return 'eventType is not an event type';
  if (typeof event.subject !== 'string' || event.subject === '' || event.subject.length > MAX_SUBJECT_LENGTH)
    return 'subject is not 1–512 characters';
  if (!Number.isFinite(event.createdAt)) return 'createdAt is not a time';
  if (typeof event.entity !== 'string') return 'entity is not a string';
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data))
    return 'data is not an object';
  return undefined;
}
