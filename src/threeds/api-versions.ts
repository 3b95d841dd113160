import type { ApiVersion } from '../media-types';
import type { ResultKind } from './outcomes';

/**
 * What the version of the 3DS API a request negotiated (docs/pipeline.md step 3) changes in its
 * answers (docs/threeds.md "Versions"). A transaction stores one answer that names no version;
 * each request renders it for its own version, so identical requests of one version get
 * identical bytes, whichever version came first.
 */

/**
 * Versions 2 and 3: a different authenticate body under a transactionReference already
 * authenticated is the error `transactionReferenceIsADuplicate`; version 1 answers outcome
 * `unavailable`.
 */
export function duplicateIsAnError(version: ApiVersion): boolean {
  return version >= 2;
}

/**
 * Version 3: `authenticationOutage` where the service knows the card schemes' 3-D Secure is down
 * (in `live`, the Directory Server could not be reached; in `test`, the scenario
 * `3ds2-authentication-outage`); versions 1 and 2 get the `unavailable` answer there.
 */
export function answersOutage(version: ApiVersion): boolean {
  return version >= 3;
}

/**
 * The answer for an outage, given the `unavailable` answer stored for it: itself for versions 1
 * and 2; for version 3, Worldpay's `authenticationOutage` (outcome, transactionReference and the
 * `3ds:authenticate` link only).
 */
export function outageAnswer(unavailable: Record<string, unknown>, version: ApiVersion): Record<string, unknown> {
  if (!answersOutage(version)) return unavailable;
  const links = unavailable._links as Record<string, unknown> | undefined;
  return {
    outcome: 'authenticationOutage',
    transactionReference: unavailable.transactionReference,
    ...(links?.['3ds:authenticate'] ? { _links: { '3ds:authenticate': links['3ds:authenticate'] } } : {}),
  };
}

/**
 * The result `verification` answers in a version. Worldpay's v3 document allows verification
 * only `authenticated`, `authenticationFailed`, `unavailable` and `signatureFailed`: a challenge
 * whose result is `bypassed` (the test scenario `3ds2-bypassed-after-challenge`) answers version 3
 * `unavailable`, as 3-D Secure gave no authentication to pass on (no CAVV, the "none" ECI) and the
 * merchant may still authorize without it; versions 1 and 2 keep `bypassed`. authenticate keeps
 * `bypassed` in every version: v3's authenticate answer has it.
 */
export function verificationKind(kind: ResultKind, version: ApiVersion): ResultKind {
  return version >= 3 && kind === 'bypassed' ? 'unavailable' : kind;
}
