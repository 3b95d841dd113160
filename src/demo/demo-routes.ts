import { fail } from '../failures';
import type { EndpointResult, RequestContext } from '../http/endpoint';
import { EVENTS_MEDIA_TYPE, THREE_DS_MEDIA_TYPE, TOKENS_MEDIA_TYPE } from '../media-types';
import { ENDPOINT_ID } from '../events/endpoint-rules';
import { EVENT_ID } from '../events/event-types';
import { readBodyText, readJsonObject } from '../http/body';
import { originListed } from '../merchants/origins';
import type { Route } from '../app/route-table';
import { publicBaseUrl } from '../routes/deps-from-request';
import { WINDOW_SIZES } from '../schemas/threeds-requests';
import { THREEDS_PATH } from '../threeds/api-paths';
import { TOKEN_REFERENCE } from '../tokens/token-ids';
import { UPDATE_PATHS } from '../tokens/update-paths';
import { escapeHtml } from '../threeds/page-html';
import { scenarioCard } from '../fake-3ds-server/test-cards';
import { SCENARIOS } from '../threeds/scenarios';

/**
 * The demo checkout at /demo (`test` only: the deployed live Worker, src/live.ts, does not contain
 * it, and every /demo path answers 404 when ENVIRONMENT is not `test`, but in the live Worker of a
 * local live checkout, `npm run start:live`): a card form that shows the BIN
 * answer as the cardholder types (binLookup with the demo merchant's publishable key, from the
 * page), then runs the whole 3DS flow in the page. Its server side is this file: a small merchant
 * backend that calls the 3DS API as a merchant's server would, through the Worker's whole
 * pipeline with HTTP Basic credentials (DEMO_MERCHANT_CREDENTIALS, the local test merchant's).
 * The page's files are static assets (public/demo/), served through the ASSETS binding so that
 * the `test` gate applies to them too.
 */

const DEMO_ENTITY = 'default';

