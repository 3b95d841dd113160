/**
 * The OpenAPI 3.1 document of the Worker, generated from the valibot schemas it validates with
 * (src/schemas/card-bin.ts, src/threeds/schemas.ts, src/tokens/schemas.ts, src/events/endpoint-rules.ts)
 * and the answer schemas of scripts/openapi/responses.ts and of the events below, converted by
 * @valibot/to-json-schema. A schema that does not convert fails the build (errorMode 'throw');
 * checks JSON Schema cannot express (Luhn, real dates, URL rules) go into `description` with the
 * error name they report.
 */
import { toJsonSchemaDefs, type ConversionConfig } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { CARD_BIN_API, EVENTS_API, THREE_DS_API, TOKENS_API, type ApiProfile } from '../../src/http/api-headers';
import {
  createEndpointBody,
  DEFAULT_PREVIOUS_VALID_S,
  DISABLED_REASONS,
  ENDPOINT_ID,
  ENDPOINT_STATES,
  MAX_EVENT_ENDPOINTS,
  MAX_PREVIOUS_VALID_S,
  RECOVER_BODY,
  ROTATE_SECRET_BODY,
  updateEndpointBody,
} from '../../src/events/endpoint-rules';
import {
  DELIVERY_ERRORS,
  DELIVERY_STATES,
  EVENT_ID,
  EVENT_PAGE_SIZE,
  EVENT_TYPES,
  MAX_SUBJECT_LENGTH,
  SUBSCRIBABLE_EVENT_TYPES,
} from '../../src/events/event-types';
import { THREE_DS_MEDIA_TYPES } from '../../src/media-types';
import { BIN_LOOKUP, PAN_LOOKUP } from '../../src/schemas/card-bin-requests';
import { checkErrorName } from '../../src/schemas/field-errors';
import { SCENARIOS } from '../../src/threeds/scenarios';
import {
  AUTHENTICATE,
  MERCHANT_INITIATED,
  COMPLETE_CHALLENGE,
  DEVICE_DATA_INITIALIZE,
  VERIFICATION,
} from '../../src/schemas/threeds-requests';
import { AUTHENTICATE_V3, DEVICE_DATA_INITIALIZE_V3 } from '../../src/schemas/threeds-requests-v3';
import { CREATE_TOKEN, TOKEN_UPDATES } from '../../src/schemas/token-requests';
import { UPDATE_PATHS } from '../../src/tokens/update-paths';
import {
  CARD_BIN_DATA,
  DEVICE_DATA_INITIALIZE_ANSWER,
  ERROR_DOCUMENT,
  PREFIX_BIN_DATA,
  SANDBOX_CHALLENGE_ANSWER,
  THREEDS_ANSWER,
  THREEDS_TRANSACTION,
  TOKEN_CONFLICT,
  TOKEN_LIST,
  TOKEN_RESOURCE,
} from './responses';

type Json = Record<string, unknown>;

/** The body of each token update, as its own schema (`TokenUpdate_<attribute>`). */
const TOKEN_UPDATE_SCHEMAS = Object.fromEntries(
  Object.entries(TOKEN_UPDATES).map(([attribute, schema]) => [`TokenUpdate_${attribute}`, schema]),
);

// --- Events (docs/events.md): the answers as the EventLog object builds them (src/events/event-types.ts,
// src/events/endpoint-rules.ts), and the bodies its endpoints receive. The requests are the routes' own schemas.

const ISO_MILLIS = v.pipe(v.string(), v.regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
const EVENT_ID_VALUE = v.pipe(v.string(), v.regex(EVENT_ID));
const ENDPOINT_ID_VALUE = v.pipe(v.string(), v.regex(ENDPOINT_ID));
const COUNT = v.pipe(v.number(), v.integer(), v.minValue(0));

/** An endpoint as the API shows it, never with its secret. */
const EVENT_ENDPOINT = v.object({
  endpointId: ENDPOINT_ID_VALUE,
  url: v.pipe(v.string(), v.url()),
  events: v.pipe(
    v.union([v.literal('all'), v.array(v.picklist(SUBSCRIBABLE_EVENT_TYPES))]),
    v.description(
      'Every event type (`all`, those added later too), or the types listed. A `ping` reaches it whatever it takes.',
    ),
  ),
  description: v.optional(v.string()),
  state: v.pipe(
    v.picklist(ENDPOINT_STATES),
    v.description(
      '`disabled`: nothing is sent to it; its deliveries are `held` until it is enabled again (PATCH `state`).',
    ),
  ),
  disabledReason: v.optional(
    v.pipe(
      v.picklist(DISABLED_REASONS),
      v.description(
        'Why it is disabled: by the merchant (`merchant`), after a `410 Gone` (`gone`), or after 3 days without a 2xx (`failing`).',
      ),
    ),
  ),
  createdAt: ISO_MILLIS,
  previousSecretExpiresAt: v.optional(
    v.pipe(ISO_MILLIS, v.description('After a rotation: until when the previous secret signs too.')),
  ),
});

/** The create and rotateSecret answers: the endpoint and its secret, shown this once. */
const EVENT_ENDPOINT_WITH_SECRET = v.object({
  ...EVENT_ENDPOINT.entries,
  secret: v.pipe(
    v.string(),
    v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/),
    v.description(
      'The signing secret (Standard Webhooks: `whsec_` and the base64 of 32 random bytes), answered this once: keep it where your receiver reads it.',
    ),
  ),
});

const EVENT_ENDPOINT_LIST = v.object({
  endpoints: v.pipe(
    v.array(EVENT_ENDPOINT),
    v.description(`The merchant's endpoints, oldest first (at most ${MAX_EVENT_ENDPOINTS}).`),
  ),
});

/** One attempt of a delivery: a request was sent. */
const DELIVERY_ATTEMPT = v.object({
  at: ISO_MILLIS,
  status: v.optional(
    v.pipe(v.number(), v.integer(), v.description('The HTTP status of the answer, when there was one.')),
  ),
  error: v.optional(v.picklist(DELIVERY_ERRORS)),
  durationMs: COUNT,
});

/** One endpoint's delivery of an event (docs/events.md "Listing"). */
const EVENT_DELIVERY = v.object({
  endpointId: ENDPOINT_ID_VALUE,
  url: v.optional(v.pipe(v.string(), v.url(), v.description("The endpoint's URL now; absent once it was deleted."))),
  state: v.pipe(
    v.picklist(DELIVERY_STATES),
    v.description(
      '`pending`: being sent or retried (with backoff, for 3 days from the event, its redelivery or its release), after the earlier events of its subject; ' +
        '`held`: its endpoint is disabled (kept with the event, 30 days); `delivered`: a 2xx within 10 s; ' +
        '`failed`: its window is over, or its endpoint was deleted (`lastError` `endpointRemoved`).',
    ),
  ),
  attempts: v.pipe(COUNT, v.description('Requests sent so far (every attempt and redelivery).')),
  lastStatus: v.optional(v.pipe(v.number(), v.integer())),
  lastError: v.optional(v.picklist(DELIVERY_ERRORS)),
  lastAttemptAt: v.optional(ISO_MILLIS),
  nextAttemptAt: v.optional(ISO_MILLIS),
  deliveredAt: v.optional(ISO_MILLIS),
});

