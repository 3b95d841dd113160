import type { Failure } from '../../failures';
import { mapFailure } from '../../http/error-document';
import { errorPage, type HtmlPage } from '../../threeds/page-html';

/**
 * What the cardholder sees when the page cannot be served: the status and Retry-After the JSON
 * APIs would answer for the same failure, and words for a person (the log says why).
 */
export function failurePage(failure: Failure): HtmlPage {
  const { status, headers, body } = mapFailure(failure);
  const retryAfter = headers['Retry-After'] === undefined ? undefined : Number(headers['Retry-After']);
  if (status === 503) {
    return failure.kind === 'misconfigured'
      ? errorPage(503, 'Please try again later', 'The service is not configured.', retryAfter)
      : errorPage(503, 'Please try again', 'The service is busy. Try again in a moment.', retryAfter);
  }
  if (status >= 500) return errorPage(status, 'Something went wrong', 'Go back to the shop and try again.');
  return errorPage(status, 'Unsupported request', body.message);
}
