import { toBase64Url, utf8 } from '../../bytes';
import type { ResolvedCard } from '../../cards/resolve-card';
import { failed, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { AuthenticateRequest } from '../../schemas/threeds-requests-v3';
import type { ThreeDsTransactionApi } from '../transaction-api';
import type { LiveChallenge, LiveRun, MethodRecord, PreparedCard } from './live-state';
import { StorageError } from '../../storage/storage-error';
import { SESSION_TTL_MS } from '../session-record';
import { PAGES, THREEDS_PATH } from '../api-paths';
import { duplicateIsAnError, outageAnswer } from '../api-versions';
import { newChallengeReference, WINDOW_CODES } from '../challenge';
import { challengedAnswer } from '../steps/challenged-answer';
import { eventScope, type Authenticated, type Caller, type ThreeDsDeps } from '../steps/step-deps';
import { buildAReq, type AReqCard } from './areq-builder';
import { answerForEmvResult, notEnrolledAnswer, unavailableAnswer, type AnswerContext } from './emv-outcomes';
import type { AuthenticationResponse, EmvVersion, ErrorMessage } from './emv-messages';
import { transactionHandle } from './handles';
import { cardHashOf, liveParts, prepareCard } from './live-prepare';
import { AuthenticationOutcomeUnknown, ProviderRefusedCredentials, ProviderUnavailable } from './three-ds-server';
import { CHALLENGE_START_WINDOW_MS, methodIndicator, needsPreparing } from './timing';

/**
 * authenticate in `live` (docs/threeds.md "Live": "authenticate"): one AReq per transaction, ever.
 *
 * The transaction's owner object is the single flight: the first request takes its lease and
 * makes the provider calls (prepare the card again if needed, wait out the 3DS Method, send the
 * AReq); every identical request waits in the object for that answer; a different body is a
 * conflict. Before the AReq goes out the lease holder marks it sending: from then on, whatever
 * fails, it is never sent again, and a request that finds it sent with no answer answers
 * `unavailable`. A failure before that point leaves nothing behind (503, retry).
 *
 * The stored answer names no version of the API; each request renders it for its own `version`
 * (src/threeds/api-versions.ts): an answer stored with {@link DS_UNREACHABLE} is `unavailable`
 * for versions 1 and 2 and `authenticationOutage` for version 3.
 */
export async function liveAuthenticate(
  deps: ThreeDsDeps,
  caller: Caller,
  request: AuthenticateRequest,
  card: ResolvedCard,
  hash: string,
  version: ApiVersion = 1,
): Promise<Result<Authenticated>> {
  const { provider, requestor } = liveParts(deps, caller.entity);
  const { owner, id } = deps.transactionFor(caller.scope);
  const context: AnswerContext = {
    transactionReference: request.transactionReference,
    brands: card.brands,
    step: 'authenticate',
    apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
  };
  const answered = (answer: Record<string, unknown>, scenario: string, conflict = false): Result<Authenticated> =>
    ok({ answer: rendered(answer, version), card: card.masked, scenario, conflict });

  const leaseId = crypto.randomUUID();
  const begun = await owner
    .liveBegin(hash, leaseId, deps.now, deps.now + SESSION_TTL_MS, eventScope(deps, caller.scope, version))
    .catch(async (e: unknown) => {
      // The lease may have been taken though its answer was lost: free it for the retry.
      await settleLease(() => owner.liveAbandon(leaseId));
      throw e;
    });
  switch (begun.kind) {
    case 'answered':
      return answered(begun.answer, 'live: answered before');
    case 'conflict':
      if (duplicateIsAnError(version)) return failed({ kind: 'transactionReferenceDuplicate' });
      return answered({ ...unavailableAnswer(context) }, 'conflict', true);
    case 'lost':
      return answered({ ...unavailableAnswer(context) }, 'live: AReq sent, its answer unknown');
    case 'abandoned':
      // Only after this request gave up on its call (its deadline): nobody is waiting for this.
      throw new StorageError('the authentication was abandoned while it waited for the lease');
  }

  // This request holds the lease: the provider calls are its own.
  let sent = false;
  try {
    const cardHash = await cardHashOf(deps.key, card.cardNumber);
    const { prepared, method } = await preparedFor(deps, owner, provider, card.cardNumber, cardHash, begun);
    if (prepared.kind !== 'prepared') {
      const answer = prepared.kind === 'notEnrolled' ? notEnrolledAnswer(context) : unavailableAnswer(context);
      const why = prepared.kind === 'unsupported' ? prepared.why : 'not enrolled';
      return answered(await completed(owner, context, leaseId, answer), `live: ${why}`);
    }
    const threeDSCompInd = await methodOutcome(owner, method);
    const handle = await transactionHandle(deps.key, id);
    const built = buildAReq({
      version: prepared.version as EmvVersion,
      threeDSServerTransID: prepared.threeDSServerTransID,
      threeDSCompInd,
      notificationURL: `${deps.baseUrl}${PAGES.challengeNotification}/${handle}`,
      now: Date.now(),
      request,
      card: areqCard(card),
      browser: begun.facts,
      requestor,
    });
    if (!built.ok) {
      await settleLease(() => owner.liveAbandon(leaseId));
      return failed({ kind: 'bodyDoesNotMatchSchema', errors: built.errors });
    }
    // From here the AReq may reach the DS: it is never sent again.
    if (!(await owner.liveSending(leaseId, Date.now()))) {
      throw new StorageError('the authentication lease ran out before the AReq was sent');
    }
    sent = true;
    let outcome: Awaited<ReturnType<typeof provider.authenticate>>;
    try {
      outcome = await provider.authenticate(built.areq);
    } catch (e) {
      // The provider failed before any DS saw the AReq: nothing happened, the next request sends it.
      if (e instanceof ProviderUnavailable || e instanceof ProviderRefusedCredentials) sent = false;
      if (!(e instanceof AuthenticationOutcomeUnknown)) throw e;
      await settleLease(() => owner.liveLose(leaseId, Date.now()));
      return answered({ ...unavailableAnswer(context) }, 'live: AReq sent, its answer unknown');
    }
    if (outcome.kind === 'erro') {
      const { errorCode, errorComponent } = outcome.erro;
      const unavailable = { ...unavailableAnswer(context) };
      const outage = dsUnreachable(outcome.erro);
      const answer = await completed(
        owner,
        context,
        leaseId,
        outage ? { ...unavailable, [DS_UNREACHABLE]: true } : unavailable,
      );
      return answered(answer, `live: Erro ${errorCode} from ${errorComponent}${outage ? ' (DS unreachable)' : ''}`);
    }
    const ares = outcome.ares;
    if (ares.transStatus === 'C' && isWebUrl(ares.acsURL)) {
      const { answer, challenge } = await challengeOf(deps, caller, request, card, id, ares);
      return answered(await completed(owner, context, leaseId, answer, challenge), 'live: C');
    }
    const answer = answerForEmvResult(ares, context);
    return answered(await completed(owner, context, leaseId, answer), `live: ${ares.transStatus ?? 'no transStatus'}`);
  } catch (e) {
    // Before the AReq was sent: leave nothing behind. After: it was sent and is never sent again.
    await settleLease(() => (sent ? owner.liveLose(leaseId, Date.now()) : owner.liveAbandon(leaseId)));
    throw e;
  }
}

/**
 * The mark of a stored `unavailable` answer that is an outage (the Directory Server could not be
 * reached): never sent, it tells {@link rendered} to answer `authenticationOutage` to version 3.
 * Added last, so that removing it leaves the answer's bytes as they were.
 */
export const DS_UNREACHABLE = '~dsUnreachable';

/** The stored answer as this request's version of the API has it, without the outage mark. */
export function rendered(stored: Record<string, unknown>, version: ApiVersion): Record<string, unknown> {
  const answer = { ...stored };
  if (answer[DS_UNREACHABLE] !== true) return answer;
  delete answer[DS_UNREACHABLE];
  return outageAnswer(answer, version);
}

/**
 * Whether the provider's Erro to the AReq says the Directory Server could not be reached: EMV
 * error 405 (system connection failure) from the DS, or from the 3DS Server naming the Directory
 * Server ("Unable to contact Directory Server"). The only Erro after which the service can say
 * that the card schemes' 3-D Secure is down: any other Erro is about this transaction.
 */
export function dsUnreachable(erro: ErrorMessage): boolean {
  if (erro.errorCode !== '405') return false;
  return erro.errorComponent === 'D' || /directory server/i.test(`${erro.errorDescription} ${erro.errorDetail}`);
}

/** The card as the AReq takes it. */
function areqCard(card: ResolvedCard): AReqCard {
  return {
    cardNumber: card.cardNumber,
    brands: card.brands,
    fromToken: card.tokenId !== undefined,
    ...(card.networkToken ? { networkToken: true } : {}),
    ...(card.cardExpiryDate ? { cardExpiryDate: card.cardExpiryDate } : {}),
    ...(card.cardHolderName !== undefined ? { cardHolderName: card.cardHolderName } : {}),
    ...(card.billingAddress ? { billingAddress: card.billingAddress } : {}),
  };
}

/**
 * The card's preparation: deviceDataInitialize's when it is for this card and under 70 s old,
 * else a new one (whose 3DS Method then never ran: the browser ran the old one's, if any).
 */
async function preparedFor(
  deps: ThreeDsDeps,
  owner: ThreeDsTransactionApi,
  provider: Parameters<typeof prepareCard>[1],
  cardNumber: string,
  cardHash: string,
  begun: LiveRun,
): Promise<{ prepared: PreparedCard; method: MethodRecord }> {
  const known = begun.prepared;
  if (known && known.cardHash === cardHash && !needsPreparing(known.preparedAt, Date.now())) {
    return { prepared: known, method: begun.method };
  }
  const prepared = await owner.livePrepared(
    await prepareCard(deps.key, provider, cardNumber, deps.baseUrl),
    true,
    Date.now(),
  );
  return { prepared, method: prepared.kind === 'prepared' && prepared.methodUrl ? { url: prepared.methodUrl } : {} };
}

/** threeDSCompInd, once a 3DS Method still running has had the rest of its 10 s. */
async function methodOutcome(owner: ThreeDsTransactionApi, method: MethodRecord): Promise<'Y' | 'N' | 'U'> {
  let indicator = methodIndicator(method, Date.now());
  if (indicator.kind === 'wait') {
    const awaited = await owner.liveAwaitMethod(Date.now() + indicator.ms);
    indicator = methodIndicator(awaited, Date.now());
  }
  // A wait that ended a hair early (clocks of two machines) is a method that did not complete in time.
  return indicator.kind === 'indicator' ? indicator.value : 'N';
}

/**
 * Records the lease holder's answer (tried three times: the AReq went out, so this answer is the
 * only one there will ever be). If it cannot be recorded, nobody was told it: the transaction is
 * marked lost, for good, and this request answers 503; its retries answer `unavailable`.
 */
async function completed(
  owner: ThreeDsTransactionApi,
  context: AnswerContext,
  leaseId: string,
  answer: object,
  challenge?: LiveChallenge,
): Promise<Record<string, unknown>> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // Nothing recorded: the authentication was lost meanwhile, and is `unavailable` to all.
      return (
        (await owner.liveComplete(leaseId, { ...answer }, Date.now(), challenge)) ?? { ...unavailableAnswer(context) }
      );
    } catch (e) {
      last = e;
      // An overloaded object is not asked again (a retry would add to its load).
      if (e instanceof StorageError && e.overloaded) break;
    }
  }
  throw last instanceof Error ? last : new StorageError('the authentication answer could not be recorded');
}