/** What every event body has besides its type and data (docs/events.md "The body"). */
const EVENT_ENVELOPE = {
  eventId: v.pipe(
    EVENT_ID_VALUE,
    v.description('Stable across retries and redeliveries (also the `webhook-id` header): act once per eventId.'),
  ),
  createdAt: v.pipe(ISO_MILLIS, v.description('When the change happened.')),
  subject: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(MAX_SUBJECT_LENGTH),
    v.description(
      "What the event is about (a 3DS transaction, a token, an endpoint, a ping): a subject's events reach each endpoint in order, each after the one before ended.",
    ),
  ),
  sequence: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.description(
      'Greater for each later event of the same subject: drop an event whose sequence is lower than the last one you processed for its subject.',
    ),
  ),
  merchant: v.object({ entity: v.string() }),
};

/** An event of the log with each endpoint's delivery. */
const eventView = <D extends v.GenericSchema>(delivery: D) =>
  v.object({
    ...EVENT_ENVELOPE,
    eventType: v.picklist(EVENT_TYPES),
    data: v.pipe(
      v.record(v.string(), v.unknown()),
      v.description(
        'As its webhook body has it: the outcome, the token (masked: never a full card number), the endpoint.',
      ),
    ),
    deliveries: v.array(delivery),
  });

const EVENT_PAGE = v.object({
  events: v.pipe(
    v.array(eventView(EVENT_DELIVERY)),
    v.description(
      `The merchant's events of the last 30 days that match, oldest first (newest first with \`order=desc\`), at most ${EVENT_PAGE_SIZE}.`,
    ),
  ),
  hasMore: v.pipe(
    v.boolean(),
    v.description('More follow the last one: ask again with `since=<its eventId>` and the same filters.'),
  ),
});

/** `GET /events/{eventId}`: each delivery with its last attempts. */
const EVENT_DETAIL = eventView(
  v.object({
    ...EVENT_DELIVERY.entries,
    history: v.pipe(v.array(DELIVERY_ATTEMPT), v.maxLength(10), v.description('The last 10 attempts, newest first.')),
  }),
);

const EVENT_PING_ANSWER = v.object({ eventId: EVENT_ID_VALUE });
const RECOVER_ANSWER = v.object({
  queued: v.pipe(COUNT, v.description('Deliveries queued again (events that never reached the endpoint).')),
});

/** The body of `threeDS.authentication.completed`: the outcome as verification shows it, less authenticationValue. */
const THREEDS_COMPLETED_EVENT = v.object({
  ...EVENT_ENVELOPE,
  eventType: v.literal('threeDS.authentication.completed'),
  data: v.pipe(
    THREEDS_ANSWER,
    v.description(
      "The final outcome as `verification` (challenged) or `authenticate` (frictionless) answers it in the API version of the transaction's authenticate, never with `authenticationValue` (read it with verification or GET of the transaction).",
    ),
  ),
});

/** The body of a token event: the token as GET shows it (deleted: as it was), masked. */
const TOKEN_EVENT = v.object({
  ...EVENT_ENVELOPE,
  eventType: v.picklist(['tokens.token.updated', 'tokens.token.extended', 'tokens.token.deleted']),
  data: TOKEN_RESOURCE,
});

/** The body of `events.endpoint.disabled`, sent to the merchant's other endpoints. */
const ENDPOINT_DISABLED_EVENT = v.object({
  ...EVENT_ENVELOPE,
  eventType: v.literal('events.endpoint.disabled'),
  data: v.object({
    endpointId: ENDPOINT_ID_VALUE,
    url: v.pipe(v.string(), v.url()),
    disabledReason: v.picklist(['gone', 'failing']),
  }),
});

/** The body of `ping`: the endpoint it was sent to. */
const PING_EVENT = v.object({
  ...EVENT_ENVELOPE,
  eventType: v.literal('ping'),
  data: v.strictObject({ endpointId: ENDPOINT_ID_VALUE }),
});

/** Request and answer schemas, named as components. */
export const SCHEMAS: Record<string, v.GenericSchema> = {
  PanLookupRequest: PAN_LOOKUP,
  BinLookupRequest: BIN_LOOKUP,
  CardBinData: CARD_BIN_DATA,
  PrefixBinData: PREFIX_BIN_DATA,
  DeviceDataInitializeRequest: DEVICE_DATA_INITIALIZE,
  DeviceDataInitializeRequestV3: DEVICE_DATA_INITIALIZE_V3,
  DeviceDataInitializeAnswer: DEVICE_DATA_INITIALIZE_ANSWER,
  AuthenticateRequest: AUTHENTICATE,
  AuthenticateRequestV3: AUTHENTICATE_V3,
  MerchantInitiatedRequest: MERCHANT_INITIATED,
  VerificationRequest: VERIFICATION,
  ThreeDsAnswer: THREEDS_ANSWER,
  ThreeDsTransaction: THREEDS_TRANSACTION,
  CompleteChallengeRequest: COMPLETE_CHALLENGE,
  CompleteChallengeAnswer: SANDBOX_CHALLENGE_ANSWER,
  CreateTokenRequest: CREATE_TOKEN,
  TokenResource: TOKEN_RESOURCE,
  TokenConflict: TOKEN_CONFLICT,
  TokenList: TOKEN_LIST,
  ...TOKEN_UPDATE_SCHEMAS,
  CreateEventEndpointRequest: createEndpointBody(false),
  UpdateEventEndpointRequest: updateEndpointBody(false),
  RotateSecretRequest: ROTATE_SECRET_BODY,
  RecoverEventsRequest: RECOVER_BODY,
  EventEndpoint: EVENT_ENDPOINT,
  EventEndpointWithSecret: EVENT_ENDPOINT_WITH_SECRET,
  EventEndpointList: EVENT_ENDPOINT_LIST,
  EventPage: EVENT_PAGE,
  Event: EVENT_DETAIL,
  EventPingAnswer: EVENT_PING_ANSWER,
  RecoverEventsAnswer: RECOVER_ANSWER,
  ThreeDsCompletedEvent: THREEDS_COMPLETED_EVENT,
  TokenEvent: TOKEN_EVENT,
  EndpointDisabledEvent: ENDPOINT_DISABLED_EVENT,
  PingEvent: PING_EVENT,
  ErrorDocument: ERROR_DOCUMENT,
};

function describeCheck(jsonSchema: Json, message: unknown, requirement: unknown): Json {
  const name = checkErrorName(requirement) ?? 'bodyDoesNotMatchSchema';
  const rule = `Also checked, beyond this schema: a value that fails answers ${name}${typeof message === 'string' ? ` ("${message}")` : ''}.`;
  const description = typeof jsonSchema.description === 'string' ? `${jsonSchema.description} ${rule}` : rule;
  return { ...jsonSchema, description };
}

function describeRule(jsonSchema: Json): Json {
  const rule =
    'Also checked, beyond this schema: a value that fails answers fieldHasInvalidValue, its message saying which rule.';
  const description = typeof jsonSchema.description === 'string' ? `${jsonSchema.description} ${rule}` : rule;
  return { ...jsonSchema, description };
}

