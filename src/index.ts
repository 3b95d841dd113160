import { IttyRouter, type IRequest } from 'itty-router';
import { fail } from './http/errors';
import { runEndpoint, serve, type Endpoint, type EndpointResult, type RequestContext } from './http/pipeline';
import { panLookup } from './routes/pan-lookup';

/**
 * The route table. A path listed here with other methods answers 405 with `Allow`; a path not
 * listed answers 404 (CONTRACT.md §2 step 1).
 */
const ROUTES: readonly { method: string; path: string; endpoint: Endpoint }[] = [
  { method: 'POST', path: '/api/cardBin/panLookup', endpoint: panLookup },
];

type Handler = (request: IRequest, rc: RequestContext) => Promise<EndpointResult>;
const router = IttyRouter<IRequest, [RequestContext], EndpointResult>();

for (const path of new Set(ROUTES.map((r) => r.path))) {
  const routes = ROUTES.filter((r) => r.path === path);
  for (const { method, endpoint } of routes) {
    const handler: Handler = (request, rc) => runEndpoint(endpoint, rc, request.params);
    router[method.toLowerCase()]!(path, handler);
  }
  const allowed = routes.map((r) => r.method);
  router.all(path, () => fail({ kind: 'methodNotAllowed', allowed }));
}
router.all('*', () => fail({ kind: 'resourceNotFound' }));

export default {
  fetch(request, env, ctx) {
    return serve(request, env, ctx, (rc) => router.fetch(request, rc));
  },
} satisfies ExportedHandler<Env>;
