import { IttyRouter, type IRequest } from 'itty-router';
import { fail } from '../failures';
import { LoginMemory } from '../http/basic-auth';
import type { EndpointResult, RequestContext, Services } from '../http/endpoint';
import { runEndpoint, serve, type WorkerState } from '../http/pipeline';
import { corsHeaders } from '../http/publishable-keys';
import type { Route } from './route-table';

/**
 * The composition root: a Worker's fetch handler from its route table and its services (the BIN
 * index and the merchant configuration, which the entry module loads and the layers below only
 * receive). Each Worker made here has its own memory of logins, as an isolate has: a new one is a
 * cold isolate.
 */
export function createWorker(routes: readonly Route[], services: Services): WorkerHandler {
  const router = routerOf(routes);
  const worker = {
    fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      return serve(request, env, ctx, state, (rc) => router.fetch(request, rc));
    },
  };
  const state: WorkerState = { services, logins: new LoginMemory(), self: worker };
  return worker;
}

/** A Worker's fetch handler, typed as its callers (the runtime, tests, the demo backend) use it. */
export interface WorkerHandler {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

type Handler = (request: IRequest, rc: RequestContext) => Promise<EndpointResult | Response>;

function routerOf(routes: readonly Route[]) {
  const router = IttyRouter<IRequest, [RequestContext], EndpointResult | Response>();
  for (const path of new Set(routes.map((r) => r.path))) {
    const onPath = routes.filter((r) => r.path === path);
    const cors = onPath.some((r) => r.cors);
    const api = onPath.find((r) => r.endpoint)?.endpoint?.api;
    const withCors = (rc: RequestContext): void => {
      if (cors) rc.extraHeaders = corsHeaders(rc.services.merchants, rc.request.headers.get('Origin'));
    };
    for (const { method, endpoint, page } of onPath) {
      const handler: Handler = (request, rc) => {
        withCors(rc);
        if (!endpoint) rc.api = api;
        return endpoint ? runEndpoint(endpoint, rc, request.params) : page!(rc, request.params);
      };
      if (method === 'GET') router.get(path, handler);
      else if (method === 'POST') router.post(path, handler);
      else if (method === 'PUT') router.put(path, handler);
      else if (method === 'PATCH') router.patch(path, handler);
      else if (method === 'OPTIONS') router.options(path, handler);
      else router.delete(path, handler);
    }
    const allowed = onPath.map((r) => r.method).filter((m) => m !== 'OPTIONS');
    router.all(path, (_request: IRequest, rc: RequestContext) => {
      rc.api = api; // the error speaks the path's media type
      withCors(rc);
      return fail({ kind: 'methodNotAllowed', allowed });
    });
  }
  router.all('*', () => fail({ kind: 'resourceNotFound' }));
  return router;
}