export const CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  // jsonObject() is pipe(custom object guard, object): the output type is the object.
  typeMode: 'output',
  errorMode: 'throw',
  overrideSchema: ({ valibotSchema, jsonSchema }) =>
    valibotSchema.type === 'custom' ? { ...jsonSchema, type: 'object' } : undefined,
  overrideAction: ({ valibotAction, jsonSchema }) => {
    // A check across fields (`partial_check`: an SDK's html UI type and its interface) reads the same.
    if (valibotAction.type === 'check' || valibotAction.type === 'partial_check')
      return describeCheck(
        jsonSchema as Json,
        (valibotAction as unknown as { message?: unknown }).message,
        (valibotAction as unknown as { requirement?: unknown }).requirement,
      );
    // A rule whose message says which part failed (the endpoint URL rules): fieldHasInvalidValue.
    if (valibotAction.type === 'raw_check') return describeRule(jsonSchema as Json);
    return undefined;
  },
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
};

/** The components.schemas of the document; throws when one does not convert. */
export function convertSchemas(schemas: Record<string, v.GenericSchema> = SCHEMAS): Record<string, Json> {
  return toJsonSchemaDefs(schemas, CONVERSION) as Record<string, Json>;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** Headers every answer carries. */
const COMMON_HEADERS = {
  'WP-CorrelationId': header('WP-CorrelationId'),
  'Cache-Control': header('Cache-Control'),
  'X-Content-Type-Options': header('X-Content-Type-Options'),
};

interface Api {
  /** The media type of each version the API speaks, from the profile the Worker negotiates with. */
  mediaTypes: readonly string[];
  tag: string;
  responseHeaders: Json;
}

const mediaTypesOf = (profile: ApiProfile): string[] => profile.versions.map((v) => v.mediaType);

const CARD_BIN: Api = {
  mediaTypes: mediaTypesOf(CARD_BIN_API),
  tag: 'Card BIN',
  responseHeaders: { 'WP-Api-Version': header('WP-Api-Version'), 'Bin-Data-Version': header('Bin-Data-Version') },
};
const THREE_DS: Api = { mediaTypes: mediaTypesOf(THREE_DS_API), tag: '3-D Secure', responseHeaders: {} };
const TOKENS: Api = { mediaTypes: mediaTypesOf(TOKENS_API), tag: 'Tokens', responseHeaders: {} };
const EVENTS: Api = { mediaTypes: mediaTypesOf(EVENTS_API), tag: 'Events', responseHeaders: {} };

/**
 * A request body or an answer under every media type of the API: each version of an operation
 * takes and answers the same shapes (docs/compatibility.md says what v2 and v3 clients get), but
 * for the requests version 3 of the 3DS API takes (`v3Schema`: `card/networkToken`).
 */
function content(api: Api, schema: string, v3Schema = schema): Json {
  return Object.fromEntries(
    api.mediaTypes.map((type) => [type, { schema: ref(type === THREE_DS_MEDIA_TYPES[3] ? v3Schema : schema) }]),
  );
}

/** The errors every JSON operation may answer, with what each status means. */
const ERROR_STATUSES: Record<string, string> = {
  '400':
    'headerIsMissing, headerHasInvalidValue (Content-Type naming another version than Accept, WP-Api-Version, WP-Sandbox-Simulate), bodyIsEmpty, bodyIsNotJson, bodyDoesNotMatchSchema, urlContainsInvalidValue, entityIsNotConfigured, merchantIsNotConfigured, paymentInstrumentIsNotSupported, currencyIsNotSupported, underlyingPaymentInstrumentHasExpired, transactionReferenceIsADuplicate (3DS authenticate, versions 2 and 3)',
  '401': 'headerIsMissing / headerHasInvalidValue (Authorization), accessDenied',
  '406':
    'headerHasInvalidValue: Accept allows none of the media types (3DS and Tokens: named explicitly, no wildcards)',
  '413': 'bodyIsTooLarge: over 64 KiB',
  '415': 'headerHasInvalidValue: Content-Type is none of the media types',
  '429': 'tooManyRequests: failed logins, publishable-key lookups, or WP-Sandbox-Simulate',
  '500': 'internalErrorOccurred',
  '503': 'serviceUnavailable: storage or configuration',
};

/** The error document, as a route outside the APIs answers it. */
const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorDocument' } } };

/** The 503 of a route outside the APIs: the Worker's settings are broken (docs/configuration.md). */
const SERVICE_ERROR_503 = {
  description: 'serviceUnavailable: the Worker is misconfigured.',
  headers: { ...COMMON_HEADERS, 'Retry-After': header('Retry-After') },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorDocument' } } },
};

function errorResponse(api: Api, status: string, description: string): Json {
  const extra: Json = {};
  if (status === '401') extra['WWW-Authenticate'] = header('WWW-Authenticate');
  if (status === '429' || status === '503') extra['Retry-After'] = header('Retry-After');
  return {
    description,
    headers: { ...COMMON_HEADERS, ...api.responseHeaders, ...extra },
    content: content(api, 'ErrorDocument'),
  };
}

function operation(
  api: Api,
  o: {
    id: string;
    summary: string;
    description?: string;
    request?: string;
    /** The request schema of version 3's media type, where it differs (3DS: `card/networkToken`). */
    requestV3?: string;
    success: Record<string, { description: string; schema?: string; headers?: Json }>;
    errors?: Record<string, string>;
    security?: Json[];
    parameters?: Json[];
    tags?: string[];
    deprecated?: boolean;
  },
): Json {
  const errors = { ...ERROR_STATUSES, ...o.errors };
  const responses: Json = {};
  for (const [status, s] of Object.entries(o.success)) {
    responses[status] = {
      description: s.description,
      headers: { ...COMMON_HEADERS, ...api.responseHeaders, ...s.headers },
      ...(s.schema ? { content: content(api, s.schema) } : {}),
    };
  }
  for (const [status, description] of Object.entries(errors)) {
    if (!(status in responses)) responses[status] = errorResponse(api, status, description);
  }
  return {
    operationId: o.id,
    tags: o.tags ?? [api.tag],
    summary: o.summary,
    ...(o.deprecated ? { deprecated: true } : {}),
    ...(o.description ? { description: o.description } : {}),
    ...(o.security ? { security: o.security } : {}),
    parameters: [
      ...(api === CARD_BIN ? [{ $ref: '#/components/parameters/WP-Api-Version' }] : []),
      { $ref: '#/components/parameters/WP-CorrelationId' },
      { $ref: '#/components/parameters/WP-Sandbox-Simulate' },
      ...(o.parameters ?? []),
    ],
    ...(o.request ? { requestBody: { required: true, content: content(api, o.request, o.requestV3) } } : {}),
    responses,
  };
}

/** An HTML page of the test ACS: a form post in, a page out. */
function page(id: string, summary: string, fields: Record<string, string>, required: string[]): Json {
  const html = { 'text/html': { schema: { type: 'string' } } };
  return {
    post: {
      operationId: id,
      tags: ['3-D Secure pages'],
      summary,
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              properties: Object.fromEntries(
                Object.entries(fields).map(([k, d]) => [k, { type: 'string', description: d }]),
              ),
              required,
            },
          },
        },
      },
      responses: {
        '200': { description: 'The page.', headers: COMMON_HEADERS, content: html },
        '400': {
          description: 'The form is not one this service issued, or it expired.',
          headers: COMMON_HEADERS,
          content: html,
        },
        '409': {
          description: 'The challenge was already shown or is already complete.',
          headers: COMMON_HEADERS,
          content: html,
        },
        '413': { description: 'The form is over 64 KiB.', headers: COMMON_HEADERS, content: html },
        '415': { description: 'Not a form post.', headers: COMMON_HEADERS, content: html },
        '500': { description: 'Something unexpected.', headers: COMMON_HEADERS, content: html },
        '503': {
          description: 'Storage is unavailable: retry.',
          headers: { ...COMMON_HEADERS, 'Retry-After': header('Retry-After') },
          content: html,
        },
      },
    },
  };
}

