import { utf8 } from '../bytes';
import { publicJwkOf, type P256PublicJwk } from './secure-channel';

/**
 * The ACS's ephemeral key for one app challenge, re-derived wherever it is needed and never
 * stored (CONTRACT.md §12): the challenge's Durable Object may be evicted between two CReqs, or
 * answer on another machine, and keeps only `acsTransID` and the SDK's public key. The P-256
 * private scalar comes from a Worker secret and the `acsTransID` through HKDF-SHA-256, reduced to
 * [1, n−1] as FIPS 186-5 Appendix A.2.1 reduces random bits (64 bits more than the order, so the
 * bias is below 2⁻⁶⁴); the public point is computed by the runtime's own P-256 (BoringSSL in
 * workerd), which fills in the public key of a PKCS #8 private key that has none (RFC 5915 makes
 * it optional). No curve arithmetic in JavaScript, no dependency.
 *
 * What follows from the choice: anyone with the secret and an `acsTransID` (which is no secret: it
 * is each CReq's `kid`) has that challenge's key, so the secret must be one of its own, per
 * environment, and rotating it ends the challenges under way; and there is no forward secrecy
 * across challenges beyond the secret's lifetime (a stored private key would be no better).
 */

/** The P-256 group order n. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** Binds the derived bits to their use, so that the secret could serve another HKDF use safely. */
const KEY_LABEL = 'card-edge EMV ACS ephemeral key v1';

/** PKCS #8 PrivateKeyInfo of an EC P-256 ECPrivateKey without its optional public key, up to the 32-byte scalar. */
const P256_PKCS8_PREFIX = new Uint8Array([
  0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
  0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x27, 0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20,
]);

/**
 * The secret every ephemeral key is derived from, as an HKDF key (at least 32 bytes, from a
 * Worker secret; not extractable).
 */
export async function importAcsEphemeralKeySecret(secret: Uint8Array): Promise<CryptoKey> {
  if (secret.length < 32) throw new RangeError('the ACS ephemeral key secret needs at least 32 bytes');
  return crypto.subtle.importKey('raw', new Uint8Array(secret), 'HKDF', false, ['deriveBits']);
}

/**
 * The ACS's ephemeral ECDH key pair for `acsTransID`: the same pair every time, on every instance.
 * The private key is not extractable and lives in memory only.
 *
 * @example
 * const secret = await importAcsEphemeralKeySecret(bytesOfTheWorkerSecret);
 * const { privateKey, publicKey } = await acsEphemeralKeyPair(secret, acsTransID);
 */
export async function acsEphemeralKeyPair(
  secret: CryptoKey,
  acsTransID: string,
): Promise<{ privateKey: CryptoKey; publicKey: P256PublicJwk }> {
  const info = utf8(`${KEY_LABEL}\u0000${acsTransID}`);
  const bits = await crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info },
    secret,
    (32 + 8) * 8,
  );
  return p256KeyPairFromScalar(scalarBytes((bigIntOf(new Uint8Array(bits)) % (P256_ORDER - 1n)) + 1n));
}

/**
 * The ECDH P-256 key pair whose private scalar is `d` (32 bytes, big-endian, in [1, n−1]). Throws
 * when the runtime refuses the scalar.
 */
export async function p256KeyPairFromScalar(
  d: Uint8Array,
): Promise<{ privateKey: CryptoKey; publicKey: P256PublicJwk }> {
  if (d.length !== 32) throw new RangeError('a P-256 scalar has 32 bytes');
  const pkcs8 = new Uint8Array(P256_PKCS8_PREFIX.length + 32);
  pkcs8.set(P256_PKCS8_PREFIX);
  pkcs8.set(d, P256_PKCS8_PREFIX.length);
  const algorithm = { name: 'ECDH', namedCurve: 'P-256' };
  // Imported once extractable, only to read the public point the runtime computed …
  const full = (await crypto.subtle.exportKey(
    'jwk',
    await crypto.subtle.importKey('pkcs8', pkcs8, algorithm, true, ['deriveBits']),
  )) as JsonWebKey;
  // … then again from the JWK, not extractable, as the key the caller keeps.
  const privateKey = await crypto.subtle.importKey('jwk', full, algorithm, false, ['deriveBits']);
  const publicKey = await crypto.subtle.importKey(
    'jwk',
    { kty: 'EC', crv: 'P-256', x: full.x, y: full.y },
    algorithm,
    true,
    [],
  );
  return { privateKey, publicKey: await publicJwkOf(publicKey) };
}

function bigIntOf(bytes: Uint8Array): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n;
}

function scalarBytes(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}
