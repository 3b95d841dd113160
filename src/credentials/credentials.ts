import { fromBase64, toBase64, utf8 } from '../bytes';
import { decodeStored, type StoredHash } from './password-hash';

/**
 * The stored forms of merchant credentials (MERCHANT_PASSWORD_HASHES), checked in constant time.
 *
 * - `hmac-sha256:<base64>`: HMAC-SHA256, keyed with the MERCHANT_CREDENTIAL_KEY secret, of
 *   `<username>:<password>`. For passwords the operator issues (`npm run credentials -- new`):
 *   they carry at least 128 random bits, so one fast keyed hash is as safe as a slow one, the
 *   way payment and code-hosting platforms store API keys, and costs microseconds.
 * - `pbkdf2-sha256:100000:<salt>:<hash>`: for passwords a person chose, the slow path (about
 *   10 ms of CPU per check, on purpose).
 *
 * A merchant may have two entries at once, so that it can switch to a new secret without downtime.
 */

export type CredentialEntry = { kind: 'hmac'; mac: Uint8Array<ArrayBuffer> } | { kind: 'pbkdf2'; hash: StoredHash };

export const HMAC_SCHEME = 'hmac-sha256';
/** Random bytes of an issued password: 192 bits, well over the 128 the keyed hash relies on. */
export const ISSUED_PASSWORD_BYTES = 24;

/** Parses one stored entry; undefined when it is neither form. */
export function decodeEntry(value: string): CredentialEntry | undefined {
  if (value.startsWith(`${HMAC_SCHEME}:`)) {
    try {
      const mac = fromBase64(value.slice(HMAC_SCHEME.length + 1));
      return mac.byteLength === 32 ? { kind: 'hmac', mac } : undefined;
    } catch {
      return undefined;
    }
  }
  const hash = decodeStored(value);
  return hash ? { kind: 'pbkdf2', hash } : undefined;
}

/** The credential key as an HMAC-SHA256 CryptoKey. */
export function importCredentialKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

export async function macOf(key: CryptoKey, username: string, password: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, utf8(`${username}:${password}`)));
}

/**
 * The stored form of an issued password.
 *
 * @example
 * ```ts
 * await issuedEntry(key, 'test-merchant', 'test-password'); // 'hmac-sha256:…'
 * ```
 */
export async function issuedEntry(key: CryptoKey, username: string, password: string): Promise<string> {
  return `${HMAC_SCHEME}:${toBase64(await macOf(key, username, password))}`;
}

/** A password of {@link ISSUED_PASSWORD_BYTES} random bytes, base64url (32 characters). */
export function newPassword(): string {
  return toBase64(crypto.getRandomValues(new Uint8Array(ISSUED_PASSWORD_BYTES)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}
