import * as v from 'valibot';
import { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType } from '../events/event-types';

/**
 * A merchant's event endpoints (docs/configuration.md "Events", docs/events.md): where its events
 * are posted and which types each takes. Checked when the configuration loads, like every block:
 * a URL that is not https (or http to the developer's own machine, never in `live`) fails
 * start-up and the tests, never a delivery.
 */

/** At most this many endpoints per merchant: each event is one delivery per endpoint. */
export const MAX_EVENT_ENDPOINTS = 10;

export interface EventEndpoint {
  url: string;
  /** The types it takes; `all` is every type. `ping` reaches every endpoint whatever this says. */
  events: 'all' | ReadonlySet<SubscribableEventType>;
}

export interface MerchantEvents {
  endpoints: readonly EventEndpoint[];
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * Why a URL cannot be an endpoint, or undefined: https (or http to localhost / 127.0.0.1, `test`
 * only), no credentials in it, no fragment, at most 2048 characters.
 */
export function endpointUrlProblem(value: string, live: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (value.length > 2048) return 'is over 2048 characters';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '' || value.includes('#')) return 'must not have a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname))
    return live ? 'must be https in live (http only to localhost in test)' : undefined;
  return 'must be https (http only to localhost or 127.0.0.1)';
}

/** The block as data/merchants.json has it (the live-only rule is checked after parsing). */
export const EVENTS_BLOCK = v.strictObject({
  endpoints: v.pipe(
    v.array(
      v.strictObject({
        url: v.pipe(
          v.string(),
          v.check(
            (url) => endpointUrlProblem(url, false) === undefined,
            'an endpoint is an https URL (http only to localhost or 127.0.0.1)',
          ),
        ),
        events: v.union([
          v.literal('all'),
          v.pipe(
            v.array(v.picklist(SUBSCRIBABLE_EVENT_TYPES)),
            v.minLength(1, 'an endpoint takes at least one event type, or "all"'),
            v.check((types) => new Set(types).size === types.length, 'an event type is listed once'),
          ),
        ]),
      }),
    ),
    v.maxLength(MAX_EVENT_ENDPOINTS, `at most ${MAX_EVENT_ENDPOINTS} endpoints`),
    v.check((es) => new Set(es.map((e) => e.url)).size === es.length, 'endpoint URLs must be unique'),
  ),
});

export function eventsOf(block: v.InferOutput<typeof EVENTS_BLOCK> | undefined): MerchantEvents {
  return {
    endpoints: (block?.endpoints ?? []).map((e) => ({
      url: e.url,
      events: e.events === 'all' ? 'all' : new Set(e.events),
    })),
  };
}

/** Whether an endpoint takes this type (`ping`: every endpoint). */
export function subscribes(endpoint: EventEndpoint, eventType: string): boolean {
  if (eventType === 'ping' || endpoint.events === 'all') return true;
  return (endpoint.events as ReadonlySet<string>).has(eventType);
}
