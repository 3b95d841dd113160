import { EMV_VERSIONS, type EmvVersion } from '../emv/emv-rules';
import { autoPostPage, challengeCodePage, errorPage, idleMethodPage, newNonce, type Page } from './acs-pages';
import { base64UrlEncode, decodeJsonObject, isPadded } from './base64url';
import { isUuid } from './erro';
import type { FakeEnv } from './env';
import { fieldFaults } from './field-check';
import { htmlResponse, jsonResponse, rawResponse, readForm } from './http';
import { erroMessage, ERRO } from '../emv/challenge-messages';
import type { ChallengeRequest } from './messages';
import { fakeNow, transactionStub } from './stubs';
import type { ChallengeEnd } from './transaction';
import { ACS_CHALLENGE_SUBMIT_PATH } from './urls';

/**
 * The fake ACS in the browser: the 3DS Method URL, the acsURL that takes the CReq, and the route
 * its own challenge page submits to. Each answers a page (acs-pages.ts).
 */

function page(build: (nonce: string) => Page, status = 200): Response {
  return htmlResponse(build(newNonce()), status);
}

function problem(status: number, title: string, detail: string): Response {
  return page((nonce) => errorPage(nonce, title, detail), status);
}

const isHttpUrl = (value: unknown): value is string => typeof value === 'string' && /^https?:\/\/[^\s]+$/.test(value);

/**
 * `POST /acs/method[/{version}]` with `threeDSMethodData` (base64url, padded or not, of
 * `{threeDSServerTransID, threeDSMethodNotificationURL}`): the method was invoked; when the
 * scenario's method completes, the page notifies the requestor at once (same frame), with
 * `threeDSMethodData` = base64url (unpadded) of `{threeDSServerTransID}`.
 */
export async function methodRoute(request: Request, env: FakeEnv, version: EmvVersion | undefined): Promise<Response> {
  const { threeDSMethodData } = await readForm(request);
  const data = threeDSMethodData === undefined ? undefined : decodeJsonObject(threeDSMethodData);
  const id = data?.['threeDSServerTransID'];
  const notify = data?.['threeDSMethodNotificationURL'];
  if (!isUuid(id) || !isHttpUrl(notify)) {
    return problem(
      400,
      '3DS Method refused',
      'threeDSMethodData must be base64url of {threeDSServerTransID, threeDSMethodNotificationURL}',
    );
  }
  const outcome = await transactionStub(env, id).invokeMethod(version, await fakeNow(env));
  switch (outcome.kind) {
    case 'unknown':
      return problem(404, '3DS Method refused', 'No transaction has this threeDSServerTransID');
    case 'notOffered':
      return problem(404, '3DS Method refused', outcome.why);
    case 'neverCompletes':
      return page(idleMethodPage);
    case 'completes':
      return page((nonce) =>
        autoPostPage(nonce, '3DS Method complete', notify, {
          threeDSMethodData: base64UrlEncode(JSON.stringify({ threeDSServerTransID: id }), false),
        }),
      );
  }
}

/** `threeDSSessionData` as EMV and the provider's documentation take it: 1 to 1024 base64url characters. */
export const SESSION_DATA = /^[A-Za-z0-9_-]{1,1024}$/;

/**
 * `POST /acs/challenge` with `creq` (base64url without padding, as EMVCo and 3dsecure.io's sandbox
 * demand) and `threeDSSessionData`, when posted, of 1 to 1024 base64url characters: the challenge
 * page of the scenario, or an error page.
 */
