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
