import { IttyRouter, type IRequest } from 'itty-router';
import { demoAuthenticate, demoConfig, demoFile, demoInit, demoPage, demoReturn } from './demo/demo';
import { fail } from './http/errors';
import { runEndpoint, serve, type Endpoint, type EndpointResult, type RequestContext } from './http/pipeline';
import { corsHeaders, preflight } from './http/publishable';
import { binLookup } from './routes/bin-lookup';
import { panLookup } from './routes/pan-lookup';
import { authenticate } from './routes/threeds/authenticate';
import { deviceDataInitialize } from './routes/threeds/device-data-initialize';
import { challengeRoute, challengeSubmitRoute, ddcRoute } from './routes/threeds/pages';
import { completeChallenge } from './routes/threeds/sandbox';
import { verification } from './routes/threeds/verification';
import { createTokenEndpoint, deleteTokenEndpoint, getTokenEndpoint } from './routes/tokens';
import { THREEDS_PATH } from './threeds/steps/deps';

/** The Durable Objects that decide what KV cannot (storage-schema.md). */
export { ThreeDsGuard } from './storage/guards/threeds-guard';
export { TokenGuard } from './storage/guards/token-guard';

type Page = (rc: RequestContext) => Promise<Response | EndpointResult>;

/**
 * The route table. A path listed here with other methods answers 405 with `Allow`; a path not
 * listed answers 404 (CONTRACT.md §2 step 1). JSON APIs are endpoints (the shared pipeline);
 * the 3DS browser pages answer HTML.
 */
const ROUTES: readonly {
  method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS';
  path: string;
  endpoint?: Endpoint;
  page?: Page;
  /** Answers carry CORS headers for the origins of publishable keys (src/http/publishable.ts). */
  cors?: boolean;
}[] = [
  { method: 'POST', path: '/api/cardBin/panLookup', endpoint: panLookup },
  { method: 'POST', path: '/api/cardBin/binLookup', endpoint: binLookup, cors: true },
  {
    method: 'OPTIONS',
    path: '/api/cardBin/binLookup',
    page: (rc) => Promise.resolve(preflight(rc.request.headers.get('Origin'))),
    cors: true,
  },
  { method: 'POST', path: `${THREEDS_PATH}/deviceDataInitialize`, endpoint: deviceDataInitialize },
  { method: 'POST', path: `${THREEDS_PATH}/deviceDataInitialization`, endpoint: deviceDataInitialize },
  { method: 'POST', path: `${THREEDS_PATH}/authenticate`, endpoint: authenticate },
  { method: 'POST', path: `${THREEDS_PATH}/authentication`, endpoint: authenticate },
  { method: 'POST', path: `${THREEDS_PATH}/verification`, endpoint: verification },
  { method: 'POST', path: `${THREEDS_PATH}/sandbox/completeChallenge`, endpoint: completeChallenge },
  { method: 'POST', path: '/tokens', endpoint: createTokenEndpoint },
  { method: 'GET', path: '/tokens/:tokenId', endpoint: getTokenEndpoint },
  { method: 'DELETE', path: '/tokens/:tokenId', endpoint: deleteTokenEndpoint },
  { method: 'POST', path: '/3ds/ddc', page: ddcRoute },
  { method: 'POST', path: '/3ds/challenge', page: challengeRoute },
  { method: 'POST', path: '/3ds/challenge/submit', page: challengeSubmitRoute },
  // The demo checkout, `test` only (src/demo/demo.ts).
  { method: 'GET', path: '/demo', page: demoPage },
  { method: 'GET', path: '/demo/config', page: demoConfig },
  { method: 'POST', path: '/demo/merchant/init', page: demoInit },
  { method: 'POST', path: '/demo/merchant/authenticate', page: demoAuthenticate },
  { method: 'POST', path: '/demo/merchant/return', page: demoReturn },
  { method: 'GET', path: '/demo/*', page: demoFile },
];

type Handler = (request: IRequest, rc: RequestContext) => Promise<EndpointResult | Response>;
const router = IttyRouter<IRequest, [RequestContext], EndpointResult | Response>();

for (const path of new Set(ROUTES.map((r) => r.path))) {
  const routes = ROUTES.filter((r) => r.path === path);
  const cors = routes.some((r) => r.cors);
  const api = routes.find((r) => r.endpoint)?.endpoint?.api;
  for (const { method, endpoint, page } of routes) {
    const handler: Handler = (request, rc) => {
      if (cors) rc.extraHeaders = corsHeaders(rc.request.headers.get('Origin'));
      if (!endpoint) rc.api = api;
      return endpoint ? runEndpoint(endpoint, rc, request.params) : page!(rc);
    };
    if (method === 'GET') router.get(path, handler);
    else if (method === 'POST') router.post(path, handler);
    else if (method === 'OPTIONS') router.options(path, handler);
    else router.delete(path, handler);
  }
  const allowed = routes.map((r) => r.method).filter((m) => m !== 'OPTIONS');
  router.all(path, (_request: IRequest, rc: RequestContext) => {
    rc.api = api; // the error speaks the path's media type
    if (cors) rc.extraHeaders = corsHeaders(rc.request.headers.get('Origin'));
    return fail({ kind: 'methodNotAllowed', allowed });
  });
}
router.all('*', () => fail({ kind: 'resourceNotFound' }));

export default {
  fetch(request, env, ctx) {
    return serve(request, env, ctx, (rc) => router.fetch(request, rc));
  },
} satisfies ExportedHandler<Env>;