export async function challengeRoute(request: Request, env: FakeEnv, origin: string): Promise<Response> {
  const { creq, threeDSSessionData } = await readForm(request);
  if (!creq) return problem(400, 'Challenge refused', 'No creq was posted');
  if (isPadded(creq)) return problem(400, 'Challenge refused', 'creq must be base64url without padding');
  if (threeDSSessionData !== undefined && !SESSION_DATA.test(threeDSSessionData))
    return problem(400, 'Challenge refused', 'threeDSSessionData must be 1 to 1024 base64url characters');
  const message = decodeJsonObject(creq);
  if (!message) return problem(400, 'Challenge refused', 'creq is not base64url of a JSON object');
  const version = EMV_VERSIONS.find((v) => v === message['messageVersion']);
  if (!version) return problem(400, 'Challenge refused', 'The CReq has no messageVersion the ACS speaks');
  const faults = fieldFaults('CReq', version, message);
  const wrong = [...faults.missing, ...faults.invalid];
  if (wrong.length > 0)
    return problem(400, 'Challenge refused', `The CReq's fields are not valid: ${wrong.join(', ')}`);
  const creqMessage = message as unknown as ChallengeRequest;
  const start = await transactionStub(env, creqMessage.threeDSServerTransID).startChallenge(
    creqMessage,
    threeDSSessionData,
    await fakeNow(env),
  );
  const submitUrl = `${origin}${ACS_CHALLENGE_SUBMIT_PATH}`;
  switch (start.kind) {
    case 'refused':
      return problem(start.status, 'Challenge refused', start.why);
    case 'tooLate':
      return problem(410, 'Challenge expired', 'The CReq arrived more than 30 seconds after the ARes');
    case 'show': {
      const ids = { threeDSServerTransID: start.threeDSServerTransID, acsTransID: start.acsTransID };
      if (start.flow === 'autoPass' || start.flow === 'autoFail') {
        return page((nonce) => autoPostPage(nonce, 'Authenticating', submitUrl, { ...ids, action: 'auto' }));
      }
      return page((nonce) => challengeCodePage(nonce, { submitUrl, ...ids, attemptsLeft: start.attemptsLeft }));
    }
  }
}

/**
 * `POST /acs/challenge/submit` (from the fake's own challenge pages): a wrong code shows the page
 * again; an end records the RReq and posts the final CRes (base64url WITH padding, as the sandbox
 * once did, so that requestors prove they accept it) and `threeDSSessionData` to the AReq's
 * notificationURL.
 */
export async function challengeSubmitRoute(request: Request, env: FakeEnv, origin: string): Promise<Response> {
  const form = await readForm(request);
  const id = form['threeDSServerTransID'];
  if (!isUuid(id)) return problem(400, 'Challenge refused', 'No threeDSServerTransID was posted');
  const submission = { acsTransID: form['acsTransID'] ?? '', action: form['action'] ?? '', code: form['code'] ?? '' };
  const outcome = await transactionStub(env, id).submitChallenge(submission, await fakeNow(env));
  switch (outcome.kind) {
    case 'refused':
      return problem(outcome.status, 'Challenge refused', outcome.why);
    case 'retry':
      return page((nonce) =>
        challengeCodePage(nonce, {
          submitUrl: `${origin}${ACS_CHALLENGE_SUBMIT_PATH}`,
          threeDSServerTransID: id,
          acsTransID: submission.acsTransID,
          attemptsLeft: outcome.attemptsLeft,
        }),
      );
    case 'ended':
      return challengeEndPage(outcome.end);
  }
}

/** The final CRes as the ACS posts it: base64url with padding. */
export function encodedCres(end: ChallengeEnd): string | undefined {
  return end.cres && base64UrlEncode(JSON.stringify(end.cres), true);
}

function challengeEndPage(end: ChallengeEnd): Response {
  if (!isHttpUrl(end.notificationURL)) {
    return problem(400, 'Challenge ended', 'The AReq had no notificationURL to return to');
  }
  return page((nonce) =>
    autoPostPage(nonce, 'Returning to the merchant', end.notificationURL, {
      cres: encodedCres(end),
      threeDSSessionData: end.threeDSSessionData,
    }),
  );
}

/** The version in a per-version method path (`/acs/method/2.3.1`), if it is one the fake speaks. */
export function methodPathVersion(segment: string): EmvVersion | undefined {
  return EMV_VERSIONS.find((v) => v === segment);
}

/**
 * `POST /acs/app/creq/{threeDSServerTransID}`: a CReq of an app's SDK, a compact JWE
 * (`application/jose`), answered with the CRes JWE (`application/jose`) or an Erro (plain JSON,
 * HTTP 200, as EMV has it: the SDK may not be able to decrypt anything).
 */
export async function appCReqRoute(request: Request, env: FakeEnv, threeDSServerTransID: string): Promise<Response> {
  // Bytes, then UTF-8: workerd warns when text() reads a body of a media type it does not know as text.
  const jwe = new TextDecoder().decode(await request.arrayBuffer()).trim();
  if (!isUuid(threeDSServerTransID) || jwe.length > 64_000) {
    return jsonResponse(erroMessage(ERRO.transactionNotRecognised, 'No app challenge has this address.'));
  }
  const answer = await transactionStub(env, threeDSServerTransID).appCReq(jwe, await fakeNow(env));
  return answer.kind === 'cres'
    ? rawResponse(answer.jwe, 200, 'application/jose; charset=utf-8')
    : jsonResponse(answer.erro);
}
