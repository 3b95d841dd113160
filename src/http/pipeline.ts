import type { MerchantConfig } from '../config/merchants';
import { settingsOf, SettingsError, type Settings } from '../config/settings';
import { StorageError } from '../storage/kv';
import { TokenKeyMissing } from '../tokens/token-crypto';
import { authenticate } from './auth';
import { drainBody, readJsonObject } from './body';
import { ApiError, fail, mapFailure, type Failure } from './errors';
import { checkHeaders, type ApiProfile } from './headers';
import { describeError, logLine } from './log';
import { publishableKeyOf, signInPublishable } from './publishable';
import { simulate, SIMULATE_HEADER } from './sandbox';

/** Per-request state shared by the pipeline, the endpoint and the log line. */
export interface RequestContext {
  readonly request: Request;
  readonly env: Env;
  readonly ctx: ExecutionContext;
  readonly url: URL;
  readonly correlationId: string;
  /**
   * The environment parsed into typed settings (once per isolate); reading it on a misconfigured
   * Worker throws a {@link SettingsError}, answered 503.
   */
  readonly settings: Settings;
  /** The matched API, once routing found one: decides the media type of errors. */
  api?: ApiProfile;
  /** Headers every answer of this request carries, errors included (CORS on the prefix lookup). */
  extraHeaders?: Record<string, string>;
  /** Safe fields for the log line (never a full card number, never credentials). */
  readonly log: Record<string, string | number | boolean | undefined>;
}

/** What an endpoint is handed once the shared pipeline has passed. */
export interface EndpointCall {
  readonly merchant: MerchantConfig;
  /** The parsed JSON object body (empty object for GET and DELETE). */
  readonly body: Record<string, unknown>;
  readonly params: Readonly<Record<string, string>>;
  readonly rc: RequestContext;
}

export interface EndpointResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One endpoint: the API it belongs to, whether it takes a body, and its handler. */
export interface Endpoint {
  api: ApiProfile;
  hasBody: boolean;
  /** Whether a publishable key (`Authorization: Bearer pk_…`) may call it, from a listed origin. */
  publishable?: boolean;
  handle(call: EndpointCall): Promise<EndpointResult>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Wraps the whole request: correlation id, the one error mapper, common response headers and
 * one structured log line. `route` does the routing and the endpoint work.
 */
export async function serve(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  route: (rc: RequestContext) => Promise<Response | EndpointResult>,
): Promise<Response> {
  const started = Date.now();
  const inbound = request.headers.get('WP-CorrelationId');
  const url = new URL(request.url);
  const rc: RequestContext = {
    request,
    env,
    ctx,
    url,
    correlationId: inbound !== null && UUID.test(inbound) ? inbound.toLowerCase() : crypto.randomUUID(),
    get settings() {
      return settingsOf(env);
    },
    log: {},
  };
  let response: Response;
  try {
    const result = await route(rc);
    response = result instanceof Response ? withCommonHeaders(result, rc) : jsonResponse(result, rc);
  } catch (e) {
    const failure = failureOf(e);
    if (e instanceof StorageError) logStorageError(rc, e);
    else if (!(e instanceof ApiError)) {
      rc.log.exception = describeError(e);
    }
    if (failure.kind === 'misconfigured') rc.log.misconfigured = failure.what;
    const mapped = mapFailure(failure);
    rc.log.errorName = mapped.body.errorName;
    response = jsonResponse({ status: mapped.status, body: mapped.body, headers: mapped.headers }, rc);
  }
  // An answer given before the body was read (an error, mostly) would otherwise cost the client
  // its keep-alive connection.
  if (request.body !== null && !request.bodyUsed) await drainBody(request);
  logLine({
    level: response.status >= 500 ? 'error' : response.status >= 400 ? 'warn' : 'info',
    correlationId: rc.correlationId,
    method: request.method,
    path: url.pathname,
    status: response.status,
    durationMs: Date.now() - started,
    ...rc.log,
  });
  return response;
}

/** Headers every answer carries (CONTRACT.md §2), and the API's own. */
function commonHeaders(rc: RequestContext): Record<string, string> {
  return {
    'WP-CorrelationId': rc.correlationId,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...rc.api?.responseHeaders,
    ...rc.extraHeaders,
  };
}

/** A Response a route built itself (the HTML pages), given the common headers. */
function withCommonHeaders(response: Response, rc: RequestContext): Response {
  for (const [name, value] of Object.entries(commonHeaders(rc))) response.headers.set(name, value);
  return response;
}

/**
 * The shared pipeline of CONTRACT.md §2 steps 2–4 for one endpoint: Basic auth, the API's header
 * rules, the body; then the endpoint itself (steps 5–7).
 */
export async function runEndpoint(
  endpoint: Endpoint,
  rc: RequestContext,
  params: Record<string, string> = {},
): Promise<EndpointResult> {
  rc.api = endpoint.api;
  rc.log.api = endpoint.api.name;
  const address = rc.request.headers.get('CF-Connecting-IP') ?? 'unknown';
  const publishableKey = publishableKeyOf(rc.request.headers.get('Authorization'));
  let merchant: MerchantConfig;
  if (publishableKey !== undefined) {
    if (!endpoint.publishable) fail({ kind: 'publishableKeyNotAllowed' });
    rc.log.publishableKey = publishableKey;
    merchant = await signInPublishable(
      publishableKey,
      rc.request.headers.get('Origin'),
      rc.env.PREFIX_LOOKUPS_BY_KEY,
      address,
      (what) => (rc.log.lookupLimit = what),
    );
  } else {
    const signedIn = authenticate(rc.request, rc.settings, () => ({
      byAddress: rc.env.LOGIN_ATTEMPTS_BY_ADDRESS,
      byUsername: rc.env.LOGIN_FAILURES_BY_USERNAME,
      address,
      note: (what) => (rc.log.loginLimit = what),
    }));
    // The warm path returns the merchant itself: no promise to wait for.
    merchant = signedIn instanceof Promise ? await signedIn : signedIn;
  }
  rc.log.merchant = merchant.username;
  checkHeaders(rc.request.headers, endpoint.api, endpoint.hasBody);
  const simulation = rc.request.headers.get(SIMULATE_HEADER);
  if (simulation !== null) await simulate(simulation, rc.settings.environment, (what) => (rc.log.simulated = what));
  const body = endpoint.hasBody ? await readJsonObject(rc.request) : {};
  return endpoint.handle({ merchant, body, params, rc });
}

/** What failed in storage, and the platform's reason (masked like any free text). */
export function logStorageError(rc: RequestContext, e: StorageError): void {
  rc.log.storage = e.message;
  if (e.cause !== undefined) rc.log.cause = describeError(e.cause);
}

/** ApiError carries its failure; storage and configuration failures are 503s; anything else is internal. */
function failureOf(e: unknown): Failure {
  if (e instanceof ApiError) return e.failure;
  if (e instanceof StorageError) return { kind: 'storageUnavailable' };
  if (e instanceof SettingsError || e instanceof TokenKeyMissing) return { kind: 'misconfigured', what: e.message };
  return { kind: 'internal' };
}

/** A JSON answer in the API's media type, every header set at construction. */
function jsonResponse(result: EndpointResult, rc: RequestContext): Response {
  const headers = { ...result.headers, ...commonHeaders(rc) };
  if (result.body === undefined) return new Response(null, { status: result.status, headers });
  return new Response(JSON.stringify(result.body), {
    status: result.status,
    headers: { ...headers, 'Content-Type': rc.api?.mediaType ?? 'application/json' },
  });
}
