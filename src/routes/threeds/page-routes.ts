import { failureOf } from '../../failures';
import { mediaTypeOf } from '../../http/api-headers';
import { readBodyText } from '../../http/body';
import type { RequestContext } from '../../http/endpoint';
import { mapFailure } from '../../http/error-document';
import { errorLogFields } from '../../http/log';
import { PAGES } from '../../threeds/api-paths';
import {
  challengePage,
  completionPage,
  ddcPage,
  errorPage,
  pageResponse,
  type HtmlPage,
} from '../../threeds/page-html';
import { showChallenge, submitChallenge } from '../../threeds/steps/challenge-page';
import { collectDeviceData } from '../../threeds/steps/device-data-collection';
import type { PageAnswer } from '../../threeds/steps/page-answer';
import type { ThreeDsDeps } from '../../threeds/steps/step-deps';
import { publicBaseUrl, threeDsDeps } from '../deps-from-request';
import { failurePage } from './failure-page';

/**
 * The test ACS pages a cardholder's browser posts to (docs/threeds.md "Browser pages"). They
 * answer HTML, errors included, and are not behind Basic auth: the signed JWTs are their
 * credentials. A failure is classified as on the JSON APIs (`failureOf`, the same status and
 * Retry-After), and shown as a page.
 */

type Step = (form: URLSearchParams, deps: ThreeDsDeps) => Promise<PageAnswer>;

/** `POST /3ds/ddc` with form fields `Bin` and `JWT`. */
export const ddcRoute = (rc: RequestContext): Promise<Response> =>
  page(rc, (form, deps) => collectDeviceData(deps, form.get('JWT') ?? ''));

/** `POST /3ds/challenge` with form fields `JWT` and optional `MD` (≤ 1024). */
export const challengeRoute = (rc: RequestContext): Promise<Response> =>
  page(rc, (form, deps) => showChallenge(deps, form.get('JWT') ?? '', form.get('MD') ?? ''));

/** `POST /3ds/challenge/submit` with the signed `state`, `code` and `action` (submit or cancel). */
export const challengeSubmitRoute = (rc: RequestContext): Promise<Response> =>
  page(rc, (form, deps) =>
    submitChallenge(deps, form.get('state') ?? '', form.get('action') ?? 'submit', form.get('code') ?? ''),
  );

/** Shared page plumbing: form parsing, rendering, and every failure as an HTML page. */
async function page(rc: RequestContext, step: Step): Promise<Response> {
  rc.log.api = 'threeDSPages';
  try {
    const contentType = mediaTypeOf(rc.request.headers.get('Content-Type') ?? '');
    if (contentType !== 'application/x-www-form-urlencoded') {
      return pageResponse(errorPage(415, 'Unsupported request', 'This page takes a form post.'));
    }
    const text = await readBodyText(rc.request);
    if (text === undefined) return pageResponse(errorPage(400, 'Unsupported request', 'The form is not UTF-8.'));
    const answer = await step(new URLSearchParams(text), threeDsDeps(rc));
    if (answer.kind === 'completed') rc.log.challenge = answer.result;
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
    case 'error':
      return errorPage(answer.status, answer.title, answer.detail);
  }
}