/**
 * The `challenged` answer and the challenge the owner keeps: the challenge page relays the CReq
 * (base64url, no padding) to the ACS; the JWT expires 30 s after the ARes, as the ACS refuses a
 * later CReq.
 */
async function challengeOf(
  deps: ThreeDsDeps,
  caller: Caller,
  request: AuthenticateRequest,
  card: ResolvedCard,
  objectId: string,
  ares: AuthenticationResponse,
): Promise<{ answer: Record<string, unknown>; challenge: LiveChallenge }> {
  const aresAt = Date.now();
  const reference = newChallengeReference();
  const creq = toBase64Url(
    utf8(
      JSON.stringify({
        threeDSServerTransID: ares.threeDSServerTransID,
        acsTransID: ares.acsTransID,
        messageVersion: ares.messageVersion,
        messageType: 'CReq',
        challengeWindowSize: WINDOW_CODES[request.challenge.windowSize] ?? '02',
      }),
    ),
  );
  const acsURL = ares.acsURL!;
  return {
    answer: await challengedAnswer(deps, caller, {
      transactionReference: request.transactionReference,
      returnUrl: request.challenge.returnUrl,
      acsUrl: acsURL,
      payload: creq,
      reference,
      version: ares.messageVersion,
      objectId,
      ttlMs: CHALLENGE_START_WINDOW_MS,
      issuedAt: aresAt,
    }),
    challenge: {
      reference,
      transactionReference: request.transactionReference,
      acsURL,
      acsTransID: ares.acsTransID,
      dsTransID: ares.dsTransID,
      threeDSServerTransID: ares.threeDSServerTransID,
      messageVersion: ares.messageVersion,
      creq,
      aresAt,
      returnUrl: request.challenge.returnUrl,
      brands: [...card.brands],
    },
  };
}

/** An ACS URL the browser can be sent to: absolute http(s). */
function isWebUrl(value: string | undefined): value is string {
  if (value === undefined) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * Tells a transaction's object how a live authentication's lease ended (`liveLose`,
 * `liveAbandon`). Tried twice, since a transient fault is the likely reason for a failure; if
 * both fail, the lease simply runs out (src/threeds/transaction/live-transaction.ts). Never throws: the caller's answer
 * (or its original error) stands either way.
 */
async function settleLease(settle: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await settle();
      return;
    } catch {
      // tried again, then left to the lease's expiry
    }
  }
}
