import { preflight } from '../http/publishable-keys';
import {
  createEventEndpointEndpoint,
  deleteEventEndpointEndpoint,
  getEventEndpoint,
  getEventEndpointEndpoint,
  listEventEndpointsEndpoint,
  listEventsEndpoint,
  pingEventEndpointEndpoint,
  recoverEventEndpointEndpoint,
  redeliverEventEndpoint,
  rotateSecretEndpoint,
  updateEventEndpointEndpoint,
} from '../routes/event-endpoints';
import { binLookupEndpoint } from '../routes/bin-lookup';
import { panLookupEndpoint } from '../routes/pan-lookup';
import { authenticateEndpoint } from '../routes/threeds/authenticate';
import { merchantInitiatedEndpoint } from '../routes/threeds/merchant-initiated';
import { completeChallengeEndpoint } from '../routes/threeds/complete-challenge';
import { deviceDataInitializeEndpoint } from '../routes/threeds/device-data-initialize';
import {
  challengeNotificationRoute,
  challengeRoute,
  challengeSubmitRoute,
  ddcFactsRoute,
  ddcRoute,
  methodNotificationRoute,
} from '../routes/threeds/page-routes';
import { transactionEndpoint } from '../routes/threeds/transaction';
import { verificationEndpoint } from '../routes/threeds/verification';
import {
  acceptConflictsEndpoint,
  createTokenEndpoint,
  deleteTokenEndpoint,
  getConflictsEndpoint,
  getTokenEndpoint,
  queryTokensEndpoint,
  TOKEN_UPDATE_ROUTES,
} from '../routes/token-endpoints';
import { PAGES, THREEDS_PATH } from '../threeds/api-paths';
import type { Route } from './route-table';

/**
 * The service's routes (docs/README.md lists them): the JSON APIs (Card BIN, 3DS, Tokens, events) and the 3DS browser
 * pages. A path listed here with other methods answers 405 with `Allow`; a path not listed
 * answers 404 (docs/pipeline.md step 1).
 */
export const API_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/api/cardBin/panLookup', endpoint: panLookupEndpoint },
  { method: 'POST', path: '/api/cardBin/binLookup', endpoint: binLookupEndpoint, cors: true },
  {
    method: 'OPTIONS',
    path: '/api/cardBin/binLookup',
    page: (rc) => Promise.resolve(preflight(rc.services.merchants, rc.request.headers.get('Origin'))),
    cors: true,
  },
  { method: 'POST', path: `${THREEDS_PATH}/deviceDataInitialize`, endpoint: deviceDataInitializeEndpoint },
  { method: 'POST', path: `${THREEDS_PATH}/deviceDataInitialization`, endpoint: deviceDataInitializeEndpoint },
  { method: 'POST', path: `${THREEDS_PATH}/authenticate`, endpoint: authenticateEndpoint },
  { method: 'POST', path: `${THREEDS_PATH}/authentication`, endpoint: authenticateEndpoint },
  { method: 'POST', path: `${THREEDS_PATH}/merchantInitiated`, endpoint: merchantInitiatedEndpoint },
  { method: 'POST', path: `${THREEDS_PATH}/verification`, endpoint: verificationEndpoint },
  { method: 'GET', path: `${THREEDS_PATH}/authentications/:transactionReference`, endpoint: transactionEndpoint },
  { method: 'POST', path: `${THREEDS_PATH}/sandbox/completeChallenge`, endpoint: completeChallengeEndpoint },
  { method: 'POST', path: '/tokens', endpoint: createTokenEndpoint },
  { method: 'GET', path: '/tokens', endpoint: queryTokensEndpoint },
  { method: 'GET', path: '/tokens/:tokenId', endpoint: getTokenEndpoint },
  { method: 'DELETE', path: '/tokens/:tokenId', endpoint: deleteTokenEndpoint },
  ...TOKEN_UPDATE_ROUTES.map(({ path, endpoint }) => ({ method: 'PUT' as const, path, endpoint })),
  { method: 'GET', path: '/tokens/:tokenId/conflicts/:conflictId', endpoint: getConflictsEndpoint },
  { method: 'PUT', path: '/tokens/:tokenId/conflicts/:conflictId', endpoint: acceptConflictsEndpoint },
  // Before /events/:eventId: "endpoints" is a path, not an event.
  { method: 'POST', path: '/events/endpoints', endpoint: createEventEndpointEndpoint },
  { method: 'GET', path: '/events/endpoints', endpoint: listEventEndpointsEndpoint },
  { method: 'GET', path: '/events/endpoints/:endpointId', endpoint: getEventEndpointEndpoint },
  { method: 'PATCH', path: '/events/endpoints/:endpointId', endpoint: updateEventEndpointEndpoint },
  { method: 'DELETE', path: '/events/endpoints/:endpointId', endpoint: deleteEventEndpointEndpoint },
  { method: 'POST', path: '/events/endpoints/:endpointId/rotateSecret', endpoint: rotateSecretEndpoint },
  { method: 'POST', path: '/events/endpoints/:endpointId/ping', endpoint: pingEventEndpointEndpoint },
  { method: 'POST', path: '/events/endpoints/:endpointId/recover', endpoint: recoverEventEndpointEndpoint },
  { method: 'GET', path: '/events', endpoint: listEventsEndpoint },
  { method: 'GET', path: '/events/:eventId', endpoint: getEventEndpoint },
  { method: 'POST', path: '/events/:eventId/redeliver', endpoint: redeliverEventEndpoint },
  { method: 'POST', path: PAGES.ddc, page: ddcRoute },
  { method: 'POST', path: PAGES.challenge, page: challengeRoute },
  { method: 'POST', path: PAGES.challengeSubmit, page: challengeSubmitRoute },
  // Live (docs/threeds.md "Live": "Pages"): the DDC page's facts and the ACS's notifications.
  { method: 'POST', path: `${PAGES.ddcFacts}/:handle`, page: ddcFactsRoute },
  { method: 'POST', path: `${PAGES.methodNotification}/:handle`, page: methodNotificationRoute },
  { method: 'POST', path: `${PAGES.challengeNotification}/:handle`, page: challengeNotificationRoute },
];
