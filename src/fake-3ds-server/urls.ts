import type { EmvVersion } from '../emv/emv-rules';

/**
 * The fake's own addresses, which it hands out in its messages (method URL, acsURL). The origin
 * is FAKE_PUBLIC_URL when set (a browser must reach it), else the origin of the request being
 * answered.
 */

export const ACS_METHOD_PATH = '/acs/method';
export const ACS_CHALLENGE_PATH = '/acs/challenge';
export const ACS_CHALLENGE_SUBMIT_PATH = '/acs/challenge/submit';
export const ACS_APP_CREQ_PATH = '/acs/app/creq';

/** The origin (or base URL) the fake's messages name, without a trailing slash. */
export function publicOrigin(requestUrl: string, configured: string | undefined): string {
  const base = configured?.trim();
  return base ? base.replace(/\/+$/, '') : new URL(requestUrl).origin;
}

/** The 3DS Method URL; one per version where the card range lists one per version. */
export function acsMethodUrl(origin: string, version?: EmvVersion): string {
  return version === undefined ? `${origin}${ACS_METHOD_PATH}` : `${origin}${ACS_METHOD_PATH}/${version}`;
}

/** The acsURL of a challenge. */
export function acsChallengeUrl(origin: string): string {
  return `${origin}${ACS_CHALLENGE_PATH}`;
}

/** Where an app's SDK posts the CReqs of a transaction (the acsURL of its `acsSignedContent`). */
export function acsAppCReqUrl(origin: string, threeDSServerTransID: string): string {
  return `${origin}${ACS_APP_CREQ_PATH}/${threeDSServerTransID}`;
}