/** A live transaction's handle in a notification URL (docs/threeds.md "Notification URLs"). */
const HANDLE_PARAMETER = {
  name: 'handle',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[0-9a-f]{64}\\.[\\w-]{22}$' },
};

/**
 * The token in a token path: its reference, the last segment of its href (Worldpay's document
 * names the parameter `tokenId` and calls it an encrypted token): the owning object's id, then
 * the token's `tokenId` (docs/tokens.md "Token ids and hrefs").
 */
const TOKEN_ID_PARAMETER = {
  name: 'tokenId',
  in: 'path',
  required: true,
  description:
    "The token's reference: the last segment of its href (64 hexadecimal characters naming where the token is kept, then its `tokenId`). Follow the href as answered.",
  schema: { type: 'string', pattern: '^[0-9a-f]{64}[0-9A-HJ-NP-Z]{21}$' },
};

/** An event endpoint in a path: an id no endpoint can have answers 404 resourceNotFound. */
const ENDPOINT_ID_PARAMETER = {
  name: 'endpointId',
  in: 'path',
  required: true,
  description: "The endpoint's `endpointId`.",
  schema: { type: 'string', pattern: ENDPOINT_ID.source },
};

/** An event in a path: an id no event can have answers 404 resourceNotFound. */
const EVENT_ID_PARAMETER = {
  name: 'eventId',
  in: 'path',
  required: true,
  description: "The event's `eventId`.",
  schema: { type: 'string', pattern: EVENT_ID.source },
};

/**
 * The query parameters of `GET /events`, as its route validates them (EVENTS_QUERY of
 * src/routes/event-endpoints.ts, which the scripts cannot import: it reaches the Worker's types).
 */
const EVENTS_QUERY_PARAMETERS: Json[] = (
  [
    ['since', 'An eventId: only the events after it (before it with `order=desc`).', { pattern: EVENT_ID.source }],
    ['type', 'Only the events of this type.', { enum: [...EVENT_TYPES] }],
    [
      'deliveryState',
      'Only the events with a delivery in this state (a delivery to `endpointId`, when given).',
      { enum: [...DELIVERY_STATES] },
    ],
    ['endpointId', 'Only the events with a delivery to this endpoint.', { pattern: ENDPOINT_ID.source }],
    ['order', '`asc`: oldest first (the default); `desc`: newest first.', { enum: ['asc', 'desc'], default: 'asc' }],
  ] as const
).map(([name, description, schema]) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string', ...schema },
}));

const MAGIC_VALUES = SCENARIOS.map((s) => `\`${s.name}\``).join(', ');

