import type { SeriesSetup } from '../series-rules';
import type { ResolvedCard } from '../../cards/resolve-card';
import { failed, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { AuthenticateRequest } from '../../schemas/threeds-requests-v3';
import { SESSION_TTL_MS } from '../session-record';
import { isAppRequest } from '../app-channel-rules';
import { liveParts } from './live-parts';
import { duplicateAnswer, eventScope, type Authenticated, type Caller, type ThreeDsDeps } from './step-deps';
import { areqCard } from '../live/areq-builder';
import { rendered } from '../live/stored-answer';

/**
 * authenticate in `live`, the Worker's side (docs/threeds.md "Live": "authenticate"): the request
 * is validated and the card resolved here; then one call hands both to the transaction's object,
 * which runs the authentication itself (src/threeds/transaction/live-authentication.ts): one AReq
 * per transaction, ever, and every identical request waits on that one run inside the object. No
 * lease is taken between the Worker and the object.
 *
 * The stored answer names no version of the API; each request renders it for its own `version`
 * (src/threeds/api-versions.ts): an answer stored with the outage mark is `unavailable` for
 * versions 1 and 2 and `authenticationOutage` for version 3.
 */
export async function liveAuthenticate(
  deps: ThreeDsDeps,
  caller: Caller,
  request: AuthenticateRequest,
  card: ResolvedCard,
  hash: string,
  version: ApiVersion = 1,
  series?: SeriesSetup,
): Promise<Result<Authenticated>> {
  // A deployment without a provider or a requestor block is misconfigured: 503, before any call.
  const { requestor } = liveParts(deps, caller.entity);
  const { owner } = deps.transactionFor(caller.scope);
  const outcome = await owner.liveAuthenticate({
    requestHash: hash,
    now: deps.now,
    // An hour from now, or from the end of the decoupled time the request allows, or of an app
    // challenge's (the SDK's maxTimeout), whichever is later.
    sessionEnd: deps.now + Math.max(request.decoupled?.maxMinutes ?? 0, appMinutes(request)) * 60_000 + SESSION_TTL_MS,
    scope: eventScope(deps, caller.scope, version),
    baseUrl: deps.baseUrl,
    request,
    card: areqCard(card),
    requestor,
    ...(series ? { series } : {}),
  });
  const answered = (answer: Record<string, unknown>, scenario: string, conflict = false): Result<Authenticated> =>
    ok({ answer: rendered(answer, version), card: card.masked, scenario, conflict });
  switch (outcome.kind) {
    case 'answered':
      return answered(outcome.answer, outcome.scenario);
    case 'invalid':
      return failed({ kind: 'bodyDoesNotMatchSchema', errors: outcome.errors });
    case 'conflict':
      return duplicateAnswer(deps, request.transactionReference, card.masked, version);
  }
}

/** The longest an app's challenge may take (its SDK's maxTimeout), in minutes; 0 for a browser. */
function appMinutes(request: AuthenticateRequest): number {
  return isAppRequest(request) ? request.deviceData.sdk.maxTimeout : 0;
}
