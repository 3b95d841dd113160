import { toBase64, toHex, utf8 } from '../bytes';

/**
 * Values derived from a key and a seed (HMAC-SHA256) instead of drawn at random, for answers
 * that must repeat without being stored: `unavailable` to a conflicting body (seeded with that
 * body's keyed hash), verification (seeded with the challenge reference, itself random per
 * session), the DDC page's SessionId (seeded with the DDC JWT's id). The seed always names its
 * purpose, so values of different fields never coincide. Answers the owner objects keep are
 * drawn at random instead, so they never repeat across sessions.
 */

const imported = new WeakMap<Uint8Array, Promise<CryptoKey>>();

/** The key as an HMAC-SHA256 CryptoKey, imported once per isolate (the settings keep one array). */
export function hmacKey(key: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  let hmac = imported.get(key);
  if (!hmac) {
    hmac = crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    imported.set(key, hmac);
  }
  return hmac;
}

/** HMAC-SHA256 of a text under the 3DS key (JWT_SIGNING_KEY). */
export async function hmacSha256(key: Uint8Array<ArrayBuffer>, text: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(key), utf8(text)));
}

/** HMAC-SHA256 as lower-case hex. */
export async function hmacHex(key: Uint8Array<ArrayBuffer>, text: string): Promise<string> {
  return toHex(await hmacSha256(key, text));
}

/** A UUID v4-shaped id: version and variant bits set, the rest from the HMAC. */
export async function derivedUuid(key: Uint8Array<ArrayBuffer>, seed: string): Promise<string> {
  const b = (await hmacSha256(key, seed)).slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = toHex(b);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Base64 of the first 20 bytes of the HMAC: a 28-character CAVV/AAV. */
export async function derivedAuthenticationValue(key: Uint8Array<ArrayBuffer>, seed: string): Promise<string> {
  return toBase64((await hmacSha256(key, seed)).slice(0, 20));
}

/** A stable, opaque organisation unit id per merchant entity, for the JWTs' OrgUnitId. */
export async function orgUnitId(
  key: Uint8Array<ArrayBuffer>,
  scope: { username: string; entity: string },
): Promise<string> {
  return (await hmacHex(key, `org-unit:${scope.username}:${scope.entity}`)).slice(0, 24);
}
