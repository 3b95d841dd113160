import { fromBase64, toBase64 } from '../bytes';

/**
 * The stored form of merchant passwords: `pbkdf2-sha256:<iterations>:<salt b64>:<hash b64>`.
 * Platform-neutral WebCrypto, so the Worker and `npm run credentials -- pbkdf2` (Node) share it.
 */

export const HASH_SCHEME = 'pbkdf2-sha256';
/**
 * Workers caps PBKDF2 at 100,000 iterations, and every stored hash must use exactly that many:
 * an unknown username is checked against a dummy hash of this cost, so a cheaper stored hash
 * would make known usernames answer measurably faster.
 */
export const MAX_ITERATIONS = 100_000;

export interface StoredHash {
  iterations: number;
  salt: Uint8Array<ArrayBuffer>;
  hash: Uint8Array<ArrayBuffer>;
}

/**
 * Hashes a password into the stored form, with a fresh 16-byte salt.
 *
 * @example
 * ```ts
 * await hashPassword('test-password'); // 'pbkdf2-sha256:100000:…:…'
 * ```
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = new Uint8Array(await pbkdf2(password, salt, MAX_ITERATIONS, 32));
  return encodeStored({ iterations: MAX_ITERATIONS, salt, hash });
}

export async function pbkdf2(
  password: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  bytes: number,
): Promise<ArrayBuffer> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  return crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, bytes * 8);
}

/** Parses the stored form; undefined when it is not one. */
export function decodeStored(value: string): StoredHash | undefined {
  const [scheme, iterations, salt, hash, ...rest] = value.split(':');
  const n = Number(iterations);
  if (scheme !== HASH_SCHEME || rest.length > 0 || n !== MAX_ITERATIONS || !salt || !hash) {
    return undefined;
  }
  try {
    return { iterations: n, salt: fromBase64(salt), hash: fromBase64(hash) };
  } catch {
    return undefined;
  }
}

export function encodeStored(s: StoredHash): string {
  return [HASH_SCHEME, s.iterations, toBase64(s.salt), toBase64(s.hash)].join(':');
}