/** The demo's pages and files: script, styles and images from this origin only. */
const DEMO_CSP = /* @__PURE__ */ [
  "default-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Every /demo path is a 404 outside `test`, except in the live Worker built for a local live
 * checkout (`npm run start:live`: src/live.ts with LIVE_DEMO, {@link LIVE_DEMO_ROUTES}), where
 * the demo runs live 3-D Secure against the fake 3DS Server provider or another of one's choosing.
 */
function testOnly(rc: RequestContext): void {
  if (!demoServed(rc) && (rc as DemoContext).demoInLive !== true) fail({ kind: 'resourceNotFound' });
}

/**
 * Whether the test Worker's /demo answers: in `test` only (the landing page links it then). The
 * live Worker built for a local live checkout serves {@link LIVE_DEMO_ROUTES} instead.
 */
export function demoServed(rc: RequestContext): boolean {
  return rc.settings.environment === 'test';
}

/** A request context the live entry's demo routes have marked (see {@link LIVE_DEMO_ROUTES}). */
type DemoContext = RequestContext & { demoInLive?: true };

/**
 * The demo page's CSP. In live the challenge frame goes on to the issuer's ACS (any https origin,
 * or the local fake provider's), so frames may load those too.
 */
function demoCsp(rc: RequestContext): string {
  if (rc.settings.environment !== 'live') return DEMO_CSP;
  const provider = rc.settings.threeDsServer ? ` ${new URL(rc.settings.threeDsServer.baseUrl).origin}` : '';
  return DEMO_CSP.replace("frame-src 'self'", `frame-src 'self' https:${provider}`);
}

/**
 * Cards of the fake 3DS Server provider's scenarios (docs/fake-3ds-server.md), for the demo in a
 * local live checkout: the provider decides by the last four digits. 2.2.0 cards, which take the
 * local http pages.
 */
const LIVE_DEMO_CARDS = [
  ['frictionless, 3DS Method completes', '2000'],
  ['frictionless, 3DS Method times out', '2200'],
  ['challenge (code 1234)', '2072'],
  ['challenge passes by itself', '2070'],
  ['attempted (A)', '2020'],
  ['declined (N)', '2010'],
  ['unavailable (U)', '2050'],
  ["Mastercard, frictionless (subscriptions: recurring 3RI is Mastercard's)", '2000', '531265'],
] as const;

/** `username:password` of the demo merchant, or 503 when the demo is not configured. */
function demoCredentials(rc: RequestContext): { username: string; authorization: string } {
  const value = rc.env.DEMO_MERCHANT_CREDENTIALS;
  const colon = value?.indexOf(':') ?? -1;
  if (value === undefined || colon < 1) fail({ kind: 'misconfigured', what: 'DEMO_MERCHANT_CREDENTIALS is not set' });
  return { username: value.slice(0, colon), authorization: `Basic ${btoa(value)}` };
}

function withCsp(response: Response, csp: string): Response {
  const out = new Response(response.body, response);
  out.headers.set('Content-Security-Policy', csp);
  return out;
}

/** `GET /demo`: the page. */
async function demoPage(rc: RequestContext): Promise<Response> {
  testOnly(rc);
  return withCsp(await rc.env.ASSETS.fetch(new URL('/demo/', rc.url)), demoCsp(rc));
}

/** `GET /demo/*`: the page's script, styles and images. */
async function demoFile(rc: RequestContext): Promise<Response> {
  testOnly(rc);
  const response = await rc.env.ASSETS.fetch(new Request(rc.url, { method: 'GET' }));
  if (response.status === 404) fail({ kind: 'resourceNotFound' });
  return withCsp(response, demoCsp(rc));
}

/**
 * `GET /demo/config`: what the page needs: the demo merchant's publishable key for this origin,
 * its entity, the test magic values and the challenge window sizes.
 */
function demoConfig(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const origin = new URL(publicBaseUrl(rc)).origin;
  const merchant = rc.services.merchants.merchant(demoCredentials(rc).username);
  const key = merchant?.publishableKeys.find((k) => originListed(k.origins, origin));
  return Promise.resolve({
    status: 200,
    body: {
      publishableKey: key?.key ?? null,
      entity: DEMO_ENTITY,
      environment: rc.settings.environment,
      scenarios:
        rc.settings.environment === 'test'
          ? SCENARIOS.map((s) => ({
              cardHolderName: s.name,
              authenticate: s.authenticate,
              ...(s.verification ? { verification: s.verification } : {}),
            }))
          : [],
      liveCards:
        rc.settings.environment === 'live'
          ? LIVE_DEMO_CARDS.map(([label, suffix, prefix]) => ({
              label,
              cardNumber: scenarioCard(suffix, prefix ?? '457173'),
            }))
          : [],
      windowSizes: WINDOW_SIZES,
    },
  });
}

/** Calls one step of the 3DS API as the demo merchant's server, through the Worker's pipeline. */
function callThreeDs(rc: RequestContext, step: string, body: unknown): Promise<EndpointResult> {
  return callApi(rc, 'POST', `${THREEDS_PATH}/${step}`, THREE_DS_MEDIA_TYPE, body);
}

/** Calls the service's API as the demo merchant's server would, through the Worker's whole pipeline. */
async function callApi(
  rc: RequestContext,
  method: string,
  path: string,
  mediaType: string,
  body?: unknown,
): Promise<EndpointResult> {
  const request = new Request(`${rc.url.origin}${path}`, {
    method,
    headers: {
      Authorization: demoCredentials(rc).authorization,
      Accept: mediaType,
      ...(body !== undefined ? { 'Content-Type': mediaType } : {}),
      'WP-CorrelationId': rc.correlationId,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const response = await rc.self.fetch(request, rc.env, rc.ctx);
  const text = await response.text();
  return { status: response.status, body: text === '' ? { status: response.status } : (JSON.parse(text) as unknown) };
}

/** The demo shopper's saved cards: one namespace of the demo merchant's tokens (docs/tokens.md "Namespaces"). */
const DEMO_NAMESPACE = 'demo-shopper';

/** A token's reference (its href's last segment) as the demo page sends it back (it came from a listing). */
function tokenIdOf(value: unknown): string {
  if (typeof value !== 'string' || !TOKEN_REFERENCE.test(value)) fail({ kind: 'resourceNotFound' });
  return value;
}

/** `GET /demo/merchant/cards`: the shopper's saved cards (an empty list when there are none). */
async function demoCards(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const listed = await callApi(rc, 'GET', `/tokens?namespace=${DEMO_NAMESPACE}`, TOKENS_MEDIA_TYPE);
  return listed.status === 404 ? { status: 200, body: { _embedded: { tokens: [] } } } : listed;
}

/** How many of the merchant's latest events the demo shows. */
const DEMO_EVENTS_SHOWN = 8;

/**
 * `GET /demo/merchant/events`: the demo merchant's latest events, newest first, with their
 * deliveries (`GET /events`, paged through as a merchant's reconciliation would read it). A demo's
 * few events: it reads at most 50 pages (5,000 events), and shows the last of those.
 */
async function demoEvents(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  let latest: unknown[] = [];
  let since = '';
  for (let page = 0; page < 50; page++) {
    const listed = await callApi(
      rc,
      'GET',
      `/events${since && `?since=${encodeURIComponent(since)}`}`,
      EVENTS_MEDIA_TYPE,
    );
    if (listed.status !== 200) return listed;
    const body = listed.body as { events: { eventId: string }[]; hasMore: boolean };
    latest = [...latest, ...body.events].slice(-DEMO_EVENTS_SHOWN);
    if (!body.hasMore || body.events.length === 0) break;
    since = body.events[body.events.length - 1]!.eventId;
  }
  return { status: 200, body: { events: latest.reverse() } };
}

/** An endpoint's id from the page's path, checked before it goes into the API's path. */
function endpointIdOf(params: Record<string, string>): string {
  const endpointId = params.endpointId ?? '';
  if (!ENDPOINT_ID.test(endpointId)) fail({ kind: 'resourceNotFound' });
  return endpointId;
}

/** An event's id from the page's path, checked before it goes into the API's path. */
function eventIdOf(params: Record<string, string>): string {
  const eventId = params.eventId ?? '';
  if (!EVENT_ID.test(eventId)) fail({ kind: 'resourceNotFound' });
  return eventId;
}

/** `GET /demo/merchant/endpoints`: the demo merchant's event endpoints (`GET /events/endpoints`). */
async function demoEndpoints(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  return callApi(rc, 'GET', '/events/endpoints', EVENTS_MEDIA_TYPE);
}

/**
 * `POST /demo/merchant/endpoints` `{url}`: a new endpoint that takes every event type
 * (`POST /events/endpoints`); its 201 answer carries the signing secret, which the page shows once.
 */
async function demoCreateEndpoint(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  // The page's URL goes into the API's request as it is: its validation answers anything wrong.
  const input = await readJsonObject(rc.request);
  return callApi(rc, 'POST', '/events/endpoints', EVENTS_MEDIA_TYPE, {
    url: input.url,
    events: 'all',
    description: 'Added in the demo checkout',
  });
}

/** `POST /demo/merchant/endpoints/:endpointId/ping`: a ping to the endpoint: 202 `{eventId}`. */
async function demoPingEndpoint(rc: RequestContext, params: Record<string, string>): Promise<EndpointResult> {
  testOnly(rc);
  const endpointId = endpointIdOf(params);
  return callApi(rc, 'POST', `/events/endpoints/${endpointId}/ping`, EVENTS_MEDIA_TYPE);
}

/** `POST /demo/merchant/endpoints/:endpointId/delete`: deletes the endpoint (`DELETE`, 204): 200 `{deleted}`. */
async function demoDeleteEndpoint(rc: RequestContext, params: Record<string, string>): Promise<EndpointResult> {
  testOnly(rc);
  const endpointId = endpointIdOf(params);
  const deleted = await callApi(rc, 'DELETE', `/events/endpoints/${endpointId}`, EVENTS_MEDIA_TYPE);
  return deleted.status === 204 ? { status: 200, body: { deleted: endpointId } } : deleted;
}

/** `GET /demo/merchant/events/:eventId`: one event with its deliveries and their attempts (`GET /events/{eventId}`). */
async function demoEvent(rc: RequestContext, params: Record<string, string>): Promise<EndpointResult> {
  testOnly(rc);
  const eventId = eventIdOf(params);
  return callApi(rc, 'GET', `/events/${eventId}`, EVENTS_MEDIA_TYPE);
}

/** `POST /demo/merchant/cards`: saves the card (POST /tokens in the shopper's namespace): 201, 200 or 409. */
async function demoSaveCard(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const card = await readJsonObject(rc.request);
  return callApi(rc, 'POST', '/tokens', TOKENS_MEDIA_TYPE, {
    paymentInstrument: {
      type: 'card/front',
      cardNumber: card.cardNumber,
      cardExpiryDate: { month: card.month, year: card.year },
      ...(typeof card.cardHolderName === 'string' && card.cardHolderName !== ''
        ? { cardHolderName: card.cardHolderName }
        : {}),
    },
    merchant: { entity: DEMO_ENTITY },
    namespace: DEMO_NAMESPACE,
  });
}

/**
 * `POST /demo/merchant/cards/change` `{token, attribute, value}`: one update (`PUT` on the
 * attribute's link), or `{token, conflict}`: accepts a conflict, or `{token, delete: true}`;
 * `token` is the token's reference, the last segment of its href.
 */
async function demoChangeCard(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const input = await readJsonObject(rc.request);
  const tokenId = tokenIdOf(input.token);
  if (input.delete === true) return callApi(rc, 'DELETE', `/tokens/${tokenId}`, TOKENS_MEDIA_TYPE);
  if (typeof input.conflict === 'string' && /^[\w-]{22}$/.test(input.conflict)) {
    return callApi(rc, 'PUT', `/tokens/${tokenId}/conflicts/${input.conflict}`, TOKENS_MEDIA_TYPE, {});
  }
  const path = UPDATE_PATHS[input.attribute as keyof typeof UPDATE_PATHS];
  if (path === undefined) fail({ kind: 'resourceNotFound' });
  return callApi(rc, 'PUT', `/tokens/${tokenId}/${path}`, TOKENS_MEDIA_TYPE, input.value);
}

/** `POST /demo/merchant/init`: the merchant's server starts 3DS (deviceDataInitialize). */
async function demoInit(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  // The page's fields go into the API's request as they are: its validation answers anything wrong.
  const card = await readJsonObject(rc.request);
  return callThreeDs(rc, 'deviceDataInitialize', {
    transactionReference: `demo-${crypto.randomUUID()}`,
    merchant: { entity: DEMO_ENTITY },
    paymentInstrument: {
      type: 'card/front',
      cardNumber: card.cardNumber,
      cardExpiryDate: { month: card.month, year: card.year },
    },
  });
}

/** The page's card as the 3DS API takes it (its fields go in as they are: the API's validation answers anything wrong). */
function demoCard(input: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'card/front',
    cardNumber: input.cardNumber,
    cardExpiryDate: { month: input.month, year: input.year },
    ...(typeof input.cardHolderName === 'string' && input.cardHolderName !== ''
      ? { cardHolderName: input.cardHolderName }
      : {}),
  };
}

/** `POST /demo/merchant/authenticate`: the merchant's server authenticates, with the page's device data. */
async function demoAuthenticate(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const input = await readJsonObject(rc.request);
  return callThreeDs(rc, 'authenticate', {
    transactionReference: input.transactionReference,
    merchant: { entity: DEMO_ENTITY },
    instruction: {
      value: { amount: 4999, currency: 'GBP' },
      paymentInstrument: demoCard(input),
    },
    deviceData: {
      acceptHeader: rc.request.headers.get('Accept') ?? '*/*',
      userAgentHeader: rc.request.headers.get('User-Agent') ?? 'demo',
      collectionReference: input.collectionReference ?? '',
    },
    challenge: {
      returnUrl: `${publicBaseUrl(rc)}/demo/merchant/return`,
      windowSize: input.windowSize,
      // A subscription's first payment takes the series' default (a challenge mandated).
      ...(input.subscribe === true ? {} : { preference: 'noPreference' }),
    },
    ...(input.subscribe === true
      ? { recurring: { type: 'recurring', expiry: `${new Date().getUTCFullYear() + 1}-12-31`, frequencyDays: 30 } }
      : {}),
  });
}

/**
 * `POST /demo/merchant/renew`: the merchant's server renews a subscription without the shopper: a
 * 3RI (`merchantInitiated`) of £9.99 naming the first payment.
 */
async function demoRenew(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const input = await readJsonObject(rc.request);
  return callThreeDs(rc, 'merchantInitiated', {
    transactionReference: `demo-renewal-${crypto.randomUUID()}`,
    merchant: { entity: DEMO_ENTITY },
    priorTransactionReference: input.priorTransactionReference,
    type: 'recurring',
    instruction: {
      value: { amount: 999, currency: 'GBP' },
      paymentInstrument: demoCard(input),
    },
  });
}

/**
 * `POST /demo/merchant/return`: where the challenge page posts back (TransactionId = the
 * challenge reference, MD = the transaction reference). The merchant's server calls
 * verification and answers a page that hands the result to the checkout.
 */
async function demoReturn(rc: RequestContext): Promise<Response> {
  testOnly(rc);
  const form = new URLSearchParams((await readBodyText(rc.request)) ?? '');
  const verified = await callThreeDs(rc, 'verification', {
    transactionReference: form.get('MD') ?? '',
    merchant: { entity: DEMO_ENTITY },
    challenge: { reference: form.get('TransactionId') ?? '' },
  });
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Verification</title></head>
<body data-verification="${escapeHtml(JSON.stringify(verified.body))}"><p>Verification done.</p>
<script src="/demo/return.js"></script></body></html>`;
  return new Response(html, {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': demoCsp(rc).replace("frame-ancestors 'none'", "frame-ancestors 'self'"),
    },
  });
}

/** The demo checkout's routes, for the `test` Worker's route table (src/index.ts). */
export const DEMO_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/demo', page: demoPage },
  { method: 'GET', path: '/demo/config', page: demoConfig },
  { method: 'POST', path: '/demo/merchant/init', page: demoInit },
  { method: 'POST', path: '/demo/merchant/authenticate', page: demoAuthenticate },
  { method: 'POST', path: '/demo/merchant/return', page: demoReturn },
  { method: 'POST', path: '/demo/merchant/renew', page: demoRenew },
  { method: 'GET', path: '/demo/merchant/cards', page: demoCards },
  { method: 'POST', path: '/demo/merchant/cards', page: demoSaveCard },
  { method: 'POST', path: '/demo/merchant/cards/change', page: demoChangeCard },
  { method: 'GET', path: '/demo/merchant/events', page: demoEvents },
  { method: 'GET', path: '/demo/merchant/events/:eventId', page: demoEvent },
  { method: 'GET', path: '/demo/merchant/endpoints', page: demoEndpoints },
  { method: 'POST', path: '/demo/merchant/endpoints', page: demoCreateEndpoint },
  { method: 'POST', path: '/demo/merchant/endpoints/:endpointId/ping', page: demoPingEndpoint },
  { method: 'POST', path: '/demo/merchant/endpoints/:endpointId/delete', page: demoDeleteEndpoint },
  { method: 'GET', path: '/demo/*', page: demoFile },
];

/**
 * The same routes for the live Worker of a local live checkout (src/live.ts built with
 * `--define LIVE_DEMO:true`, which only `npm run start:live` and the browser tests do): they answer
 * in `live` too. The deployed live bundle does not contain them (`npm run check:bundle`).
 */
export const LIVE_DEMO_ROUTES: readonly Route[] = /* @__PURE__ */ DEMO_ROUTES.map((route) => ({
  ...route,
  page: (rc: RequestContext, params: Record<string, string>) => {
    (rc as DemoContext).demoInLive = true;
    return route.page!(rc, params);
  },
}));
