import { sdkChallengePayload } from './app-challenge-payload';
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

/** The test issuer's `challenge.payload` for an app's SDK (app-challenge-payload.ts), its content signed here. */
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
  return sdkChallengePayload({
    ...o.ids,
    acsRefNumber: TEST_ACS_REFERENCE_NUMBER,
    acsSignedContent,
    version: o.version,
    ...(o.appUrl !== undefined ? { appUrl: o.appUrl } : {}),
  });
}
