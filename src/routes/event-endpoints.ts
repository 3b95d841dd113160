import * as v from 'valibot';
import { fail } from '../failures';
import {
  createEndpointBody,
  ENDPOINT_ID,
  RECOVER_BODY,
  ROTATE_SECRET_BODY,
  updateEndpointBody,
} from '../events/endpoint-rules';
import { DELIVERY_STATES, EVENT_ID, EVENT_TYPES } from '../events/event-types';
import { EVENTS_API } from '../http/api-headers';
import type { Endpoint, EndpointCall } from '../http/endpoint';
import { validateBody } from '../http/validation';
import { toFieldError } from '../schemas/field-errors';
import { merchantEventLog, type MerchantEventLog } from '../events/event-log-api';

/**
 * The merchant's events and endpoints (docs/events.md): an endpoint route is one call to shard 0
 * of the merchant's own event log, an event route one call to each of its shards at once
 * (src/events/event-shards.ts); each answers at once: no request waits for a delivery. Another
 * merchant's endpoint or event is in other objects, so it is 404 here.
 */

const EVENT_ID_VALUE = v.pipe(v.string(), v.regex(EVENT_ID, 'Not an event id.'));

/** The query of `GET /events`; other parameters are ignored. */
export const EVENTS_QUERY = v.object({
  since: v.optional(EVENT_ID_VALUE),
  type: v.optional(v.picklist(EVENT_TYPES, 'Not an event type.')),
  deliveryState: v.optional(v.picklist(DELIVERY_STATES, 'Not a delivery state.')),
  endpointId: v.optional(v.pipe(v.string(), v.regex(ENDPOINT_ID, 'Not an endpoint id.'))),
  order: v.optional(v.picklist(['asc', 'desc'], 'The order is asc or desc.')),
});

function logOf(call: EndpointCall): MerchantEventLog {
  const { rc, merchant } = call;
  return merchantEventLog(rc.env, merchant.username, rc.settings.storageTimeoutMs);
}

const live = (call: EndpointCall): boolean => call.rc.settings.environment === 'live';

/** The path's endpoint id; one no endpoint can have is no endpoint of the merchant's. */
function endpointIdOf(call: EndpointCall): string {
  const endpointId = call.params.endpointId ?? '';
  if (!ENDPOINT_ID.test(endpointId)) fail({ kind: 'resourceNotFound' });
  call.rc.log.endpointId = endpointId;
  return endpointId;
}

/** The path's event id; one no event can have is no event of the merchant's. */
function eventIdOf(call: EndpointCall): string {
  const eventId = call.params.eventId ?? '';
  if (!EVENT_ID.test(eventId)) fail({ kind: 'resourceNotFound' });
  call.rc.log.eventId = eventId;
  return eventId;
}

function found<T>(value: T | undefined): T {
  if (value === undefined) fail({ kind: 'resourceNotFound' });
  return value;
}

export const listEventsEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const parsed = v.safeParse(EVENTS_QUERY, Object.fromEntries(call.rc.url.searchParams), { abortPipeEarly: true });
    if (!parsed.success) fail({ kind: 'urlContainsInvalidValue', errors: parsed.issues.map(toFieldError) });
    const page = await logOf(call).list(parsed.output);
    call.rc.log.events = page.events.length;
    return { status: 200, body: page };
  },
};

export const getEventEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const eventId = eventIdOf(call);
    return { status: 200, body: found(await logOf(call).event(eventId)) };
  },
};

export const redeliverEventEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const eventId = eventIdOf(call);
    if ((await logOf(call).redeliver(eventId)) === 'notFound') fail({ kind: 'resourceNotFound' });
    return { status: 202 };
  },
};

export const createEventEndpointEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: true,
  async handle(call) {
    const input = validateBody(createEndpointBody(live(call)), call.body);
    const created = await logOf(call).owner.createEndpoint(call.merchant.username, input);
    if (created === 'tooMany') fail({ kind: 'tooManyEndpoints' });
    call.rc.log.endpointId = created.endpoint.endpointId;
    return { status: 201, body: { ...created.endpoint, secret: created.secret } };
  },
};

export const listEventEndpointsEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    return { status: 200, body: { endpoints: await logOf(call).owner.listEndpoints(call.merchant.username) } };
  },
};

export const getEventEndpointEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const endpointId = endpointIdOf(call);
    return { status: 200, body: found(await logOf(call).owner.getEndpoint(call.merchant.username, endpointId)) };
  },
};

export const updateEventEndpointEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: true,
  async handle(call) {
    const endpointId = endpointIdOf(call);
    const change = validateBody(updateEndpointBody(live(call)), call.body);
    return {
      status: 200,
      body: found(await logOf(call).owner.updateEndpoint(call.merchant.username, endpointId, change)),
    };
  },
};

export const deleteEventEndpointEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const endpointId = endpointIdOf(call);
    if (!(await logOf(call).owner.deleteEndpoint(call.merchant.username, endpointId)))
      fail({ kind: 'resourceNotFound' });
    return { status: 204 };
  },
};

export const rotateSecretEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: true,
  async handle(call) {
    const endpointId = endpointIdOf(call);
    const { previousValidForSeconds } = validateBody(ROTATE_SECRET_BODY, call.body);
    const rotated = found(
      await logOf(call).owner.rotateSecret(call.merchant.username, endpointId, previousValidForSeconds),
    );
    return { status: 200, body: { ...rotated.endpoint, secret: rotated.secret } };
  },
};

/** A `ping` to the endpoint (test and live); its `merchant.entity` is the merchant's first entity. */
export const pingEventEndpointEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: false,
  async handle(call) {
    const endpointId = endpointIdOf(call);
    const entity = call.merchant.entities.keys().next().value ?? '';
    const { eventId } = found(await logOf(call).owner.ping(call.merchant.username, endpointId, entity));
    call.rc.log.eventId = eventId;
    return { status: 202, body: { eventId } };
  },
};

export const recoverEventEndpointEndpoint: Endpoint = {
  api: EVENTS_API,
  hasBody: true,
  async handle(call) {
    const endpointId = endpointIdOf(call);
    const { since } = validateBody(RECOVER_BODY, call.body);
    const recovered = found(await logOf(call).recover(endpointId, Date.parse(since)));
    call.rc.log.queued = recovered.queued;
    return { status: 202, body: recovered };
  },
};
