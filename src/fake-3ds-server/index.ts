import { appCReqRoute, challengeRoute, challengeSubmitRoute, methodPathVersion, methodRoute } from './acs-routes';
import { providerCall } from './api-routes';
import { clockRoute, directoryServerRoute, endChallengeRoute, faultsRoute, transactionRoute } from './control-routes';
import type { FakeEnv } from './env';
import { MARKER, textResponse } from './http';
import { publicOrigin } from './urls';

/**
 * The fake 3DS Server provider (docs/fake-3ds-server.md): 3DS Server, Directory Server and ACS
 * in one Worker, shaped like 3dsecure.io, so that the service's live mode runs and is tested
 * offline. Test-only: never deployed, never bundled into the service.
 */

export { FakeControl } from './control';
export { FakeTransaction } from './transaction';

interface Route {
  methods: readonly string[];
  pattern: RegExp;
  handle: (request: Request, env: FakeEnv, origin: string, match: RegExpExecArray) => Promise<Response>;
}

const ROUTES: readonly Route[] = [
  { methods: ['POST'], pattern: /^\/preauth$/, handle: (r, e, o) => providerCall('preauth', r, e, o) },
  { methods: ['POST'], pattern: /^\/auth$/, handle: (r, e, o) => providerCall('auth', r, e, o) },
  { methods: ['POST'], pattern: /^\/postauth$/, handle: (r, e, o) => providerCall('postauth', r, e, o) },
  { methods: ['POST'], pattern: /^\/acs\/method$/, handle: (r, e) => methodRoute(r, e, undefined) },
  {
    methods: ['POST'],
    pattern: /^\/acs\/method\/(2\.1\.0|2\.2\.0|2\.3\.1)$/,
    handle: (r, e, _o, m) => methodRoute(r, e, methodPathVersion(m[1] ?? '')),
  },
  { methods: ['POST'], pattern: /^\/acs\/challenge$/, handle: challengeRoute },
  { methods: ['POST'], pattern: /^\/acs\/challenge\/submit$/, handle: challengeSubmitRoute },
  {
    methods: ['POST'],
    pattern: /^\/acs\/app\/creq\/([^/]+)$/,
    handle: (r, e, _o, m) => appCReqRoute(r, e, decodeURIComponent(m[1] ?? '')),
  },
  { methods: ['GET'], pattern: /^\/_fake\/directory-server$/, handle: () => directoryServerRoute() },
  {
    methods: ['POST'],
    pattern: /^\/_fake\/challenge\/([^/]+)$/,
    handle: (r, e, _o, m) => endChallengeRoute(r, e, decodeURIComponent(m[1] ?? '')),
  },
  {
    methods: ['GET'],
    pattern: /^\/_fake\/transactions\/([^/]+)$/,
    handle: (_r, e, _o, m) => transactionRoute(e, decodeURIComponent(m[1] ?? '')),
  },
  { methods: ['GET', 'POST'], pattern: /^\/_fake\/clock$/, handle: (r, e) => clockRoute(r, e) },
  { methods: ['GET', 'POST', 'DELETE'], pattern: /^\/_fake\/faults$/, handle: (r, e) => faultsRoute(r, e) },
];

export default {
  async fetch(request: Request, env: FakeEnv): Promise<Response> {
    const { pathname } = new URL(request.url);
    for (const route of ROUTES) {
      const match = route.pattern.exec(pathname);
      if (!match) continue;
      if (!route.methods.includes(request.method)) {
        return textResponse('Method not allowed', 405, { Allow: route.methods.join(', ') });
      }
      return route.handle(request, env, publicOrigin(request.url, env.FAKE_PUBLIC_URL), match);
    }
    if (pathname === '/') {
      return textResponse(`${MARKER}: a fake 3DS Server provider for tests (docs/fake-3ds-server.md)\n`, 200);
    }
    return textResponse('Not found', 404);
  },
} satisfies ExportedHandler<FakeEnv>;
