import { toBase64Url, utf8 } from '../bytes';
import { acsEphemeralKeyPair, importAcsEphemeralKeySecret } from '../emv/acs-ephemeral-key';
import { signAcsSignedContent, type AcsSigningIdentity } from '../emv/acs-signed-content';
import type { P256PublicJwk } from '../emv/secure-channel';
import { FailureError } from '../failures';

/**
 * The test issuer's app channel (CONTRACT.md §12, docs/threeds.md "The app channel"): the keys of
 * its test Directory Server and ACS, and the challenge an app's SDK is given. The keys are the
 * test PKI's (data/test-pki.json), which only the `test` Worker's composition loads
 * (src/app/test-app-issuer.ts): the live bundle has none of it.
 */

/** The test Directory Server and ACS keys, as the `test` Worker's composition provides them. */
export interface AppIssuer {
  /** The ACS certificate's signing key and `x5c`, for `acsSignedContent`. */
  identity(): Promise<AcsSigningIdentity>;
  /** Whether the Directory Server's key opens the SDK's `encData` (a JWE to that key). */
  opensEncData(encData: string): Promise<boolean>;
  /** What `GET /3ds/test/directory-server` publishes: the encryption key (public JWK) and the CA certificate (PEM). */
  published: { encryptionKey: JsonWebKey; caCertificate: string };
}

/** The ACS reference number the test issuer's ACS gives (EMV `acsRefNumber`). */
export const TEST_ACS_REFERENCE_NUMBER = 'card-edge-test-acs';

/** The ids of one app challenge, as the ARes would carry them. */
export interface AppChallengeIds {
  acsTransID: string;
  threeDSServerTransID: string;
}

/** The ACS's ephemeral key pair of a challenge, from the secret and its `acsTransID` (never stored). */
export async function acsKeyPair(
  secret: Uint8Array<ArrayBuffer> | undefined,
  acsTransID: string,
): Promise<{ privateKey: CryptoKey; publicKey: P256PublicJwk }> {
  if (!secret) {
    const what = 'the app channel needs ACS_EPHEMERAL_KEY_SECRET';
    throw new FailureError({ kind: 'misconfigured', what }, what);
  }
  return acsEphemeralKeyPair(await importAcsEphemeralKeySecret(secret), acsTransID);
}

/**
 * The `challenge.payload` an app's SDK takes (`doChallenge`): base64url (no padding) of
 * `{threeDSServerTransID, acsTransID, acsRefNumber, acsSignedContent}`, plus
 * `threeDSRequestorAppURL` when the request sent one (2.2.0 and later).
 */
export async function appChallengePayload(
  issuer: AppIssuer,
  secret: Uint8Array<ArrayBuffer> | undefined,
  o: { ids: AppChallengeIds; acsURL: string; sdkEphemPubKey: P256PublicJwk; version: string; appUrl?: string },
): Promise<string> {
  const { publicKey } = await acsKeyPair(secret, o.ids.acsTransID);
  const acsSignedContent = await signAcsSignedContent(
    { acsURL: o.acsURL, acsEphemPubKey: publicKey, sdkEphemPubKey: o.sdkEphemPubKey },
    await issuer.identity(),
  );
  const payload = {
    threeDSServerTransID: o.ids.threeDSServerTransID,
    acsTransID: o.ids.acsTransID,
    acsRefNumber: TEST_ACS_REFERENCE_NUMBER,
    acsSignedContent,
    // threeDSRequestorAppURL came with EMV 2.2.0.
    ...(o.appUrl !== undefined && o.version >= '2.2.0' ? { threeDSRequestorAppURL: o.appUrl } : {}),
  };
  return toBase64Url(utf8(JSON.stringify(payload)));
}
