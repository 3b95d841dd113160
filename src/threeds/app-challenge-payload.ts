import { toBase64Url, utf8 } from '../bytes';

/**
 * The `challenge.payload` of an app's challenge (CONTRACT.md §12, docs/threeds.md "The app
 * channel"), in `test` and in `live` alike: base64url (no padding) of the JSON an EMV 3DS SDK's
 * `doChallenge` takes, `{threeDSServerTransID, acsTransID, acsRefNumber, acsSignedContent}`, plus
 * `threeDSRequestorAppURL` when the request sent `deviceData.sdk.appUrl` (EMV 2.2.0 and later).
 */
export function sdkChallengePayload(o: {
  threeDSServerTransID: string;
  acsTransID: string;
  acsRefNumber: string;
  acsSignedContent: string;
  /** The authentication's EMV version. */
  version: string;
  appUrl?: string;
}): string {
  const payload = {
    threeDSServerTransID: o.threeDSServerTransID,
    acsTransID: o.acsTransID,
    acsRefNumber: o.acsRefNumber,
    acsSignedContent: o.acsSignedContent,
    // threeDSRequestorAppURL came with EMV 2.2.0.
    ...(o.appUrl !== undefined && o.version >= '2.2.0' ? { threeDSRequestorAppURL: o.appUrl } : {}),
  };
  return toBase64Url(utf8(JSON.stringify(payload)));
}

/**
 * The `challenged` answer of an app's challenge: the payload for the app's SDK under the
 * challenge's reference (no `url`, no `jwt`: no page), and where to verify it.
 */
export function appChallengedAnswer(o: {
  transactionReference: string;
  version: string;
  reference: string;
  payload: string;
  apiBase: string;
}): Record<string, unknown> {
  return {
    outcome: 'challenged',
    transactionReference: o.transactionReference,
    authentication: { version: o.version },
    challenge: { reference: o.reference, payload: o.payload },
    _links: { '3ds:verify': { href: `${o.apiBase}/verification` } },
  };
}
