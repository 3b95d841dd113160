import { CompactEncrypt, compactDecrypt, decodeProtectedHeader, errors } from 'jose';
import { utf8 } from '../bytes';

/**
 * The EMV 3DS SDK–ACS secure channel (CONTRACT.md §12, research/threeds-app-decoupled.md): the
 * key both sides derive from their ephemeral P-256 keys, the CReq/CRes JWEs under it, and the
 * message counters that guard against replay. Protocol only: which transaction a message belongs
 * to, and what a wrong one costs, is decided above. WebCrypto and jose only (no nodejs_compat), so
 * the Worker's ACS and the test SDK (test/sdk/, also on Node) share it.
 */

/** An EC P-256 public key as a JWK: EMV's `sdkEphemPubKey` / `acsEphemPubKey`. */
export interface P256PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

/** Whether a value is a P-256 public JWK (shape only: whether the point is on the curve shows on import). */
export function isP256PublicJwk(value: unknown): value is P256PublicJwk {
  if (typeof value !== 'object' || value === null) return false;
  const jwk = value as Record<string, unknown>;
  const coordinate = (c: unknown) => typeof c === 'string' && /^[A-Za-z0-9_-]{43}$/.test(c);
  return jwk.kty === 'EC' && jwk.crv === 'P-256' && coordinate(jwk.x) && coordinate(jwk.y);
}

/** Whether a value is a P-256 public JWK whose point is on the curve (the runtime's import says so). */
export async function isP256Point(value: unknown): Promise<boolean> {
  if (!isP256PublicJwk(value)) return false;
  try {
    await crypto.subtle.importKey('jwk', { ...value }, { name: 'ECDH', namedCurve: 'P-256' }, true, []);
    return true;
  } catch {
    return false;
  }
}

/** The public key's JWK with only the members EMV sends (`{kty, crv, x, y}`). */
export async function publicJwkOf(publicKey: CryptoKey): Promise<P256PublicJwk> {
  const jwk = (await crypto.subtle.exportKey('jwk', publicKey)) as JsonWebKey;
  return { kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y! };
}

/**
 * A fresh ephemeral ECDH P-256 key pair. The private key is not extractable: it lives in this
 * isolate's memory and nowhere else.
 */
export async function generateEphemeralKeyPair(): Promise<{ privateKey: CryptoKey; publicKey: P256PublicJwk }> {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, [
    'deriveBits',
  ])) as CryptoKeyPair;
  return { privateKey: pair.privateKey, publicKey: await publicJwkOf(pair.publicKey) };
}

/** What {@link concatKdf} binds the key to (NIST SP 800-56A §5.8.1, RFC 7518 §4.6.2). */
export interface ConcatKdfInfo {
  algorithmId: Uint8Array | string;
  partyUInfo: Uint8Array | string;
  partyVInfo: Uint8Array | string;
}

/**
 * NIST SP 800-56A single-step KDF with SHA-256 ("Concat KDF", as JOSE's ECDH-ES uses it):
 * `SHA-256(counter ‖ Z ‖ OtherInfo)` for counter 1, 2, … until `keyDataLenBits` are out, where
 * OtherInfo is AlgorithmID, PartyUInfo and PartyVInfo each behind its 4-byte big-endian length,
 * then SuppPubInfo, the key length in bits as 4 bytes. Strings are taken as UTF-8.
 *
 * @example
 * // RFC 7518 Appendix C: 'VqqN6vgjbSBcIijNcacQGg'
 * await concatKdf(z, 128, { algorithmId: 'A128GCM', partyUInfo: 'Alice', partyVInfo: 'Bob' });
 */
export async function concatKdf(
  z: Uint8Array,
  keyDataLenBits: number,
  info: ConcatKdfInfo,
): Promise<Uint8Array<ArrayBuffer>> {
  if (!Number.isInteger(keyDataLenBits) || keyDataLenBits <= 0 || keyDataLenBits % 8 !== 0) {
    throw new RangeError(`keyDataLenBits must be a positive multiple of 8, not ${keyDataLenBits}`);
  }
  const otherInfo = concat(
    lengthPrefixed(info.algorithmId),
    lengthPrefixed(info.partyUInfo),
    lengthPrefixed(info.partyVInfo),
    uint32(keyDataLenBits),
  );
  const out = new Uint8Array(keyDataLenBits / 8);
  for (let round = 1, offset = 0; offset < out.length; round++, offset += 32) {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', concat(uint32(round), z, otherInfo)));
    out.set(digest.subarray(0, Math.min(32, out.length - offset)), offset);
  }
  return out;
}

/**
 * ECDH on P-256: the 32-byte shared secret Z between one side's private key and the other's
 * public JWK. Throws when the JWK is not a point of P-256 (the caller validates what it received).
 */
export async function ecdhSharedSecret(
  privateKey: CryptoKey,
  publicJwk: P256PublicJwk,
): Promise<Uint8Array<ArrayBuffer>> {
  const { kty, crv, x, y } = publicJwk;
  const publicKey = await crypto.subtle.importKey(
    'jwk',
    { kty, crv, x, y },
    { name: 'ECDH', namedCurve: 'P-256' },
    true,
    [],
  );
  // The runtime reads `public`; @cloudflare/workers-types spells the member `$public` (and the DOM
  // types, which the test SDK is also checked with on Node, `public`).
  const algorithm = { name: 'ECDH', public: publicKey } as unknown as Parameters<typeof crypto.subtle.deriveBits>[0];
  return new Uint8Array(await crypto.subtle.deriveBits(algorithm, privateKey, 256));
}

