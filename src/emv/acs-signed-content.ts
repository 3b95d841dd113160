import { CompactSign } from 'jose';
import { utf8 } from '../bytes';
import type { P256PublicJwk } from './secure-channel';

/**
 * The ARes's `acsSignedContent` (CONTRACT.md §12): a compact JWS, ES256, that the SDK checks
 * against its Directory Server's CA before it trusts `acsURL` and `acsEphemPubKey`. The header's
 * `x5c` is the chain the SDK checks: the ACS certificate, then the Directory Server CA certificate
 * (base64 DER, RFC 7515 §4.1.6).
 */

/** The JWS payload: where the SDK posts its CReqs and the two ephemeral keys of the challenge. */
export interface AcsSignedContentPayload {
  acsURL: string;
  acsEphemPubKey: P256PublicJwk;
  sdkEphemPubKey: P256PublicJwk;
}

/** The ACS's signing key and its chain, as `x5c` carries it: [ACS certificate, DS CA certificate]. */
export interface AcsSigningIdentity {
  /** ECDSA P-256 private key of the ACS certificate, usage `sign`. */
  privateKey: CryptoKey;
  x5c: readonly [acsCertificate: string, dsCaCertificate: string];
}

/** The only algorithm this ACS signs with (EMV also allows PS256; the test PKI is EC). */
export const ACS_SIGNED_CONTENT_ALG = 'ES256';

/**
 * Imports the ACS certificate's private key from its JWK (`data/test-pki.json`'s `acs.privateKey`
 * in `test`) for {@link signAcsSignedContent}; not extractable.
 */
export async function importAcsSigningKey(privateJwk: JsonWebKey): Promise<CryptoKey> {
  return crypto.subtle.importKey('jwk', privateJwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
}

/**
 * Signs the challenge's `acsSignedContent`. The keys are sent as `{kty, crv, x, y}` only.
 *
 * @example
 * const acsSignedContent = await signAcsSignedContent(
 *   { acsURL: `${origin}/3ds/test/acs/creq`, acsEphemPubKey, sdkEphemPubKey },
 *   { privateKey: await importAcsSigningKey(pki.acs.privateKey), x5c: pki.x5c },
 * );
 */
export async function signAcsSignedContent(
  payload: AcsSignedContentPayload,
  identity: AcsSigningIdentity,
): Promise<string> {
  const only = ({ x, y }: P256PublicJwk): P256PublicJwk => ({ kty: 'EC', crv: 'P-256', x, y });
  const body = {
    acsURL: payload.acsURL,
    acsEphemPubKey: only(payload.acsEphemPubKey),
    sdkEphemPubKey: only(payload.sdkEphemPubKey),
  };
  return new CompactSign(utf8(JSON.stringify(body)))
    .setProtectedHeader({ alg: ACS_SIGNED_CONTENT_ALG, x5c: [...identity.x5c] })
    .sign(identity.privateKey);
}
