import { SettingsError } from '../../config/settings';
import { readBodyText } from '../../http/body';
import { ApiError } from '../../http/errors';
import { mediaTypeOf } from '../../http/headers';
import { describeError } from '../../http/log';
import { logStorageError, type RequestContext } from '../../http/pipeline';
import { StorageError } from '../../storage/kv';
import { challengePage, completionPage, ddcPage, errorPage, pageResponse, type Page } from '../../threeds/pages';
import type { ThreeDsDeps } from '../../threeds/steps/deps';
import { collectDeviceData, showChallenge, submitChallenge, type PageAnswer } from '../../threeds/steps/pages';
import { publicBaseUrl, threeDsDeps } from '../context';

/**
 * The test ACS pages a cardholder's browser posts to (CONTRACT.md §6.4). They answer HTML,
 * errors included (503 with Retry-After when storage fails), and are not behind Basic auth: the
 * signed JWTs are their credentials.
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
    return pageResponse(failurePage(rc, e));
  }
}

function render(rc: RequestContext, answer: PageAnswer): Page {
  switch (answer.kind) {
    case 'ddc':
      return ddcPage(answer.message);
    case 'form':
      return challengePage({ ...answer, submitUrl: `${publicBaseUrl(rc)}/3ds/challenge/submit` });
    case 'completed':
      return completionPage(answer.returnUrl, answer.transactionId, answer.md, answer.result);
    case 'error':
      return errorPage(answer.status, answer.title, answer.detail);
  }
}

/** What the cardholder sees when the page cannot be served; the log says why. */
function failurePage(rc: RequestContext, e: unknown): Page {
  if (e instanceof StorageError) {
    logStorageError(rc, e);
    return errorPage(503, 'Please try again', 'The service is busy. Try again in a moment.', 1);
  }
  if (e instanceof SettingsError) {
    rc.log.misconfigured = e.message;
    return errorPage(503, 'Please try again later', 'The service is not configured.', 60);
  }
  if (e instanceof ApiError && e.failure.kind === 'bodyTooLarge')
    return errorPage(413, 'Unsupported request', 'The form is too large.');
  if (e instanceof ApiError && e.failure.kind === 'bodyIncomplete')
    return errorPage(400, 'Unsupported request', 'The form arrived incomplete.');
  rc.log.exception = describeError(e);
  return errorPage(500, 'Something went wrong', 'Go back to the shop and try again.');
}
