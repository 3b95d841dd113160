import type { Brand } from '../../bin/model';
import { appChallengePayload } from '../app-issuer';
import { isP256Point } from '../../emv/secure-channel';
import { byChannel, isAppRequest, type AppAuthenticateRequest } from '../app-channel-rules';
import { transactionHandle } from '../live/handles';
import { failed, FailureError, fieldFailure, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { AuthenticateRequest } from '../../schemas/threeds-requests-v3';
import type { ThreeDsTransactionApi } from '../transaction-api';
import type { AuthClaim } from '../transaction-api';
import { CHALLENGE_TTL_MS, SESSION_TTL_MS, sessionKey } from '../session-record';
import { PAGES, THREEDS_PATH } from '../api-paths';
import { outageAnswer } from '../api-versions';
import { challengePayload, newChallengeReference } from '../challenge';
import { liveAuthenticate } from './live-authenticate';
import { answerFor, appChallengedAnswer, decoupledAnswer, randomAnswerIds, withExemption } from '../outcomes';
import { seriesCardHash, termsProblem, type SeriesSetup } from '../series-rules';
import { exemptionOf, exemptionToSend, lowValueProblem, type ExemptionResult, type ExemptionType } from '../exemptions';
import { decideRisk } from '../risk-rules';
import { testIssuer, scenarioFor, scenarioNamed, type Scenario } from '../scenarios';
import { challengedAnswer } from '../challenged-answer';
import {
  callerAndCard,
  duplicateAnswer,
  eventScope,
  requestHash,
  type Authenticated,
  type Caller,
  type ThreeDsDeps,
} from './step-deps';

/**
 * authenticate (docs/threeds.md "authenticate"); in `live` it hands over to the 3DS Server provider
 * (src/threeds/steps/live-authenticate.ts). In `test`, the built-in issuer decides: the
 * transaction's owner decides which body came first, and that body's answer is what every
 * identical request gets, at once; the owner projects the session record to KV itself, after the
 * answer (docs/storage.md "Projections"), so this step writes nothing. A different body
 * under the same reference gets `unavailable` and changes nothing (versions 2 and 3 of the API:
 * the error transactionReferenceIsADuplicate; step-deps.ts `duplicateAnswer`). The answer is
 * rendered for the request's `version` of the API (src/threeds/api-versions.ts).
 */
export async function authenticate(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: AuthenticateRequest,
  version: ApiVersion = 1,
): Promise<Result<Authenticated>> {
  // Business rules in order (docs/pipeline.md step 6): entity and feature, brand, then currency.
  const checked = await callerAndCard(deps, merchant, request);
  if (!checked.ok) return checked;
  const { caller, card } = checked.value;
  const channel = byChannel(request);
  const app = 'app' in channel ? channel.app : undefined;
  const exemption = askedExemption(request, caller);
  if (!exemption.ok) return exemption;
  const asked = exemption.value;
  const terms = request.recurring;
  const termsError = terms && termsProblem(terms, deps.now);
  if (termsError) return failed({ kind: 'bodyDoesNotMatchSchema', errors: [termsError] });
  // A series' first payment: a challenge mandated unless the merchant says otherwise (CONTRACT §11).
  if (terms && request.challenge.preference === 'noPreference' && !request.exemption)
    request = { ...request, challenge: { ...request.challenge, preference: 'challengeMandated' } };
  const series: SeriesSetup | undefined = terms && {
    terms,
    amount: request.instruction.value.amount,
    currency: request.instruction.value.currency,
    cardHash: await seriesCardHash(deps.key, card.cardNumber),
    brands: [...card.brands],
  };

  const hash = await requestHash(deps.key, request);
  // In `live`, the licensed 3DS Server provider authenticates (docs/threeds.md "Live").
  // An SDK key off the curve could agree no key with any ACS: a 400 here, before any AReq.
  if (app && !(await isP256Point(app.deviceData.sdk.ephemeralPublicKey)))
    return fieldFailure(
      'fieldHasInvalidValue',
      'The ephemeral public key is not a point on P-256.',
      '$.deviceData.sdk.ephemeralPublicKey',
    );
  if (deps.environment === 'live') return liveAuthenticate(deps, caller, request, card, hash, version, series);
  if (app) {
    const problem = await sdkProblem(deps, app);
    if (problem) return problem;
  }
  const { owner, id } = deps.transactionFor(caller.scope);
  const reference = request.deviceData.collectionReference ?? null;
  // Assume a sent collectionReference was collected (the usual case): the owner answers `stale`
  // with the truth when not, and the second pass carries the truth, so two passes at the most.
  // An app's SDK collected its device data itself (`encData`): no collection page to ask about.
  let collected = app !== undefined || reference !== null;
  let claim: Awaited<ReturnType<ThreeDsTransactionApi['authenticate']>> | undefined;
  for (let pass = 0; pass < 2 && claim?.kind !== 'done'; pass++) {
    if (claim?.kind === 'stale') collected = claim.collected;
    const risk = riskScenario(caller, request, collected, deps.now, asked !== undefined);
    const named = scenarioFor(card.cardHolderName, deps.environment) ?? risk.scenario;
    const { scenario, result } = exemptionScenario(named, asked, card.brands, risk.grantsExemption);
    const candidate = await decide(deps, caller, request, id, card.brands, scenario, result, series);
    const assumption =
      !app && scenario === risk.scenario && risk.dependsOnCollection ? { reference, assumed: collected } : undefined;
    // A claim whose answer was lost is found by the retry, which gets its answer: nothing to undo.
    claim = await owner.authenticate(
      hash,
      candidate,
      deps.now,
      // A session lives an hour from authenticate, or from a decoupled authentication's or an app
      // challenge's end (the SDK's maxTimeout may outlast the hour).
      (candidate.challenge?.decoupled || candidate.challenge?.app ? candidate.challenge.expiresAt : deps.now) +
        SESSION_TTL_MS,
      sessionKey(caller.scope),
      eventScope(deps, caller.scope, version),
      assumption,
    );
  }
  if (claim?.kind !== 'done') throw new Error('the device data collection changed twice during one authenticate');

  if (claim.conflict) return duplicateAnswer(deps, request.transactionReference, card.masked, version);
  // The stored answer names no version: an outage scenario's `unavailable` is rendered per version.
  const stored = claim.answer.answer;
  const answer = scenarioNamed(claim.answer.scenario)?.outage ? outageAnswer(stored, version) : stored;
  return ok({ answer, card: card.masked, scenario: claim.answer.scenario, conflict: false });
}

/**
 * No test scenario: the risk rules (docs/threeds.md "Risk rules") pick frictionless or challenge, given whether the
 * device data collection completed, and say whether the decision depends on that at all.
 */
function riskScenario(
  caller: Caller,
  request: AuthenticateRequest,
  collected: boolean,
  now: number,
  exemption: boolean,
): { scenario: Scenario; dependsOnCollection: boolean; grantsExemption: boolean } {
  const input = {
    // An exemption the version cannot carry is sent as "no challenge requested" (exemptions.ts).
    preference: exemption ? ('noChallengeRequested' as const) : request.challenge.preference,
    amount: request.instruction.value.amount,
    frictionlessThreshold: caller.entity.frictionlessThreshold,
    riskData: request.riskData,
    now,
  };
  const decision = decideRisk({ ...input, deviceDataCollected: collected });
  const dependsOnCollection = decision.kind !== decideRisk({ ...input, deviceDataCollected: !collected }).kind;
  const scenario: Scenario =
    decision.kind === 'frictionless'
      ? { name: 'risk-frictionless', version: '2.2.0', authenticate: 'authenticated' }
      : {
          name: `risk-challenge (${decision.reason})`,
          version: '2.2.0',
          authenticate: 'challenged',
          verification: 'authenticated',
        };
  // The built-in issuer grants an exemption unless the risk data alone would challenge (the
  // amount and the device data collection are what an exemption vouches for).
  const grantsExemption = decideRisk({ ...input, amount: 0, deviceDataCollected: true }).kind === 'frictionless';
  return { scenario, dependsOnCollection, grantsExemption };
}

/**
 * The exemption asked for: `exemption.type`, or `noChallengeRequestedTRAPerformed` (TRA, as
 * Worldpay has it). Refused: an exemption beside a challenge preference (the exemption is the
 * AReq's challenge indicator), and low value above its limit (docs/threeds.md "Exemptions").
 */
function askedExemption(request: AuthenticateRequest, caller: Caller): Result<ExemptionType | undefined> {
  const preference = request.challenge.preference;
  if (request.exemption === undefined) return ok(exemptionOf(request));
  const type = request.exemption.type;
  if (preference !== 'noPreference')
    return fieldFailure(
      'fieldHasInvalidValue',
      'An exemption sets the challenge indicator: leave the challenge preference out.',
      '$.challenge.preference',
    );
  if (type === 'lowValue') {
    const { amount, currency } = request.instruction.value;
    const problem = lowValueProblem(amount, currency, caller.entity.lowValueLimits);
    if (problem !== undefined) return fieldFailure('fieldHasInvalidValue', problem, '$.exemption.type');
  }
  return ok(type);
}

/**
 * The test issuer and an exemption (docs/threeds.md "Exemptions"): one the version cannot carry
 * is downgraded and the scenario decides; one it can is granted (the risk rules' issuer, unless the
 * risk data would challenge; `3ds2-exemption-granted`) or refused with a challenge
 * (`3ds2-exemption-refused`); any other test name decides as it does without one.
 */
function exemptionScenario(
  scenario: Scenario,
  asked: ExemptionType | undefined,
  brands: readonly Brand[],
  riskGrants: boolean,
): { scenario: Scenario; result?: ExemptionResult } {
  if (asked === undefined) return { scenario };
  const { sent, downgraded } = exemptionToSend(asked, scenario.version, brands);
  const result = (applied: boolean): ExemptionResult => ({ requested: asked, sent, applied, downgraded });
  const risk = scenario.name.startsWith('risk-');
  const grants = scenario.exemption === 'granted' || (risk && riskGrants);
  if (downgraded || (!grants && !risk && scenario.exemption !== 'refused')) return { scenario, result: result(false) };
  if (grants) {
    const authenticate = asked === 'dataOnly' ? 'dataOnly' : 'exempted';
    return {
      scenario: { name: `${scenario.name} (${asked} granted)`, version: scenario.version, authenticate },
      result: result(true),
    };
  }
  return {
    scenario: {
      name: `${scenario.name} (${asked} refused)`,
      version: scenario.version,
      authenticate: 'challenged',
      verification: 'authenticated',
    },
    result: result(false),
  };
}

/**
 * This request's candidate answer. Its values are fresh (CAVV, ids, challenge reference and JWT
 * id are random, so they never repeat across sessions); the owner keeps the first candidate, so
 * every identical request gets that one.
 */
async function decide(
  deps: ThreeDsDeps,
  caller: Caller,
  request: AuthenticateRequest,
  objectId: string,
  brands: readonly Brand[],
  scenario: Scenario,
  exemption: ExemptionResult | undefined,
  series: SeriesSetup | undefined,
): Promise<AuthClaim> {
  const base = {
    version: scenario.version,
    brands: [...brands],
    scenario: scenario.name,
    ...(exemption ? { exemption } : {}),
    ...(series ? { series } : {}),
  };
  if (scenario.authenticate === 'decoupled' && request.decoupled) {
    const reference = newChallengeReference();
    const expiresAt = deps.now + request.decoupled.maxMinutes * 60_000;
    const answer = decoupledAnswer({
      transactionReference: request.transactionReference,
      version: scenario.version,
      reference,
      expiresAt,
      apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
    });
    const answersAt = scenario.decoupled === 'answers' ? deps.now + testIssuer.decoupledAnswerMs : null;
    const outcome = scenario.verification === 'authenticated' ? 'passed' : 'failed';
    return {
      ...base,
      answer: { ...withExemption(answer, exemption) },
      challenge: { reference, expiresAt, onSuccess: 'authenticated', decoupled: { answersAt, outcome } },
    };
  }
  // 3-D Secure 1 has no app channel: its issuer cannot authenticate an app.
  const appOn3ds1 = isAppRequest(request) && scenario.version.startsWith('1.');
  if (scenario.authenticate !== 'challenged' || appOn3ds1) {
    // A decoupled issuer the request did not allow: an unrequested `D` is `unavailable` (CONTRACT §12).
    const kind =
      scenario.authenticate === 'decoupled' || scenario.authenticate === 'challenged' || appOn3ds1
        ? 'unavailable'
        : scenario.authenticate;
    const answer = answerFor(kind, {
      transactionReference: request.transactionReference,
      brands,
      version: scenario.version,
      ids: randomAnswerIds(),
      step: 'authenticate',
      apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
    });
    return { ...base, answer: { ...withExemption(answer, exemption) } };
  }
  const reference = newChallengeReference();
  if (isAppRequest(request))
    return { ...base, ...(await appChallenge(deps, request, objectId, scenario, reference, exemption)) };
  const payload = await challengePayload(deps.key, reference, scenario.version, request.challenge.windowSize);
  return {
    ...base,
    answer: withExemption(
      await challengedAnswer(deps, caller.scope, {
        transactionReference: request.transactionReference,
        // byChannel: a browser's request has its return URL.
        returnUrl: request.challenge.returnUrl!,
        // The service's own test ACS: the challenge page itself.
        acsUrl: `${deps.baseUrl}${PAGES.challenge}`,
        payload,
        reference,
        version: scenario.version,
        objectId,
        ttlMs: CHALLENGE_TTL_MS,
        issuedAt: deps.now,
      }),
      exemption,
    ),
    challenge: {
      reference,
      expiresAt: deps.now + CHALLENGE_TTL_MS,
      onSuccess: scenario.verification ?? 'authenticated',
    },
  };
}

/**
 * In `test`, an app's `encData` must be what an SDK makes (CONTRACT.md §12): a JWE the test
 * Directory Server's key opens (its content is not read further); anything else is a 400 at its
 * path. (The ephemeral key is checked in both environments, before.)
 */
async function sdkProblem(deps: ThreeDsDeps, request: AppAuthenticateRequest): Promise<Result<never> | undefined> {
  if (!deps.appIssuer) {
    const what = "the app channel needs the test issuer's keys (the test Worker)";
    throw new FailureError({ kind: 'misconfigured', what }, what);
  }
  if (await deps.appIssuer.opensEncData(request.deviceData.sdk.encData)) return undefined;
  return fieldFailure(
    'fieldHasInvalidValue',
    "The test Directory Server's key does not open the SDK's encrypted data (GET /3ds/test/directory-server).",
    '$.deviceData.sdk.encData',
  );
}

/**
 * The test issuer's app challenge (docs/threeds.md "The app channel"): the answer carries the
 * payload the app's SDK takes, whose `acsSignedContent` names the service's own CReq endpoint for
 * this transaction; the claim keeps what the ACS needs of the SDK (never a key). The SDK's
 * `maxTimeout` is the challenge's deadline.
 */
async function appChallenge(
  deps: ThreeDsDeps,
  request: AppAuthenticateRequest,
  objectId: string,
  scenario: Scenario,
  reference: string,
  exemption: ExemptionResult | undefined,
): Promise<Pick<AuthClaim, 'answer' | 'challenge'>> {
  const sdk = request.deviceData.sdk;
  const ids = { acsTransID: crypto.randomUUID(), threeDSServerTransID: crypto.randomUUID() };
  const acsURL = `${deps.baseUrl}${PAGES.appCReq}/${await transactionHandle(deps.key, objectId)}`;
  const payload = await appChallengePayload(deps.appIssuer!, deps.acsEphemeralKeySecret, {
    ids,
    acsURL,
    sdkEphemPubKey: sdk.ephemeralPublicKey,
    version: scenario.version,
    ...(sdk.appUrl !== undefined ? { appUrl: sdk.appUrl } : {}),
  });
  const answer = appChallengedAnswer({
    transactionReference: request.transactionReference,
    version: scenario.version,
    reference,
    payload,
    apiBase: `${deps.baseUrl}${THREEDS_PATH}`,
  });
  return {
    answer: withExemption(answer, exemption),
    challenge: {
      reference,
      expiresAt: deps.now + sdk.maxTimeout * 60_000,
      onSuccess: scenario.verification ?? 'authenticated',
      app: {
        ...ids,
        sdkTransID: sdk.transactionId,
        sdkEphemPubKey: sdk.ephemeralPublicKey,
        sdkReferenceNumber: sdk.referenceNumber,
        messageVersion: scenario.version,
        onSuccess: scenario.verification ?? 'authenticated',
      },
    },
  };
}
