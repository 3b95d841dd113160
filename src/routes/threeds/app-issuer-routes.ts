import type { Route } from '../../app/route-table';
import { ERRO, erroMessage } from '../../emv/challenge-messages';
import { failureOf } from '../../failures';
import { readBodyText } from '../../http/body';
import type { RequestContext } from '../../http/endpoint';
import { mapFailure } from '../../http/error-document';
import { errorLogFields } from '../../log';
import { PAGES } from '../../threeds/api-paths';
import { objectIdOfHandle } from '../../threeds/live/handles';
import { threeDsDeps } from '../deps-from-request';

/**
 * The test issuer's app channel over HTTP (CONTRACT.md §12, docs/threeds.md "The app channel"),
 * in the `test` Worker only (src/index.ts): its Directory Server's published keys, and its ACS's
 * CReq endpoint. Neither is behind Basic auth: an app's SDK has no merchant credentials (the
 * secure channel authenticates it), and the Directory Server's key and CA are public.
 */

/** `GET /3ds/test/directory-server`: `{encryptionKey (JWK), caCertificate (PEM)}` for a test SDK. */
function directoryServerRoute(rc: RequestContext): Promise<Response> {
  rc.log.api = 'threeDSApp';
  const issuer = rc.services.appIssuer;
  if (!issuer || rc.settings.environment !== 'test') return Promise.resolve(notFound());
  return Promise.resolve(Response.json(issuer.published, { headers: { 'Cache-Control': 'public, max-age=3600' } }));
}

/**
 * `POST /3ds/app/creq/<handle>` with a CReq (a compact JWE, `application/jose`): a CRes
 * (`application/jose`), or an Erro (`application/json`, HTTP 200: the SDK may not be able to
 * decrypt anything). A platform failure is answered as on the JSON APIs (503 and Retry-After).
 */
async function appCReqRoute(rc: RequestContext, params: Record<string, string>): Promise<Response> {
  rc.log.api = 'threeDSApp';
  if (!rc.services.appIssuer || rc.settings.environment !== 'test') return notFound();
  try {
    const jwe = (await readBodyText(rc.request)) ?? '';
    const deps = threeDsDeps(rc);
    const objectId = await objectIdOfHandle(deps.key, params.handle ?? '');
    const owner = objectId === undefined ? undefined : deps.transactionById(objectId);
    if (!owner) {
      rc.log.erro = ERRO.transactionNotRecognised;
      return Response.json(erroMessage(ERRO.transactionNotRecognised, 'This ACS URL names no transaction.'));
    }
    const answer = await owner.appChallengeMessage(jwe.trim(), deps.now);
    if (answer.kind === 'erro') {
      rc.log.erro = String(answer.erro.errorCode);
      return Response.json(answer.erro);
    }
    return new Response(answer.jwe, { headers: { 'Content-Type': 'application/jose' } });
  } catch (e) {
    Object.assign(rc.log, errorLogFields(e));
    const { status, body, headers } = mapFailure(failureOf(e));
    return Response.json(body, { status, headers });
  }
}

function notFound(): Response {
  const { status, body } = mapFailure({ kind: 'resourceNotFound' });
  return Response.json(body, { status });
}

/** The routes, for the `test` Worker's composition. */
export const TEST_ISSUER_ROUTES: readonly Route[] = [
  { method: 'GET', path: PAGES.testDirectoryServer, page: directoryServerRoute },
  { method: 'POST', path: `${PAGES.appCReq}/:handle`, page: appCReqRoute },
];