/**
 * The SDK–ACS secure channel key (EMV 3DS SDK Technical Guide §3.3.4, as open SDKs implement it):
 * ECDH between one side's ephemeral private key and the other's ephemeral public key, then Concat
 * KDF with SHA-256, 256 bits, AlgorithmID and PartyUInfo empty, PartyVInfo the
 * `sdkReferenceNumber`. The SDK calls it with its private key and `acsEphemPubKey`, the ACS with
 * its private key and `sdkEphemPubKey`: both get the same 32 bytes.
 */
export async function deriveSecureChannelKey(
  privateKey: CryptoKey,
  otherPublicJwk: P256PublicJwk,
  sdkReferenceNumber: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const z = await ecdhSharedSecret(privateKey, otherPublicJwk);
  return concatKdf(z, 256, { algorithmId: '', partyUInfo: '', partyVInfo: sdkReferenceNumber });
}

/** The CReq/CRes JWE's algorithms: the derived key used directly, CBC-HMAC with its full 256 bits. */
export const CHALLENGE_JWE_ALG = 'dir';
export const CHALLENGE_JWE_ENC = 'A128CBC-HS256';

/**
 * A CReq (SDK → ACS) or CRes (ACS → SDK) as a compact JWE under the secure channel key, `kid` the
 * ACS transaction id (how the ACS finds the transaction before it can decrypt).
 */
export async function encryptChallengeMessage(
  message: Record<string, unknown>,
  key: Uint8Array,
  acsTransID: string,
): Promise<string> {
  return new CompactEncrypt(utf8(JSON.stringify(message)))
    .setProtectedHeader({ alg: CHALLENGE_JWE_ALG, enc: CHALLENGE_JWE_ENC, kid: acsTransID })
    .encrypt(key);
}

/** Why a challenge message did not open: each is EMV's Erro 302 (data decryption failure) or 203 above. */
export type ChallengeMessageProblem =
  /** Not a compact JWE (five base64url parts, a JSON protected header). */
  | 'notCompactJwe'
  /** A JWE, but not `alg: dir` with `enc: A128CBC-HS256`. */
  | 'algorithmNotAllowed'
  /** The tag does not verify under this key: another key, or altered bytes. */
  | 'decryptionFailed'
  /** It decrypted, to something other than a JSON object. */
  | 'notJsonObject';

export type ChallengeMessageOpening =
  | { ok: true; message: Record<string, unknown>; kid: string | undefined }
  | { ok: false; problem: ChallengeMessageProblem };

/**
 * Opens a CReq or CRes. Never throws for what the other side sent: every failure is a
 * {@link ChallengeMessageProblem}, for the caller to answer with an Erro.
 */
export async function decryptChallengeMessage(jwe: string, key: Uint8Array): Promise<ChallengeMessageOpening> {
  let plaintext: Uint8Array;
  let kid: string | undefined;
  try {
    const opened = await compactDecrypt(jwe, key, {
      keyManagementAlgorithms: [CHALLENGE_JWE_ALG],
      contentEncryptionAlgorithms: [CHALLENGE_JWE_ENC],
    });
    plaintext = opened.plaintext;
    kid = opened.protectedHeader.kid;
  } catch (e) {
    if (e instanceof errors.JOSEAlgNotAllowed || e instanceof errors.JOSENotSupported) {
      return { ok: false, problem: 'algorithmNotAllowed' };
    }
    if (e instanceof errors.JWEDecryptionFailed) return { ok: false, problem: 'decryptionFailed' };
    // JWEInvalid and anything else the parser threw: malformed input.
    return { ok: false, problem: 'notCompactJwe' };
  }
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(plaintext));
  } catch {
    return { ok: false, problem: 'notJsonObject' };
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { ok: false, problem: 'notJsonObject' };
  }
  return { ok: true, message: message as Record<string, unknown>, kid };
}

/**
 * The `kid` of a compact JWE's protected header, read without a key (the ACS transaction id that
 * says whose key opens it), or null when the text is not a compact JWE with a string `kid`.
 */
export function challengeMessageKid(jwe: string): string | null {
  if (jwe.split('.').length !== 5) return null;
  try {
    const { kid } = decodeProtectedHeader(jwe);
    return typeof kid === 'string' ? kid : null;
  } catch {
    return null;
  }
}

/** The first `sdkCounterStoA` / `acsCounterAtoS` of a challenge. */
export const FIRST_COUNTER = '000';

/**
 * The counter after this one: `'000'` → `'001'`, `'009'` → `'010'`. Throws past `'999'` or on
 * anything but three digits (a challenge ends long before: three wrong codes end it).
 */
export function nextCounter(counter: string): string {
  if (!/^\d{3}$/.test(counter) || counter === '999')
    throw new RangeError(`no counter follows ${JSON.stringify(counter)}`);
  return String(Number(counter) + 1).padStart(3, '0');
}

/** Whether a received counter is exactly the one expected (three digits, no other spelling of the number). */
export function isExpectedCounter(received: unknown, expected: string): boolean {
  return typeof received === 'string' && /^\d{3}$/.test(received) && received === expected;
}

function lengthPrefixed(data: Uint8Array | string): Uint8Array {
  const bytes = typeof data === 'string' ? utf8(data) : data;
  return concat(uint32(bytes.length), bytes);
}

function uint32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
