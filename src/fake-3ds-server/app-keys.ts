import pki from '../../data/fake-pki.json';
import { acsEphemeralKeyPair, importAcsEphemeralKeySecret } from '../emv/acs-ephemeral-key';
import { importAcsSigningKey, signAcsSignedContent } from '../emv/acs-signed-content';
import { importDirectoryServerKey, openDeviceInformation } from '../emv/device-information';
import { deriveSecureChannelKey, isP256Point, type P256PublicJwk } from '../emv/secure-channel';

/**
 * The fake's app-channel Directory Server and ACS keys (docs/fake-3ds-server.md "The app
 * channel"): its own PKI (data/fake-pki.json, made by `scripts/make-test-pki.ts --fake`: another
 * CA than the service's test issuer, as another scheme's would be), the Directory Server's key
 * that opens `sdkEncData`, and the ACS's ephemeral keys, derived per challenge from a fixed secret
 * and the `acsTransID` as the service's test issuer derives its own (src/emv/acs-ephemeral-key.ts):
 * nothing private is stored in a transaction. TEST ONLY: every key here is public.
 */

/** What `GET /_fake/directory-server` publishes, as the service's `GET /3ds/test/directory-server` does. */
export const FAKE_DIRECTORY_SERVER = {
  encryptionKey: pki.directoryServer.encryptionKey.publicJwk,
  caCertificate: pki.directoryServer.caCertificate,
};

/** The fake ACS's ephemeral keys come from this (public, fixed: a fake's) and each `acsTransID`. */
const EPHEMERAL_SECRET = new TextEncoder().encode('fake-3ds-server ACS ephemeral keys (TEST ONLY: public on purpose)');

let dsKey: Promise<CryptoKey> | undefined;
let signingKey: Promise<CryptoKey> | undefined;
let ephemeralSecret: Promise<CryptoKey> | undefined;

/**
 * What the Directory Server finds in an app AReq's SDK fields (EMV: it decrypts `sdkEncData`, and
 * checks the UI types against the interface): the fields it cannot use, and the device
 * information's version (`DV`) when it opened.
 */
export async function sdkFieldFaults(areq: Record<string, unknown>): Promise<{ invalid: string[]; dv?: string }> {
  const invalid: string[] = [];
  dsKey ??= importDirectoryServerKey(pki.directoryServer.encryptionKey.privateJwk);
  const opened = await openDeviceInformation(String(areq['sdkEncData']), await dsKey);
  if (!opened.opened) invalid.push('sdkEncData');
  const dv = opened.opened ? opened.dv : undefined;
  if (!(await isP256Point(areq['sdkEphemPubKey']))) invalid.push('sdkEphemPubKey');
  // The HTML UI type (05) is an HTML interface's (02, 03): a native-only SDK cannot render it.
  const render = areq['deviceRenderOptions'] as { sdkInterface?: unknown; sdkUiType?: unknown } | undefined;
  if (render?.sdkInterface === '01' && Array.isArray(render.sdkUiType) && render.sdkUiType.includes('05'))
    invalid.push('deviceRenderOptions.sdkUiType');
  return { invalid, ...(dv !== undefined ? { dv } : {}) };
}

async function ephemeralKeyPair(acsTransID: string) {
  ephemeralSecret ??= importAcsEphemeralKeySecret(EPHEMERAL_SECRET);
  return acsEphemeralKeyPair(await ephemeralSecret, acsTransID);
}

/** The ARes's `acsSignedContent`: the fake ACS's CReq URL and both ephemeral keys, signed under the fake's CA. */
export async function fakeAcsSignedContent(
  acsURL: string,
  acsTransID: string,
  sdkEphemPubKey: P256PublicJwk,
): Promise<string> {
  signingKey ??= importAcsSigningKey(pki.acs.privateJwk);
  const { publicKey } = await ephemeralKeyPair(acsTransID);
  return signAcsSignedContent(
    { acsURL, acsEphemPubKey: publicKey, sdkEphemPubKey },
    { privateKey: await signingKey, x5c: pki.x5c as [string, string] },
  );
}

/** The secure channel's key of one challenge (ECDH-ES with the SDK's key, then Concat KDF). */
export async function fakeChannelKey(
  acsTransID: string,
  sdkEphemPubKey: P256PublicJwk,
  sdkReferenceNumber: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const { privateKey } = await ephemeralKeyPair(acsTransID);
  return deriveSecureChannelKey(privateKey, sdkEphemPubKey, sdkReferenceNumber);
}