export function buildOpenApiDocument(version: string): Json {
  const threeDs = (
    id: string,
    summary: string,
    request: string,
    success: string,
    description: string,
    deprecated = false,
  ): Json => ({
    post: operation(THREE_DS, {
      id,
      deprecated,
      summary,
      description,
      request,
      // Version 3 takes card/networkToken too: its own request schema, where the step has one.
      ...(`${request}V3` in SCHEMAS ? { requestV3: `${request}V3` } : {}),
      success: {
        '200': {
          description: "The step's answer; an identical retry gets the same answer byte for byte.",
          schema: success,
        },
      },
      errors: { '404': 'challengeNotFound (verification), tokenNotFound (a token href)' },
    }),
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'card-edge',
      version,
      summary:
        'Card BIN lookup, 3-D Secure and tokens on Cloudflare Workers, wire-compatible with Worldpay Access (Card BIN v1; 3DS and Tokens v1, v2, v3).',
      description:
        'Every JSON endpoint takes HTTP Basic credentials and answers errors as one `ErrorDocument`. ' +
        'The 3DS and Tokens operations speak versions 1, 2 and 3, each named by its media type: `Accept` picks the version ' +
        '(named explicitly), `Content-Type` must name the same one, and the answer, errors included, is in that media type; ' +
        'version 3 adds `authenticationOutage` to authenticate and takes `card/networkToken` in deviceDataInitialize and authenticate, versions 2 and 3 `transactionReferenceIsADuplicate`; ' +
        "version 3's verification answers `unavailable` where versions 1 and 2 answer `bypassed`. " +
        'In the `test` environment the 3DS cardholder name picks an outcome (' +
        MAGIC_VALUES +
        '), the challenge page shows its code (1234), and the sandbox controls work: ' +
        '`WP-Sandbox-Simulate` on any endpoint and `/sandbox/completeChallenge`. ' +
        "Operations marked as extensions are this service's, not Worldpay's.",
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative: resolved against where this document is served (OpenAPI 3.1, Server Object), so that the
    // document, and /docs beside it, name whichever origin serves them (wrangler dev on any port,
    // a deployment, PUBLIC_BASE_URL's host).
    servers: [{ url: '/', description: 'The origin serving this document' }],
    security: [{ basicAuth: [] }],
    tags: [
      { name: 'Card BIN', description: 'Brand, BIN, funding, issuer and country of a card (Worldpay Card BIN v1).' },
      { name: '3-D Secure', description: 'Customer verification (Worldpay 3DS v1, v2 and v3).' },
      { name: '3-D Secure pages', description: 'The issuer-side pages this service serves as a test ACS.' },
      { name: 'Tokens', description: 'Tokens for card numbers (Worldpay Tokens v1, v2 and v3).' },
      {
        name: 'Events',
        description:
          "The merchant's events (extensions): its endpoints, what was posted to them, their delivery, redelivery and recovery (docs/events.md).",
      },
      { name: 'Sandbox', description: 'Test-environment controls (extensions), refused in live.' },
      { name: 'Service', description: 'The landing page and the health check (extensions), without credentials.' },
    ],
    paths: {
      '/': {
        get: {
          operationId: 'landingPage',
          tags: ['Service'],
          summary: 'Landing page: what the service is, links to this reference, environment and BIN data version',
          security: [],
          responses: {
            '200': {
              description: 'The page (HTML, no script, nothing loaded from elsewhere).',
              headers: {
                ...COMMON_HEADERS,
                'Content-Security-Policy': {
                  required: true,
                  schema: { type: 'string', pattern: "^default-src 'none';" },
                },
              },
              content: { 'text/html': { schema: { type: 'string' } } },
            },
            '503': SERVICE_ERROR_503,
          },
        },
      },
      '/health': {
        get: {
          operationId: 'health',
          tags: ['Service'],
          summary: 'Health check for load balancers: answers from memory, calls no storage',
          description:
            'No credentials. 200 while the Worker is deployed, configured and answering; it reads no KV, Durable Object or provider, so a slow storage call never fails it. 503 when the Worker is misconfigured (as every API request would be).',
          security: [],
          responses: {
            '200': {
              description: 'Healthy.',
              headers: COMMON_HEADERS,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['status', 'environment', 'binDataVersion'],
                    properties: {
                      status: { const: 'ok' },
                      environment: { enum: ['test', 'live'] },
                      binDataVersion: {
                        type: ['string', 'null'],
                        description:
                          'As the `Bin-Data-Version` header of card BIN answers; null for an index without one.',
                      },
                    },
                  },
                },
              },
            },
            '503': SERVICE_ERROR_503,
          },
        },
      },
      '/api/cardBin/panLookup': {
        post: operation(CARD_BIN, {
          id: 'panLookup',
          summary: 'Look up a card number or token',
          description:
            'Send exactly one of `cardNumber` and `token` (both: fieldIsNotAllowed at $.token; neither: fieldIsMissing at $.cardNumber).',
          request: 'PanLookupRequest',
          success: { '200': { description: 'The BIN data of the card.', schema: 'CardBinData' } },
          errors: { '404': 'binNotFound, tokenNotFound' },
        }),
      },
      '/api/cardBin/binLookup': {
        post: operation(CARD_BIN, {
          id: 'binLookup',
          summary: 'Look up a BIN prefix (extension)',
          description:
            'For the checkout page while the cardholder types: 6 to 8 leading digits, no card number. Open to entities that are not PCI compliant, ' +
            'and to publishable keys (Bearer pk_…) from their listed origins, with CORS.',
          request: 'BinLookupRequest',
          security: [{ basicAuth: [] }, { publishableKey: [] }],
          parameters: [{ $ref: '#/components/parameters/Origin' }],
          success: {
            '200': {
              description: 'What every card under the prefix shares.',
              schema: 'PrefixBinData',
              headers: CORS_HEADERS,
            },
          },
          errors: {
            '403': 'originIsNotAllowed: a publishable key from an origin it does not list',
            '404': 'binNotFound',
          },
        }),
        options: {
          operationId: 'binLookupPreflight',
          tags: ['Card BIN'],
          summary: 'CORS preflight of binLookup',
          security: [],
          parameters: [{ $ref: '#/components/parameters/Origin' }],
          responses: {
            '204': {
              description: 'The origin is listed for a publishable key.',
              headers: {
                ...COMMON_HEADERS,
                ...CORS_HEADERS,
                'Access-Control-Allow-Methods': { schema: { const: 'POST' }, required: true },
                'Access-Control-Allow-Headers': { schema: { type: 'string' }, required: true },
                'Access-Control-Max-Age': { schema: { type: 'string' }, required: true },
              },
            },
            '403': errorResponse(CARD_BIN, '403', 'originIsNotAllowed'),
          },
        },
      },
      '/verifications/customers/3ds/deviceDataInitialize': threeDs(
        'deviceDataInitialize',
        'Start device data collection',
        'DeviceDataInitializeRequest',
        'DeviceDataInitializeAnswer',
        "The answer's URL and JWT are posted by the checkout to the DDC page in a hidden iframe.",
      ),
      '/verifications/customers/3ds/authenticate': threeDs(
        'authenticate',
        'Authenticate the cardholder',
        'AuthenticateRequest',
        'ThreeDsAnswer',
        'Frictionless outcomes, or `challenged` with the challenge to frame.',
      ),
      '/verifications/customers/3ds/deviceDataInitialization': threeDs(
        'deviceDataInitializationAlias',
        'Start device data collection (alias)',
        'DeviceDataInitializeRequest',
        'DeviceDataInitializeAnswer',
        'The same operation as /deviceDataInitialize, under the name some Worldpay clients use.',
        true,
      ),
      '/verifications/customers/3ds/authentication': threeDs(
        'authenticationAlias',
        'Authenticate the cardholder (alias)',
        'AuthenticateRequest',
        'ThreeDsAnswer',
        'The same operation as /authenticate, under the name some Worldpay clients use.',
        true,
      ),
      '/verifications/customers/3ds/merchantInitiated': threeDs(
        'merchantInitiated',
        'Authenticate a merchant-initiated payment of a series (3RI)',
        'MerchantInitiatedRequest',
        'ThreeDsAnswer',
        'An extension (docs/threeds.md "Series and 3RI"): a 3RI authentication, the cardholder absent, of a series set up by a customer-present authenticate with `recurring`; never `challenged`. Every check against the series is a 400 at the field at fault, before anything is sent.',
      ),
      '/verifications/customers/3ds/verification': threeDs(
        'verification',
        'Verify a challenged authentication',
        'VerificationRequest',
        'ThreeDsAnswer',
        "The challenge's one result; a challenge still open ends here as not completed.",
      ),
      '/verifications/customers/3ds/authentications/{transactionReference}': {
        get: operation(THREE_DS, {
          id: 'getTransaction',
          summary: 'Retrieve a 3DS transaction (extension)',
          description:
            "The transaction's state and, once there is one, its final outcome: what verification answers for a challenged transaction (the same answer for the same API version), what authenticate answered for a frictionless one. It changes nothing (an open challenge stays open) and never calls the 3DS Server provider. The merchant's own transactions only.",
          parameters: [
            {
              name: 'transactionReference',
              in: 'path',
              required: true,
              description: 'The transactionReference of the steps, percent-encoded.',
              schema: { type: 'string', minLength: 1 },
            },
            {
              name: 'entity',
              in: 'query',
              required: true,
              description: 'The `merchant.entity` of the steps.',
              schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9 ]*$' },
            },
          ],
          success: { '200': { description: 'The transaction.', schema: 'ThreeDsTransaction' } },
          errors: {
            '400':
              'urlContainsInvalidValue: the reference or the entity outside their rules, or no entity; entityIsNotConfigured, merchantIsNotConfigured',
            '404':
              "resourceNotFound: no such transaction of the merchant's entity (or its session ended: an hour from its first step, or from authenticate)",
          },
        }),
      },
      '/verifications/customers/3ds/sandbox/completeChallenge': {
        post: operation(THREE_DS, {
          id: 'completeChallenge',
          tags: ['Sandbox'],
          summary: 'Complete a pending challenge without a browser (test only, extension)',
          description:
            "Ends the challenge as passed, failed, cancelled or timedOut, as the cardholder's form would; the first ending wins. Then call verification.",
          request: 'CompleteChallengeRequest',
          success: { '200': { description: "The challenge's one result.", schema: 'CompleteChallengeAnswer' } },
          errors: { '403': 'sandboxIsNotEnabled: live', '404': 'challengeNotFound' },
        }),
      },
      '/tokens': {
        get: operation(TOKENS, {
          id: 'queryTokens',
          summary: "List a namespace's tokens, or find a token by id",
          description:
            '`namespace` lists its live tokens (oldest first; at most 16); with `tokenId`, that one token. `tokenId` alone finds a token without a namespace.',
          parameters: [
            {
              name: 'namespace',
              in: 'query',
              required: false,
              schema: { type: 'string', minLength: 1, maxLength: 64 },
            },
            { name: 'tokenId', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: 256 } },
          ],
          success: { '200': { description: 'The tokens found.', schema: 'TokenList' } },
          errors: { '404': 'resourceNotFound: no live token of the merchant matches' },
        }),
        post: operation(TOKENS, {
          id: 'createToken',
          summary: 'Create a token for a card',
          request: 'CreateTokenRequest',
          success: {
            '201': { description: 'Created.', schema: 'TokenResource', headers: { Location: header('Location') } },
            '200': {
              description: 'The card already has a token with these details.',
              schema: 'TokenResource',
              headers: { Location: header('Location') },
            },
            '409': {
              description: 'The card already has a token with other details: `conflicts` says which.',
              schema: 'TokenConflict',
              headers: { Location: header('Location') },
            },
          },
          errors: {
            '403': 'tooManyTokensForNamespace: the namespace holds 16 other cards',
            '422': 'unrecognizedCardBrand',
            '500':
              'internalErrorOccurred; tokenizationNotEnabled in version 3 only: an entity that may not tokenize (not PCI compliant; versions 1 and 2: 400 merchantIsNotConfigured)',
          },
        }),
      },
      '/tokens/{tokenId}': {
        parameters: [TOKEN_ID_PARAMETER],
        get: operation(TOKENS, {
          id: 'getToken',
          summary: 'Read a token',
          success: { '200': { description: 'The token.', schema: 'TokenResource' } },
          errors: { '404': 'resourceNotFound' },
        }),
        delete: operation(TOKENS, {
          id: 'deleteToken',
          summary: 'Delete a token',
          success: { '204': { description: 'Deleted.' } },
          errors: { '404': 'resourceNotFound' },
        }),
      },
      ...Object.fromEntries(
        (Object.keys(UPDATE_PATHS) as (keyof typeof UPDATE_PATHS)[]).map((attribute) => [
          `/tokens/{tokenId}/${UPDATE_PATHS[attribute]}`,
          {
            parameters: [TOKEN_ID_PARAMETER],
            put: operation(TOKENS, {
              id: `update${attribute[0]!.toUpperCase()}${attribute.slice(1)}`,
              summary: `Update the token's ${attribute} (the \`tokens:${attribute}\` link)`,
              description:
                'One attribute per call, validated as on creation. At most 50 updates of a token in any rolling 30 days.',
              request: `TokenUpdate_${attribute}`,
              success: { '204': { description: 'Updated.' } },
              errors: {
                '404': "resourceNotFound: not the merchant's live token",
                '429': 'maximumUpdatesExceeded (Retry-After: when the next update is possible), or tooManyRequests',
              },
            }),
          },
        ]),
      ),
      '/tokens/{tokenId}/conflicts/{conflictId}': {
        parameters: [
          TOKEN_ID_PARAMETER,
          { name: 'conflictId', in: 'path', required: true, schema: { type: 'string', pattern: '^[\\w-]{22}$' } },
        ],
        get: operation(TOKENS, {
          id: 'getConflicts',
          summary: 'Read the conflicts of a second tokenization (the `tokens:conflicts` link)',
          success: { '200': { description: 'The token as it stands, and the conflicts.', schema: 'TokenConflict' } },
          errors: {
            '404': "resourceNotFound: the conflict expired (30 minutes), was accepted, or is not the merchant's",
          },
        }),
        put: operation(TOKENS, {
          id: 'acceptConflicts',
          summary: 'Accept the conflicts: the token takes every conflicting value',
          description: 'Counts as one update toward the 50. No body is needed; any body is ignored.',
          success: { '204': { description: 'Accepted.' } },
          errors: {
            '404': "resourceNotFound: the conflict expired, was accepted, or is not the merchant's",
            '429': 'maximumUpdatesExceeded, or tooManyRequests',
          },
        }),
      },
      '/events': {
        get: operation(EVENTS, {
          id: 'listEvents',
          summary: "List the merchant's events and their delivery (extension)",
          description:
            "The merchant's events of the last 30 days, oldest first (`order=desc`: newest first), after `since` when given (all of them when `since` is no longer or never was one of its events), " +
            `filtered by \`type\` and by a delivery's \`deliveryState\` and/or \`endpointId\`, at most ${EVENT_PAGE_SIZE} a page (\`hasMore\`: ask again with \`since\` = the last eventId and the same filters), ` +
            "each with every endpoint's delivery. For reconciliation: it never waits for a delivery. Other query parameters are ignored.",
          parameters: EVENTS_QUERY_PARAMETERS,
          success: { '200': { description: 'A page of events.', schema: 'EventPage' } },
          errors: { '400': 'urlContainsInvalidValue: a query parameter outside its values' },
        }),
      },
      '/events/endpoints': {
        post: operation(EVENTS, {
          id: 'createEventEndpoint',
          summary: 'Create an event endpoint (extension)',
          description:
            `An endpoint takes every event type (\`"events": "all"\`) or those listed; effective at once. At most ${MAX_EVENT_ENDPOINTS} per merchant. ` +
            'The URL: https (in `test` also http to `localhost` or `127.0.0.1`), no credentials, no fragment, at most 2048 characters, ' +
            'no IP address of a private, loopback, link-local, shared or reserved range, and in `live` no `localhost`, `.localhost`, `.local` or `.internal` name ' +
            '(refused: bodyDoesNotMatchSchema, fieldHasInvalidValue at `$.url`). The answer holds the signing `secret`, this once.',
          request: 'CreateEventEndpointRequest',
          success: { '201': { description: 'Created, with its secret.', schema: 'EventEndpointWithSecret' } },
          errors: { '409': `tooManyEndpoints: the merchant has ${MAX_EVENT_ENDPOINTS} endpoints already` },
        }),
        get: operation(EVENTS, {
          id: 'listEventEndpoints',
          summary: "List the merchant's event endpoints (extension)",
          success: { '200': { description: 'The endpoints, without their secrets.', schema: 'EventEndpointList' } },
        }),
      },
      '/events/endpoints/{endpointId}': {
        parameters: [ENDPOINT_ID_PARAMETER],
        get: operation(EVENTS, {
          id: 'getEventEndpoint',
          summary: 'Read an event endpoint (extension)',
          success: { '200': { description: 'The endpoint, without its secret.', schema: 'EventEndpoint' } },
          errors: { '404': "resourceNotFound: no such endpoint of the merchant's" },
        }),
        patch: operation(EVENTS, {
          id: 'updateEventEndpoint',
          summary: 'Change an event endpoint (extension)',
          description:
            'Any of `url` (the same rules as on creation), `events`, `description` and `state`; effective at once. ' +
            '`state: disabled` holds its deliveries; `state: enabled` sends what was held, in order per subject, each with a new 3-day window.',
          request: 'UpdateEventEndpointRequest',
          success: { '200': { description: 'The endpoint as changed.', schema: 'EventEndpoint' } },
          errors: { '404': "resourceNotFound: no such endpoint of the merchant's" },
        }),
        delete: operation(EVENTS, {
          id: 'deleteEventEndpoint',
          summary: 'Delete an event endpoint (extension)',
          description:
            'Nothing more is sent to it; its deliveries not ended are `failed`, `lastError` `endpointRemoved`.',
          success: { '204': { description: 'Deleted.' } },
          errors: { '404': "resourceNotFound: no such endpoint of the merchant's" },
        }),
      },
      '/events/endpoints/{endpointId}/rotateSecret': {
        parameters: [ENDPOINT_ID_PARAMETER],
        post: operation(EVENTS, {
          id: 'rotateEventEndpointSecret',
          summary: "Rotate an event endpoint's signing secret (extension)",
          description:
            `A new secret signs from now on; the previous one signs too for \`previousValidForSeconds\` (0 to ${MAX_PREVIOUS_VALID_S}, by default ${DEFAULT_PREVIOUS_VALID_S}): ` +
            'each delivery then carries two signatures, and `previousSecretExpiresAt` says until when. The body is a JSON object, `{}` at least.',
          request: 'RotateSecretRequest',
          success: { '200': { description: 'The endpoint, with its new secret.', schema: 'EventEndpointWithSecret' } },
          errors: { '404': "resourceNotFound: no such endpoint of the merchant's" },
        }),
      },
      '/events/endpoints/{endpointId}/ping': {
        parameters: [ENDPOINT_ID_PARAMETER],
        post: operation(EVENTS, {
          id: 'pingEventEndpoint',
          summary: 'Send a ping event to an endpoint (extension)',
          description:
            "Appends a `ping` event (its own subject) that only this endpoint gets, whatever it takes, signed as any event; in `test` and `live`. No body is needed. Answers at once with the event's id.",
          success: { '202': { description: 'Accepted: it will be sent.', schema: 'EventPingAnswer' } },
          errors: { '404': "resourceNotFound: no such endpoint of the merchant's" },
        }),
      },
      '/events/endpoints/{endpointId}/recover': {
        parameters: [ENDPOINT_ID_PARAMETER],
        post: operation(EVENTS, {
          id: 'recoverEventEndpoint',
          summary: 'Send an endpoint again what never reached it (extension)',
          description:
            'Every event since `since` (of the last 30 days) that the endpoint takes and that never reached it (no delivery, or a failed one) is queued again, in order per subject, with a new 3-day window; deliveries on their way are left as they are. Answers at once with how many.',
          request: 'RecoverEventsRequest',
          success: { '202': { description: 'Accepted: they will be sent.', schema: 'RecoverEventsAnswer' } },
          errors: { '404': "resourceNotFound: no such endpoint of the merchant's" },
        }),
      },
      '/events/{eventId}': {
        parameters: [EVENT_ID_PARAMETER],
        get: operation(EVENTS, {
          id: 'getEvent',
          summary: 'Read an event and its deliveries (extension)',
          description: "The event as its endpoints receive it, with each endpoint's delivery and its last 10 attempts.",
          success: { '200': { description: 'The event.', schema: 'Event' } },
          errors: { '404': "resourceNotFound: no such event of the merchant's (or older than 30 days)" },
        }),
      },
      '/events/{eventId}/redeliver': {
        parameters: [EVENT_ID_PARAMETER],
        post: operation(EVENTS, {
          id: 'redeliverEvent',
          summary: 'Send an event again (extension)',
          description:
            'A new delivery to each endpoint that takes the event now, whatever its state, with its own retry window (3 days); in order after the earlier events of its subject still pending there (held for a disabled endpoint). No body is needed. Answers at once.',
          success: { '202': { description: 'Accepted: it will be sent.' } },
          errors: { '404': "resourceNotFound: no such event of the merchant's (or older than 30 days)" },
        }),
      },
      '/3ds/ddc': page(
        'ddcPage',
        'Device data collection page (in a hidden iframe)',
        { Bin: 'The card BIN.', JWT: 'deviceDataCollection.jwt' },
        ['JWT'],
      ),
      '/3ds/challenge': page(
        'challengePage',
        'Challenge page (in an iframe)',
        { JWT: 'challenge.jwt', MD: 'Merchant data, posted back to the returnUrl.' },
        ['JWT'],
      ),
      '/3ds/challenge/submit': page(
        'challengeSubmit',
        "The challenge form's post (test)",
        { state: 'The form state.', code: 'The one-time code.', action: '`submit` or `cancel`.' },
        ['state'],
      ),
      '/3ds/method/{handle}': {
        parameters: [HANDLE_PARAMETER],
        ...page(
          'methodNotification',
          "Live: the issuer ACS's 3DS Method notification (in the DDC page's hidden frame)",
          { threeDSMethodData: 'What the ACS posts; not needed, not trusted.' },
          [],
        ),
      },
      '/3ds/challenge/notify/{handle}': {
        parameters: [HANDLE_PARAMETER],
        ...page(
          'challengeNotification',
          "Live: the issuer ACS's final post of a challenge; the page returns to the merchant's returnUrl",
          {
            cres: 'The final CRes, base64url (padded or not); it only says the challenge ended.',
            threeDSSessionData: 'The transaction handle, as the relay sent it.',
          },
          ['cres'],
        ),
      },
      '/3ds/test/directory-server': {
        get: {
          operationId: 'testDirectoryServer',
          tags: ['3-D Secure pages'],
          summary:
            "Test: the test Directory Server's encryption key and CA certificate, for an app's test SDK (extension)",
          description:
            'In `test` only, without authentication (docs/threeds.md "The app channel"): the key an SDK encrypts `encData` to, and the CA its ACS certificates chain to.',
          security: [],
          responses: {
            '200': {
              description: 'The published keys.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['encryptionKey', 'caCertificate'],
                    properties: {
                      encryptionKey: {
                        type: 'object',
                        description: 'EC P-256 public JWK (ECDH-ES)',
                        required: ['kty', 'crv', 'x', 'y'],
                        properties: {
                          kty: { type: 'string' },
                          crv: { type: 'string' },
                          x: { type: 'string' },
                          y: { type: 'string' },
                        },
                      },
                      caCertificate: { type: 'string', description: 'PEM' },
                    },
                  },
                },
              },
            },
            '404': { description: 'Not the test environment.', content: ERROR_CONTENT },
          },
        },
      },
      '/3ds/app/creq/{handle}': {
        parameters: [HANDLE_PARAMETER],
        post: {
          operationId: 'appCReq',
          tags: ['3-D Secure pages'],
          summary: "Test: the test issuer's ACS, where an app's SDK posts its CReqs (extension)",
          description:
            'The `acsURL` of an app challenge\'s `acsSignedContent` (docs/threeds.md "The app channel"). No Basic auth: the SDK–ACS secure channel authenticates the SDK. A CReq is a compact JWE (`dir`, `A128CBC-HS256`, `kid` the acsTransID); the answer is a CRes JWE, or an EMV Erro as plain JSON.',
          security: [],
          requestBody: { required: true, content: { 'application/jose': { schema: { type: 'string' } } } },
          responses: {
            '200': {
              description:
                'A CRes (`application/jose`), or an Erro (`application/json`): EMV errorCode 101, 102, 201, 203, 301, 302 or 402.',
              content: {
                'application/jose': { schema: { type: 'string' } },
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['messageType', 'errorCode', 'errorComponent', 'errorDescription'],
                    properties: {
                      messageType: { type: 'string', enum: ['Erro'] },
                      errorCode: { type: 'string' },
                      errorComponent: { type: 'string', enum: ['A'] },
                      errorDescription: { type: 'string' },
                      errorMessageType: { type: 'string' },
                      threeDSServerTransID: { type: 'string' },
                      acsTransID: { type: 'string' },
                      sdkTransID: { type: 'string' },
                    },
                  },
                },
              },
            },
            '404': { description: 'Not the test environment.', content: ERROR_CONTENT },
            '413': { description: 'The body is too large.', content: ERROR_CONTENT },
            '500': {
              description: 'internalErrorOccurred: a bug; nothing of the CReq was recorded.',
              content: ERROR_CONTENT,
            },
            '503': {
              description: 'Storage is unavailable or the Worker is misconfigured: retry.',
              headers: { 'Retry-After': header('Retry-After') },
              content: ERROR_CONTENT,
            },
          },
        },
      },
      '/3ds/ddc/facts/{handle}': {
        parameters: [HANDLE_PARAMETER],
        post: {
          operationId: 'ddcFacts',
          tags: ['3-D Secure pages'],
          summary: "Live: the DDC page's script posts what it learned of the browser",
          security: [],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    javascriptEnabled: { type: 'boolean' },
                    javaEnabled: { type: 'boolean' },
                    language: { type: 'string' },
                    colorDepth: { type: 'integer' },
                    screenHeight: { type: 'integer' },
                    screenWidth: { type: 'integer' },
                    timeZone: { type: 'integer', description: 'getTimezoneOffset(): minutes, positive west of UTC' },
                  },
                },
              },
            },
          },
          responses: {
            '204': { description: 'Recorded (each value kept only when it is what a browser reports).' },
            '404': { description: 'A handle this service did not issue.' },
            '503': { description: 'Storage is unavailable: retry.', headers: { 'Retry-After': header('Retry-After') } },
          },
        },
      },
    },
    // What the service sends to a merchant's endpoints (docs/events.md): one entry per event type.
    webhooks: Object.fromEntries(
      (
        [
          [
            'threeDS.authentication.completed',
            'ThreeDsCompletedEvent',
            "A 3DS transaction's final outcome was recorded.",
          ],
          ['tokens.token.updated', 'TokenEvent', "A token's attribute changed (an update, an accepted conflict)."],
          ['tokens.token.extended', 'TokenEvent', "A token's lifetime was extended."],
          ['tokens.token.deleted', 'TokenEvent', 'A token was deleted.'],
          [
            'events.endpoint.disabled',
            'EndpointDisabledEvent',
            "One of the merchant's endpoints was disabled by the service (a `410`, or 3 days without a 2xx): sent to its other endpoints that take it.",
          ],
          [
            'ping',
            'PingEvent',
            '`POST /events/endpoints/{endpointId}/ping`: that one endpoint gets it, whatever it takes.',
          ],
        ] as const
      ).map(([eventType, schema, summary]) => [
        eventType,
        {
          post: {
            summary,
            description:
              'Posted to each endpoint of the merchant that takes this type, after the API answer that caused it; at least once, in order per subject and endpoint (drop one whose `sequence` is lower than the last you processed for its `subject`); retried with backoff and jitter (30 s doubling to 1 h; a longer `Retry-After` of a 429 or 503 is honoured) for 3 days until the endpoint answers 2xx within 10 s. ' +
              "Signed the Standard Webhooks way (https://www.standardwebhooks.com) with the endpoint's secret: verify the raw body and the `webhook-*` headers with a Standard Webhooks library before parsing (examples/receive-events.mjs). User-Agent: `card-edge-events/2`.",
            parameters: [
              {
                name: 'webhook-id',
                in: 'header',
                required: true,
                description: "The event's `eventId`: the same on every attempt and redelivery.",
                schema: { type: 'string', pattern: EVENT_ID.source },
              },
              {
                name: 'webhook-timestamp',
                in: 'header',
                required: true,
                description:
                  'When this attempt was signed, in Unix seconds: reject one more than 5 minutes from your clock.',
                schema: { type: 'string', pattern: '^\\d{1,12}$' },
              },
              {
                name: 'webhook-signature',
                in: 'header',
                required: true,
                description:
                  '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the base64-decoded part of the secret after `whsec_`; space-separated, one per valid secret (two while a rotated-out secret still signs): any one may match.',
                schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)?$' },
              },
            ],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
            },
            responses: {
              '2XX': { description: 'Delivered.' },
              '410': {
                description:
                  'Gone: the endpoint is disabled at once (`disabledReason` `gone`); its deliveries are held.',
              },
              default: {
                description:
                  'Anything else (or no answer within 10 s, or a redirect, never followed): retried. 3 days without any 2xx disable the endpoint (`failing`).',
              },
            },
          },
        },
      ]),
    ),
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: "The merchant's username and issued password." },
        publishableKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'pk_…',
          description: 'A publishable key (not a secret): binLookup only, from the origins listed for it.',
        },
      },
      parameters: {
        'WP-Api-Version': { name: 'WP-Api-Version', in: 'header', required: true, schema: { const: '1' } },
        'WP-CorrelationId': {
          name: 'WP-CorrelationId',
          in: 'header',
          required: false,
          description: 'A UUID to echo; otherwise one is made.',
          schema: { type: 'string', format: 'uuid' },
        },
        'WP-Sandbox-Simulate': {
          name: 'WP-Sandbox-Simulate',
          in: 'header',
          required: false,
          description:
            'Test environment only (400 in live): `503`, `500` or `429`, and/or `delay=<ms>` (up to 10000), comma-separated.',
          schema: { type: 'string', examples: ['503', 'delay=2000', 'delay=500,429'] },
        },
        Origin: {
          name: 'Origin',
          in: 'header',
          required: false,
          description: 'Sent by browsers.',
          schema: { type: 'string' },
        },
      },
      headers: {
        'WP-CorrelationId': {
          required: true,
          description: "The request's correlation id (the inbound one when it was a UUID).",
          schema: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' },
        },
        'Cache-Control': { required: true, schema: { const: 'no-store' } },
        'X-Content-Type-Options': { required: true, schema: { const: 'nosniff' } },
        'WP-Api-Version': { required: true, schema: { const: '1' } },
        'Bin-Data-Version': {
          required: true,
          description:
            "The BIN data that answered: its layers with the first 12 hex digits of each source's SHA-256, then the build time (extension).",
          schema: {
            type: 'string',
            pattern:
              '^[a-z0-9-]+@[0-9a-f]{12}(,[a-z0-9-]+@[0-9a-f]{12})*;built=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$',
          },
        },
        'Retry-After': { required: true, description: 'Seconds.', schema: { type: 'string', pattern: '^\\d+$' } },
        'WWW-Authenticate': { required: true, schema: { type: 'string', pattern: '^Basic realm=' } },
        Location: { required: true, schema: { type: 'string', format: 'uri' } },
        'Access-Control-Allow-Origin': {
          required: false,
          description: "The page's origin, when a publishable key lists it.",
          schema: { type: 'string' },
        },
        'Access-Control-Expose-Headers': { required: false, schema: { type: 'string' } },
        Vary: { required: true, schema: { const: 'Origin' } },
      },
      schemas: convertSchemas(),
    },
  };
}

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin'),
  'Access-Control-Expose-Headers': header('Access-Control-Expose-Headers'),
  Vary: header('Vary'),
};
