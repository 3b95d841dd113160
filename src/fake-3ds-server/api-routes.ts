import { authenticate, priorReference, type PriorAuthentication } from './authentication';
import { isObject } from './base64url';
import { erro, isUuid } from './erro';
import type { FakeEnv } from './env';
import { HANG_MS, LATE_DEFAULT_MS, type ArmedFault, type FaultEndpoint } from './faults';
import { fieldFaults } from './field-check';
import { jsonResponse, pause, rawResponse, readJson, textResponse } from './http';
import { NOT_ENROLLED_PREFIX, scenarioFor } from './scenarios';
import { controlStub, transactionStub } from './stubs';
import type { TransactionRecord } from './transaction-record';

/**
 * The provider's API, shaped like 3dsecure.io's (research notes §1.2, §1.3): `POST /preauth`,
 * `/auth` and `/postauth`, JSON in UTF-8, the key in the `APIKey` header (401 text/plain
 * `Invalid API Key` otherwise), errors as Erro JSON with HTTP 200. Armed faults hit here.
 */

interface Call {
  request: Request;
  env: FakeEnv;
  /** The fake's clock at the start of the call. */
  now: number;
  origin: string;
}

const ABOUT = { preauth: 'PReq', auth: 'AReq', postauth: 'RReq' } as const;

/**
 * One call of a provider endpoint: the key, then the fault armed for it (if any), then the
 * endpoint itself.
 */
export async function providerCall(
  endpoint: FaultEndpoint,
  request: Request,
  env: FakeEnv,
  origin: string,
): Promise<Response> {
  if (!env.FAKE_API_KEY || request.headers.get('APIKey') !== env.FAKE_API_KEY) {
    return textResponse('Invalid API Key', 401);
  }
  const { offsetMs, fault } = await controlStub(env).beginCall(endpoint);
  if (fault && fault.kind !== 'late') return faultAnswer(fault, request);
  const answer = await ENDPOINTS[endpoint]({ request, env, now: Date.now() + offsetMs, origin });
  // A late answer: the provider did the work (an AReq reached the DS), the answer comes late.
  if (fault) await pause(fault.delayMs ?? LATE_DEFAULT_MS);
  return answer;
}

async function faultAnswer(fault: ArmedFault, request: Request): Promise<Response> {
  switch (fault.kind) {
    case '401':
      return textResponse('Invalid API Key', 401);
    case '500':
    case '503':
      return jsonResponse(
        erro({ code: '403', component: 'S', detail: `A ${fault.kind} fault was armed`, about: ABOUT[fault.endpoint] }),
        Number(fault.kind),
      );
    case 'malformed':
      return rawResponse('{"messageType":"Erro","errorCode":', 200, 'application/json; charset=utf-8');
    case 'hang':
      await pause(HANG_MS, request.signal);
      return textResponse('The hang fault let go', 504);
    case 'late':
      throw new Error('a late fault answers the real answer');
  }
}

const ENDPOINTS: Readonly<Record<FaultEndpoint, (call: Call) => Promise<Response>>> = {
  preauth,
  auth,
  postauth,
};

/** `POST /preauth {acctNumber}`: the card range data of a new transaction. */
async function preauth({ request, env, now, origin }: Call): Promise<Response> {
  const body = await readJson(request);
  const refuse = (fields: Omit<Parameters<typeof erro>[0], 'about'>) =>
    jsonResponse(erro({ ...fields, about: 'PReq' }));
  if (!isObject(body)) return refuse({ code: '101', component: 'S', detail: 'The body is not a JSON object' });
  const faults = fieldFaults('PreauthRequest', '2.2.0', body);
  if (faults.missing.length > 0) return refuse({ code: '201', component: 'S', detail: faults.missing.join(', ') });
  if (faults.invalid.length > 0) return refuse({ code: '203', component: 'S', detail: faults.invalid.join(', ') });
  const acctNumber = body['acctNumber'] as string;
  if (acctNumber.startsWith(NOT_ENROLLED_PREFIX)) {
    return refuse({
      code: '305',
      component: 'S',
      description: 'Unknown BIN',
      detail: 'No CRD found: the card is not enrolled with any known DS',
    });
  }
  const scenario = scenarioFor(acctNumber);
  if (!scenario) {
    return refuse({
      code: '305',
      component: 'S',
      detail: `The last four digits (${acctNumber.slice(-4)}) choose no scenario of the fake's grid`,
    });
  }
  const threeDSServerTransID = crypto.randomUUID();
  const crd = await transactionStub(env, threeDSServerTransID).prepare({
    threeDSServerTransID,
    acctNumber,
    scenario,
    now,
    origin,
  });
  return jsonResponse(crd);
}

/** `POST /auth` (the AReq): the ARes, or an Erro. */
async function auth({ request, env, now, origin }: Call): Promise<Response> {
  const body = await readJson(request);
  const id = isObject(body) ? body['threeDSServerTransID'] : undefined;
  const prior = isObject(body) && body['deviceChannel'] === '03' ? await priorOf(env, body) : undefined;
  const answer = isUuid(id)
    ? await transactionStub(env, id).authenticate(body, now, origin, prior)
    : // No transaction to ask: the checks end with an Erro at the latest when they look for one.
      authenticate(undefined, body, { now, origin, acsTransID: '', dsTransID: '', cavv: '', prior }).answer;
  if (answer.kind === 'erro') return jsonResponse(answer.erro);
  // Every ARes's acsTransID: a challenge's (the control route ends it), a 3RI's prior reference.
  await controlStub(env).rememberAcsTransaction(answer.ares.acsTransID, answer.ares.threeDSServerTransID);
  return jsonResponse(answer.ares);
}

/**
 * What the ACS knows of the authentication a 3RI names (`threeDSReqPriorRef`, the prior's
 * acsTransID): its card and its final status (the ARes's, or its challenge's RReq's); undefined
 * when it answered no such transaction.
 */
async function priorOf(env: FakeEnv, areq: Record<string, unknown>): Promise<PriorAuthentication | undefined> {
  const reference = priorReference(areq);
  if (reference === undefined) return undefined;
  const id = await controlStub(env).acsTransaction(reference);
  const record = (id === undefined ? undefined : await transactionStub(env, id).snapshot()) as
    TransactionRecord | undefined;
  if (!record) return undefined;
  const status = record.rreq?.transStatus ?? record.ares?.transStatus;
  return { acsTransID: reference, acctNumber: record.acctNumber, ...(status ? { status } : {}) };
}

/** `POST /postauth {threeDSServerTransID}`: the RReq of a challenge, or an Erro. */
async function postauth({ request, env, now }: Call): Promise<Response> {
  const body = await readJson(request);
  if (!isObject(body)) {
    return jsonResponse(erro({ code: '101', component: 'S', detail: 'The body is not a JSON object', about: 'RReq' }));
  }
  const id = body['threeDSServerTransID'];
  if (!isUuid(id)) {
    return jsonResponse(
      erro({
        code: '203',
        component: 'S',
        description: 'Unknown threeDSServerTransID',
        detail: 'threeDSServerTransID must be a UUID',
        about: 'RReq',
      }),
    );
  }
  const answer = await transactionStub(env, id).postauth(id, now);
  return jsonResponse(answer.kind === 'rreq' ? answer.rreq : answer.erro);
}
