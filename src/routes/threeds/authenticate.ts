import { currencyAllowed } from '../../config/merchants';
import { fail } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { CHALLENGE_TTL_MS, SESSION_TTL_MS, type AuthRecord } from '../../storage/threeds-store';
import { challengeCReq, newChallengeReference } from '../../threeds/challenge';
import { signJwt } from '../../threeds/jwt';
import { answerOf, authenticationFor, stableUuid } from '../../threeds/outcomes';
import { decideRisk } from '../../threeds/risk';
import { scenarioFor, type Scenario } from '../../threeds/scenarios';
import { AUTHENTICATE, type AuthenticateRequest } from '../../threeds/schemas';
import { cardFacts, orgUnitId, requestHash, THREEDS_PATH, threeDsContext, type ThreeDsContext } from './common';

/** `POST /verifications/customers/3ds/authenticate` (CONTRACT.md §6.2). */
export const authenticate: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(AUTHENTICATE, body);
    const ctx = threeDsContext(merchant, request.merchant.entity, request.transactionReference, rc);
    // Business rules in CONTRACT.md §2 order: entity, feature (above), brand, then currency.
    const card = await cardFacts(request.instruction.paymentInstrument, merchant, ctx, '$.instruction.paymentInstrument', rc);
    const { currency } = request.instruction.value;
    if (!currencyAllowed(ctx.entity, currency)) fail({ kind: 'currencyNotSupported', currency });

    const hash = await requestHash(ctx.key, request);
    // KV has no compare-and-set: two different bodies racing under one new reference could both
    // be answered; afterwards every retry sees whichever session KV kept.
    const existing = await ctx.store.getAuth(ctx.scope);
    if (existing) {
      if (existing.requestHash === hash) return { status: 200, body: existing.response };
      // A different request under a used reference: unavailable, and the session is untouched.
      // Not stored, so its id comes from the request: the same retry gets the same answer.
      const transactionId = await stableUuid(ctx.key, `unavailable:${hash}`);
      return { status: 200, body: answerOf(request.transactionReference, authenticationFor('unavailable', card.brands, existing.version, transactionId)) };
    }

    const scenario = scenarioFor(card.cardHolderName, rc.env.ENVIRONMENT) ?? await riskScenario(request, ctx);
    rc.log.scenario = scenario.name;
    const answer = scenario.authenticate === 'challenged'
      ? await challenged(request, ctx, scenario)
      : answered(request, card.brands, scenario);
    await ctx.store.putAuth(ctx.scope, {
      ...answer, requestHash: hash, brands: card.brands, version: scenario.version, expiresAt: ctx.now + SESSION_TTL_MS,
    });
    return { status: 200, body: answer.response };
  },
};

/** No test scenario: the risk rules of §6.5 pick frictionless or challenge. */
async function riskScenario(request: AuthenticateRequest, ctx: ThreeDsContext): Promise<Scenario> {
  const account = request.riskData?.account;
  const decision = decideRisk({
    preference: request.challenge.preference,
    amount: request.instruction.value.amount,
    frictionlessThreshold: ctx.entity.frictionlessThreshold,
    deviceDataCollected: await deviceDataCollected(request, ctx),
    previousSuspiciousActivity: account?.previousSuspiciousActivity,
    transactionsAttemptedLastDay: account?.transactionsAttemptedLastDay,
    addCardAttemptsLastDay: account?.addCardAttemptsLastDay,
  });
  return decision.kind === 'frictionless'
    ? { name: 'risk-frictionless', version: '2.2.0', authenticate: 'authenticated' }
    : { name: `risk-challenge (${decision.reason})`, version: '2.2.0', authenticate: 'challenged', verification: 'authenticated' };
}

/**
 * Whether the browser completed device data collection for this session: the DDC page wrote its
 * SessionId (the collectionReference) with the jti of the DDC JWT that deviceDataInitialize
 * issued for this transaction. Both keys were written before this step, so reading them caches
 * no false "missing"; if the browser's write has not reached this location yet, the answer is
 * "not collected", which only makes a challenge more likely.
 */
async function deviceDataCollected(request: AuthenticateRequest, ctx: ThreeDsContext): Promise<boolean> {
  const reference = request.deviceData.collectionReference;
  if (reference === undefined) return false;
  const [init, ddc] = await Promise.all([ctx.store.getInit(ctx.scope), ctx.store.getDdc(reference)]);
  return init !== undefined && ddc !== undefined && ddc.ddcJti === init.ddcJti;
}

type Answer = Pick<AuthRecord, 'response' | 'challenge'>;

function answered(request: AuthenticateRequest, brands: AuthRecord['brands'], scenario: Scenario): Answer {
  // Only challenged scenarios reach `challenged`; the others answer at once.
  const kind = scenario.authenticate === 'challenged' ? 'unavailable' : scenario.authenticate;
  return { response: answerOf(request.transactionReference, authenticationFor(kind, brands, scenario.version)) };
}

async function challenged(request: AuthenticateRequest, ctx: ThreeDsContext, scenario: Scenario): Promise<Answer> {
  const reference = newChallengeReference();
  const acsUrl = `${ctx.baseUrl}/3ds/challenge`;
  const payload = btoa(JSON.stringify(challengeCReq(scenario.version, request.challenge.windowSize)));
  const { jwt } = await signJwt(ctx.key, 'challenge', {
    OrgUnitId: await orgUnitId(ctx.scope),
    ReturnUrl: request.challenge.returnUrl,
    Payload: { ACSUrl: acsUrl, Payload: payload, TransactionId: reference },
    ObjectifyPayload: true,
  }, CHALLENGE_TTL_MS / 1000, ctx.now);
  return {
    response: {
      outcome: 'challenged',
      transactionReference: request.transactionReference,
      authentication: { version: scenario.version },
      challenge: { reference, url: acsUrl, jwt, payload },
      _links: { '3ds:verify': { href: `${ctx.baseUrl}${THREEDS_PATH}/verification` } },
    },
    challenge: { reference, onSuccess: scenario.verification ?? 'authenticated', expiresAt: ctx.now + CHALLENGE_TTL_MS },
  };
}
