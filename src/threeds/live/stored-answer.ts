import type { ApiVersion } from '../../media-types';
import { outageAnswer } from '../api-versions';

/**
 * A live authentication's stored answer names no version of the API; each request renders it for
 * its own `version` (src/threeds/api-versions.ts).
 */

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
