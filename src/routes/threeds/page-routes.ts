import { failureOf } from '../../failures';
import { mediaTypeOf } from '../../http/api-headers';
import { drainBody, readBodyText } from '../../http/body';
import type { RequestContext } from '../../http/endpoint';
import { mapFailure } from '../../http/error-document';
import { errorLogFields } from '../../log';
import { PAGES } from '../../threeds/api-paths';
import {
  challengePage,
  completionPage,
  ddcPage,
  errorPage,
  liveDdcPage,
  methodNotifiedPage,
  pageResponse,
  relayPage,
  type HtmlPage,
} from '../../threeds/page-html';
import { showChallenge, submitChallenge } from '../../threeds/steps/challenge-page';
import {
  challengeEnded,
  collectDeviceDataLive,
  methodCompleted,
  recordBrowserFacts,
} from '../../threeds/steps/live-pages';
import { collectDeviceData } from '../../threeds/steps/device-data-collection';
import type { PageAnswer } from '../../threeds/steps/page-answer';
import type { ThreeDsDeps } from '../../threeds/steps/step-deps';
import { publicBaseUrl, threeDsDeps } from '../deps-from-request';
import { failurePage } from './failure-page';

/**
 * The pages a cardholder's browser posts to (docs/threeds.md "Browser pages"): the test ACS's,
 * and in `live` the DDC page with the 3DS Method, the relay to the issuer's ACS and the
 * notifications the ACS posts back (docs/threeds.md "Live": "Pages"). They
 * answer HTML, errors included, and are not behind Basic auth: the signed JWTs are their
 * credentials. A failure is classified as on the JSON APIs (`failureOf`, the same status and
 * Retry-After), and shown as a page.
 */

type Step = (form: URLSearchParams, deps: ThreeDsDeps) => Promise<PageAnswer>;

/** `POST /3ds/ddc` with form fields `Bin` and `JWT`; in `live` the page also runs the 3DS Method. */
export const ddcRoute = (rc: RequestContext): Promise<Response> =>
  page(rc, (form, deps) =>
    deps.environment === 'live'
      ? collectDeviceDataLive(deps, form.get('JWT') ?? '', rc.request.headers)
      : collectDeviceData(deps, form.get('JWT') ?? ''),
  );

/**
 * `POST /3ds/ddc/facts/<handle>` (live): the DDC page's script posts what it learned of the
 * browser, as JSON. 204; 404 for a handle this service did not issue; a storage failure's status.
 */
export async function ddcFactsRoute(rc: RequestContext, params: Record<string, string>): Promise<Response> {
  rc.log.api = 'threeDSPages';
  try {
    const text = await readBodyText(rc.request);
    let posted: unknown;
    try {
      posted = JSON.parse(text ?? '');
    } catch {
      posted = undefined;
    }
    const recorded = await recordBrowserFacts(threeDsDeps(rc), params.handle ?? '', posted);
    return new Response(null, { status: recorded ? 204 : 404 });
  } catch (e) {
    Object.assign(rc.log, errorLogFields(e));
    const { status, headers } = mapFailure(failureOf(e));
    return new Response(null, {
      status,
      headers: { ...(headers['Retry-After'] ? { 'Retry-After': headers['Retry-After'] } : {}) },
    });
  }
}

/**
 * `POST /3ds/method/<handle>` (live): the issuer's 3DS Method notification, in the DDC page's
 * hidden frame. Its body is not needed (and not trusted), so any form is taken.
 */
export const methodNotificationRoute = (rc: RequestContext, params: Record<string, string>): Promise<Response> =>
  page(rc, (_form, deps) => methodCompleted(deps, params.handle ?? ''), { anyBody: true });

/** `POST /3ds/challenge/notify/<handle>` (live) with the ACS's `cres`: the challenge ended. */
export const challengeNotificationRoute = (rc: RequestContext, params: Record<string, string>): Promise<Response> =>
  page(rc, (form, deps) => challengeEnded(deps, params.handle ?? '', form.get('cres') ?? ''));

/** `POST /3ds/challenge` with form fields `JWT` and optional `MD` (≤ 1024). */
export const challengeRoute = (rc: RequestContext): Promise<Response> =>
  page(rc, (form, deps) => showChallenge(deps, form.get('JWT') ?? '', form.get('MD') ?? ''));

/** `POST /3ds/challenge/submit` with the signed `state`, `code` and `action` (submit or cancel). */
export const challengeSubmitRoute = (rc: RequestContext): Promise<Response> =>
  page(rc, (form, deps) =>
    submitChallenge(deps, form.get('state') ?? '', form.get('action') ?? 'submit', form.get('code') ?? ''),
  );

/**
 * Shared page plumbing: form parsing, rendering, and every failure as an HTML page. `anyBody`:
 * the step needs no form, so a body of any type is read and dropped.
 */
async function page(rc: RequestContext, step: Step, options: { anyBody?: boolean } = {}): Promise<Response> {
  rc.log.api = 'threeDSPages';
  try {
    const contentType = mediaTypeOf(rc.request.headers.get('Content-Type') ?? '');
    let form = new URLSearchParams();
    if (options.anyBody) {
      await drainBody(rc.request);
    } else {
      if (contentType !== 'application/x-www-form-urlencoded') {
        return pageResponse(errorPage(415, 'Unsupported request', 'This page takes a form post.'));
      }
      const text = await readBodyText(rc.request);
      if (text === undefined) return pageResponse(errorPage(400, 'Unsupported request', 'The form is not UTF-8.'));
      form = new URLSearchParams(text);
    }
    const answer = await step(form, threeDsDeps(rc));
    if (answer.kind === 'completed') {
      rc.log.challenge = answer.result;
      if (answer.note) rc.log.note = answer.note;
    }
    return pageResponse(render(rc, answer));
  } catch (e) {
    Object.assign(rc.log, errorLogFields(e));
    const failure = failureOf(e);
    rc.log.errorName = mapFailure(failure).body.errorName;
    return pageResponse(failurePage(failure));
  }
}

function render(rc: RequestContext, answer: PageAnswer): HtmlPage {
  switch (answer.kind) {
    case 'ddc':
      return ddcPage(answer.message);
    case 'form':
      return challengePage({ ...answer, submitUrl: `${publicBaseUrl(rc)}${PAGES.challengeSubmit}` });
    case 'completed':
      return completionPage(answer.returnUrl, answer.transactionId, answer.md, answer.result);
    case 'liveDdc':
      return liveDdcPage(answer.ddc);
    case 'methodNotified':
      return methodNotifiedPage();
    case 'relay':
      return relayPage(answer.acsUrl, answer.creq, answer.sessionData);
    case 'error':
      return errorPage(answer.status, answer.title, answer.detail);
  }
}
