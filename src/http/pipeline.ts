import { settingsOf } from '../config/settings';
import { fail, failureOf } from '../failures';
import type { MerchantConfig } from '../merchants/merchant-config';
import { answerVersion, checkHeaders, mediaTypeFor } from './api-headers';
import { signInWithBasicAuth, type LoginMemory } from './basic-auth';
import { drainBody, readJsonObject, readJsonValue } from './body';
import type { Endpoint, EndpointResult, RequestContext, Services } from './endpoint';
import { mapFailure } from './error-document';
import { errorLogFields, logLine } from '../log';
import { publishableKeyOf, signInPublishable } from './publishable-keys';
import { simulate, SIMULATE_HEADER } from './simulate-header';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What one Worker instance serves requests with (src/app/create-worker.ts builds it). */
export interface WorkerState {
  services: Services;
  logins: LoginMemory;
  self: RequestContext['self'];
}

/**
 * Wraps the whole request (docs/pipeline.md): correlation id, the one error mapper, common
 * response headers, one structured log line, and the rest of an unread body read away (so that
 * an early answer keeps the client's connection). `route` does the routing and the endpoint work.
 */
export async function serve(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  state: WorkerState,
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
    services: state.services,
    logins: state.logins,
    self: state.self,
    log: {},
  };
  let response: Response;
  try {
    const result = await route(rc);
    response = result instanceof Response ? withCommonHeaders(result, rc) : jsonResponse(result, rc);
  } catch (e) {
    Object.assign(rc.log, errorLogFields(e));
    const mapped = mapFailure(failureOf(e));
    rc.log.errorName = mapped.body.errorName;
    response = jsonResponse({ status: mapped.status, body: mapped.body, headers: mapped.headers }, rc);
  }
  await drainBody(request);
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

/** Headers every answer carries (docs/pipeline.md "Every answer"), and the API's own. */
function commonHeaders(rc: RequestContext): Record<string, string> {
  const dataVersion = rc.api?.namesBinDataVersion ? rc.services.binIndex.dataVersion : undefined;
  return {
    'WP-CorrelationId': rc.correlationId,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...rc.api?.responseHeaders,
    ...(dataVersion !== undefined ? { 'Bin-Data-Version': dataVersion } : {}),
    ...rc.extraHeaders,
  };
}

/** A Response a route built itself (the HTML pages), given the common headers. */
function withCommonHeaders(response: Response, rc: RequestContext): Response {
  for (const [name, value] of Object.entries(commonHeaders(rc))) response.headers.set(name, value);
  return response;
}

/**
 * The shared pipeline of docs/pipeline.md steps 2–4 for one endpoint: authentication (Basic, or
 * a publishable key where the endpoint allows one), the API's header rules, the sandbox header,
 * the body; then the endpoint itself (steps 5–7).
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
      rc.services.merchants,
      publishableKey,
      rc.request.headers.get('Origin'),
      rc.env.PREFIX_LOOKUPS_BY_KEY,
      address,
      (what) => (rc.log.lookupLimit = what),
    );
  } else {
    const signedIn = signInWithBasicAuth(rc.request, rc.settings, rc.services.merchants, rc.logins, () => ({
      byAddress: rc.env.LOGIN_ATTEMPTS_BY_ADDRESS,
      byUsername: rc.env.LOGIN_FAILURES_BY_USERNAME,
      address,
      note: (what) => (rc.log.loginLimit = what),
    }));
    // The warm path returns the merchant itself: no promise to wait for.
    merchant = signedIn instanceof Promise ? await signedIn : signedIn;
  }
  rc.log.merchant = merchant.username;
  const apiVersion = checkHeaders(rc.request.headers, endpoint.api, endpoint.hasBody !== false);
  rc.apiVersion = apiVersion;
  const simulation = rc.request.headers.get(SIMULATE_HEADER);
  if (simulation !== null) await simulate(simulation, rc.settings.environment, (what) => (rc.log.simulated = what));
  if (endpoint.hasBody === 'value')
    return endpoint.handle({ merchant, body: {}, value: await readJsonValue(rc.request), params, rc, apiVersion });
  const body = endpoint.hasBody ? await readJsonObject(rc.request) : {};
  return endpoint.handle({ merchant, body, params, rc, apiVersion });
}

/**
 * The media type of a JSON answer (docs/pipeline.md "Every answer"): the negotiated version's;
 * before the headers were checked, or when they failed, the version Accept picks, else version 1;
 * `application/json` outside an API.
 */
function answerMediaType(rc: RequestContext): string {
  if (!rc.api) return 'application/json';
  return mediaTypeFor(rc.api, rc.apiVersion ?? answerVersion(rc.request.headers, rc.api));
}

/** A JSON answer in the media type of the API's version, every header set at construction. */
function jsonResponse(result: EndpointResult, rc: RequestContext): Response {
  const headers = { ...result.headers, ...commonHeaders(rc) };
  if (result.body === undefined) return new Response(null, { status: result.status, headers });
  return new Response(JSON.stringify(result.body), {
    status: result.status,
    headers: { ...headers, 'Content-Type': answerMediaType(rc) },
  });
}
