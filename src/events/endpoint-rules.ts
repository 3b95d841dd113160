import * as v from 'valibot';
import { ISO_DATE_TIME, NO_CARD_NUMBER, NO_CARD_NUMBER_IN_URL, str } from '../schemas/fields';
import { integer, jsonObject } from '../schemas/field-errors';
import { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType } from './event-types';

/**
 * A merchant's event endpoints (docs/events.md "Endpoints"): what one is, which URLs may be one,
 * and the bodies of the requests that manage them. Pure: the EventLog object keeps them
 * (src/events/endpoint-table.ts), the routes validate with these schemas.
 */

/** At most this many endpoints per merchant: each event is one delivery per endpoint. */
export const MAX_EVENT_ENDPOINTS = 10;

/** A rotated-out secret signs for this long unless the rotation says otherwise… */
export const DEFAULT_PREVIOUS_VALID_S = 24 * 60 * 60;
/** …and never longer than this. */
export const MAX_PREVIOUS_VALID_S = 7 * 24 * 60 * 60;

/** An endpoint's id: `ep_` and 26 base32 characters (130 random bits), safe in a URL path. */
export const ENDPOINT_ID = /^ep_[a-z2-7]{26}$/;

export const ENDPOINT_STATES = ['enabled', 'disabled'] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

/** Why an endpoint is disabled: by the merchant, after a `410 Gone`, or after 3 days without a success. */
export const DISABLED_REASONS = ['merchant', 'gone', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** The types an endpoint takes: every one, or those listed. */
export type Subscription = 'all' | readonly SubscribableEventType[];

/** An endpoint as the API shows it: never its secret (only create and rotateSecret answer that, once). */
export interface EndpointView {
  endpointId: string;
  url: string;
  events: Subscription;
  description?: string;
  state: EndpointState;
  disabledReason?: DisabledReason;
  createdAt: string;
  previousSecretExpiresAt?: string;
}

/** Whether an endpoint takes an event of this type. */
export function takes(events: Subscription, eventType: string): boolean {
  return events === 'all' || (events as readonly string[]).includes(eventType);
}

const LOCAL_TEST_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * Why a URL cannot be an endpoint, or undefined (docs/events.md "Which URLs"): https (in `test`
 * also http to localhost or 127.0.0.1), no credentials, no fragment, at most 2048 characters; no IP
 * literal of a private, loopback, link-local, shared or reserved range, and in `live` no
 * `localhost`, `.localhost`, `.local` or `.internal` name (in `test`, localhost and 127.0.0.1 are the
 * developer's own machine).
 */
export function endpointUrlProblem(value: string, live: boolean): string | undefined {
  if (value.length > 2048) return 'is over 2048 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '' || value.includes('#')) return 'must not have a fragment';
  const host = url.hostname.toLowerCase();
  const local = !live && LOCAL_TEST_HOSTS.has(host);
  if (url.protocol === 'http:' && !local)
    return live ? 'must be https' : 'must be https (http only to localhost in test)';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be https';
  if (local) return undefined;
  if (host === 'localhost' || /\.(localhost|local|internal)\.?$/.test(host)) return 'must not name a local host';
  if (!isPublicAddress(host)) return 'must not be a private, loopback, link-local or reserved address';
  return undefined;
}

/** False for an IP literal of a non-public range; true for every name (and every public address). */
function isPublicAddress(host: string): boolean {
  if (host.startsWith('[')) return isPublicV6(host.slice(1, -1));
  // The URL parser has already turned every IPv4 form (hex, octal, short) into dotted decimal.
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (!m) return true;
  return isPublicV4(m.slice(1).map(Number) as [number, number, number, number]);
}

function isPublicV4([a, b]: [number, number, number, number]): boolean {
  if (a === 0 || a === 10 || a === 127) return false; // this network, private, loopback
  if (a === 100 && b >= 64 && b <= 127) return false; // shared (carrier-grade NAT)
  if (a === 169 && b === 254) return false; // link-local
  if (a === 172 && b >= 16 && b <= 31) return false; // private
  if (a === 192 && b === 168) return false; // private
  if (a === 192 && b === 0) return false; // IETF protocol assignments
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  return a < 224; // multicast and reserved
}

function isPublicV6(address: string): boolean {
  const a = address.toLowerCase();
  if (a === '::' || a === '::1') return false; // unspecified, loopback
  // IPv4-mapped (the URL parser writes them ::ffff:a.b.c.d as hex): judged as their IPv4 address.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
    return isPublicV4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  }
  const groups = a.split(':');
  const first = parseInt(groups[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return false; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80 || (first & 0xffc0) === 0xfec0) return false; // link-local, site-local
  if ((first & 0xff00) === 0xff00) return false; // multicast
  // Forms that carry an IPv4 address (NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32): refused whole.
  if (first === 0x2002 || (first === 0x64 && groups[1] === 'ff9b') || (first === 0x2001 && (groups[1] ?? '') === ''))
    return false;
  if (first === 0x2001 && parseInt(groups[1] ?? '', 16) === 0) return false;
  return first !== 0; // ::/16: the unspecified, loopback, compatibility and mapped forms
}

/** An endpoint URL field: refused with fieldHasInvalidValue at `$.url`, saying which rule. */
function urlField(live: boolean) {
  return v.pipe(
    str(1, 2048, 'The url'),
    NO_CARD_NUMBER_IN_URL,
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const problem = endpointUrlProblem(dataset.value, live);
      if (problem) addIssue({ message: `The url ${problem}.` });
    }),
  );
}

const EVENTS_FIELD = v.union(
  [
    v.literal('all'),
    v.pipe(
      v.array(v.picklist(SUBSCRIBABLE_EVENT_TYPES, 'Not an event type.')),
      v.minLength(1, 'An endpoint takes at least one event type, or "all".'),
      v.check((types) => new Set(types).size === types.length, 'An event type is listed once.'),
    ),
  ],
  'The events are "all" or a list of event types.',
);

const DESCRIPTION = v.pipe(str(1, 255, 'The description'), NO_CARD_NUMBER);

/** `POST /events/endpoints`. */
export const createEndpointBody = (live: boolean) =>
  jsonObject({ url: urlField(live), events: EVENTS_FIELD, description: v.optional(DESCRIPTION) });

/** `PATCH /events/endpoints/{endpointId}`: any of these; none changes nothing. */
export const updateEndpointBody = (live: boolean) =>
  jsonObject({
    url: v.optional(urlField(live)),
    events: v.optional(EVENTS_FIELD),
    description: v.optional(DESCRIPTION),
    state: v.optional(v.picklist(ENDPOINT_STATES, 'The state is enabled or disabled.')),
  });

/** `POST /events/endpoints/{endpointId}/rotateSecret`. */
export const ROTATE_SECRET_BODY = jsonObject({
  previousValidForSeconds: v.optional(integer(0, MAX_PREVIOUS_VALID_S)),
});

/** `POST /events/endpoints/{endpointId}/recover`. */
export const RECOVER_BODY = jsonObject({ since: ISO_DATE_TIME });

export type NewEndpoint = v.InferOutput<ReturnType<typeof createEndpointBody>>;
export type EndpointChange = v.InferOutput<ReturnType<typeof updateEndpointBody>>;
