import * as v from 'valibot';
import { fail } from '../failures';
import { EVENT_ID } from '../events/event-types';
import { EVENTS_API } from '../http/api-headers';
import type { Endpoint, EndpointCall } from '../http/endpoint';
import { toFieldError } from '../schemas/field-errors';
import { eventLog, type EventLogApi } from '../events/event-log-api';

/**
 * The merchant's events (docs/events.md): `GET /events?since=<eventId>` lists them with their
 * delivery state, `POST /events/{eventId}/redeliver` sends one again, and `POST /events/ping`
 * (`test` only) sends a `ping` to every endpoint. Each is one call to the merchant's own EventLog
 * object, which answers at once: no request waits for a delivery.
 */

const EVENT_ID_VALUE = v.pipe(v.string(), v.regex(EVENT_ID, 'Not an event id.'));

/** The query of `GET /events`; other parameters are ignored. */
export const EVENTS_QUERY = v.object({ since: v.optional(EVENT_ID_VALUE) });

function logOf(call: EndpointCall): EventLogApi {
  const { rc, merchant } = call;
  return eventLog(rc.env.EVENT_LOG, merchant.username, rc.settings.storageTimeoutMs);
}

export const listEventsEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const parsed = v.safeParse(EVENTS_QUERY, Object.fromEntries(call.rc.url.searchParams), { abortPipeEarly: true });
    if (!parsed.success) fail({ kind: 'urlContainsInvalidValue', errors: parsed.issues.map(toFieldError) });
    const page = await logOf(call).list(call.merchant.username, parsed.output.since);
    call.rc.log.events = page.events.length;
    return { status: 200, body: page };
  },
};

export const redeliverEventEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const eventId = call.params.eventId ?? '';
    // An id no event can have is no event of the merchant's.
    if (!EVENT_ID.test(eventId)) fail({ kind: 'resourceNotFound' });
    call.rc.log.eventId = eventId;
    if ((await logOf(call).redeliver(call.merchant.username, eventId)) === 'notFound')
      fail({ kind: 'resourceNotFound' });
    return { status: 202 };
  },
};

/**
 * `test` only, as the other sandbox controls (403 sandboxIsNotEnabled in `live`). The event's
 * `merchant.entity` is the merchant's first configured entity.
 */
export const pingEventsEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    if (call.rc.settings.environment !== 'test') fail({ kind: 'sandboxNotEnabled' });
    const entity = call.merchant.entities.keys().next().value ?? '';
    const { eventId } = await logOf(call).ping(call.merchant.username, entity);
    call.rc.log.eventId = eventId;
    return { status: 202, body: { eventId } };
  },
};
