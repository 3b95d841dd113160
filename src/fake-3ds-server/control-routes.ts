import { encodedCres } from './acs-routes';
import { FAKE_DIRECTORY_SERVER } from './app-keys';
import type { ControlResult } from './challenge-flow';
import { parseClockChange } from './clock';
import { isObject } from './base64url';
import type { FakeEnv } from './env';
import { parseFault } from './faults';
import { jsonResponse, readJson } from './http';
import { controlStub, fakeNow, transactionStub } from './stubs';

/**
 * The control routes for tests and CI, under `/_fake/`: JSON, no API key (the fake is never
 * deployed where anyone else could reach it).
 */

const CONTROL_RESULTS: readonly ControlResult[] = ['Y', 'N', 'cancel', 'timeout'];

const refusal = (status: number, error: string) => jsonResponse({ error }, status);

/**
 * `POST /_fake/challenge/{acsTransID}` `{result: 'Y' | 'N' | 'cancel' | 'timeout'}`: ends a
 * pending challenge without a browser; answers `{rreq, cres, threeDSSessionData?, notificationURL}`
 * (cres as the ACS would post it), 409 when the challenge has already ended.
 */
export async function endChallengeRoute(request: Request, env: FakeEnv, acsTransID: string): Promise<Response> {
  const body = await readJson(request);
  const result = CONTROL_RESULTS.find((r) => isObject(body) && r === body['result']);
  if (!result) return refusal(400, `result must be one of ${CONTROL_RESULTS.join(', ')}`);
  const id = await controlStub(env).acsTransaction(acsTransID);
  if (id === undefined) return refusal(404, 'No challenge has this acsTransID');
  const outcome = await transactionStub(env, id).endChallenge(acsTransID, result, await fakeNow(env));
  if (outcome.kind === 'refused') return refusal(outcome.status, outcome.why);
  const { rreq, notificationURL, threeDSSessionData } = outcome.end;
  return jsonResponse({
    rreq,
    cres: encodedCres(outcome.end),
    ...(threeDSSessionData !== undefined ? { threeDSSessionData } : {}),
    notificationURL,
  });
}

/** `GET /_fake/transactions/{threeDSServerTransID}`: all the fake knows of a transaction. */
export async function transactionRoute(env: FakeEnv, threeDSServerTransID: string): Promise<Response> {
  const snapshot = await transactionStub(env, threeDSServerTransID).snapshot();
  return snapshot ? jsonResponse(snapshot) : refusal(404, 'No transaction has this id');
}

/** `GET /_fake/clock` → `{offsetMs}`; `POST /_fake/clock` `{advanceMs}` or `{reset: true}` → `{offsetMs}`. */
export async function clockRoute(request: Request, env: FakeEnv): Promise<Response> {
  const control = controlStub(env);
  if (request.method === 'GET') return jsonResponse({ offsetMs: await control.clock() });
  const change = parseClockChange(await readJson(request));
  if ('error' in change) return refusal(400, change.error);
  return jsonResponse({ offsetMs: await control.changeClock(change) });
}

/** `POST /_fake/faults` arms one; `GET` lists them; `DELETE` clears them. Each answers `{faults}`. */
export async function faultsRoute(request: Request, env: FakeEnv): Promise<Response> {
  const control = controlStub(env);
  if (request.method === 'DELETE') {
    await control.clearFaults();
    return jsonResponse({ faults: [] });
  }
  if (request.method === 'GET') return jsonResponse({ faults: await control.faults() });
  const fault = parseFault(await readJson(request));
  if ('error' in fault) return refusal(400, fault.error);
  return jsonResponse({ faults: await control.armFault(fault) });
}

/**
 * `GET /_fake/directory-server`: the fake Directory Server's encryption key (for an SDK's
 * `encData`) and CA certificate (for its check of `acsSignedContent`), as the service publishes its
 * test issuer's at `GET /3ds/test/directory-server`.
 */
export function directoryServerRoute(): Promise<Response> {
  return Promise.resolve(jsonResponse(FAKE_DIRECTORY_SERVER));
}
