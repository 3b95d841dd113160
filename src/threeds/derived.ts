import { toBase64, toHex, utf8 } from '../bytes';

/**
 * Values derived from a key and a seed (HMAC-SHA256) instead of drawn at random: identical
 * requests compute identical answers, so a retry, or twenty identical requests at once, can
 * never see two different CAVVs, transaction ids or challenge references. The seed always holds
 * the keyed hash of the request (or the challenge reference) and a purpose label, so values of
 * different transactions and of different fields never coincide.
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

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` alphanumerics (at most 32) without modulo bias: bytes of 248 and over are skipped. */
export async function derivedAlphanumerics(
  key: Uint8Array<ArrayBuffer>,
  seed: string,
  length: number,
): Promise<string> {
  let out = '';
  for (let round = 0; out.length < length; round++) {
    for (const byte of await hmacSha256(key, `${seed}:${round}`)) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}
