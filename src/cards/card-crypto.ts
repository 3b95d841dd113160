import { fromBase64, toBase64, toBase64Url, utf8 } from '../bytes';
import type { Settings } from '../config/settings';
import { FailureError } from '../failures';
import type { SealedValue } from '../records/sealed-value';

/**
 * Encryption of the card details behind a token (AES-256-GCM, WebCrypto) and the keyed hashes
 * that find a merchant's token for a card without storing the card number.
 *
 * New tokens use the current key of TOKEN_ENCRYPTION_KEYS; each sealed value keeps its key id,
 * so keys can rotate: add a key, make it current, and keep the old ones while tokens sealed with
 * them live.
 */

/**
 * A sealed value names a key that is no longer configured: the Worker is misconfigured (503
 * serviceUnavailable, the key id logged), not broken.
 */
export class TokenKeyMissing extends FailureError {
  constructor(kid: string) {
    const what = `token key ${kid} is no longer configured`;
    super({ kind: 'misconfigured', what }, what);
    this.name = 'TokenKeyMissing';
  }
}

export interface TokenKeys {
  current: string;
  keys: Map<string, CryptoKey>;
  hmac: CryptoKey;
}

const imported = new WeakMap<object, Promise<TokenKeys>>();

/** The token keys of these settings as WebCrypto keys, imported once per isolate and settings. */
export function tokenKeys(settings: Pick<Settings, 'tokenEncryption' | 'tokenHmacKey'>): Promise<TokenKeys> {
  let keys = imported.get(settings);
  if (!keys) {
    keys = importKeys(settings);
    imported.set(settings, keys);
  }
  return keys;
}

async function importKeys({
  tokenEncryption,
  tokenHmacKey,
}: Pick<Settings, 'tokenEncryption' | 'tokenHmacKey'>): Promise<TokenKeys> {
  const keys = new Map<string, CryptoKey>();
  for (const [kid, raw] of tokenEncryption.keys) {
    keys.set(kid, await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']));
  }
  const hmac = await crypto.subtle.importKey('raw', tokenHmacKey, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return { current: tokenEncryption.current, keys, hmac };
}

/**
 * Seals a value with the current key. `aad` binds the ciphertext to its record (the token id
 * and merchant), so a sealed value copied into another record does not open.
 */
export async function seal(keys: TokenKeys, plaintext: string, aad: string): Promise<SealedValue> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: utf8(aad) },
    keys.keys.get(keys.current)!,
    utf8(plaintext),
  );
  return { kid: keys.current, iv: toBase64(iv), ct: toBase64(new Uint8Array(ct)) };
}

/** Opens a sealed value; throws when its key is gone or it was tampered with. */
export async function open(keys: TokenKeys, sealed: SealedValue, aad: string): Promise<string> {
  const key = keys.keys.get(sealed.kid);
  if (!key) throw new TokenKeyMissing(sealed.kid);
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: fromBase64(sealed.iv), additionalData: utf8(aad) },
    key,
    fromBase64(sealed.ct),
  );
  return new TextDecoder().decode(plain);
}

/** HMAC-SHA256 (base64url) of a text under the token HMAC key. */
export async function keyedHash(keys: TokenKeys, text: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.sign('HMAC', keys.hmac, utf8(text))));
}

/**
 * A merchant's card number, for de-duplication: one token per card number and merchant, as in
 * Worldpay's tokens API (another expiry date for the same number is a conflict, not a new card).
 */
export function cardFingerprint(keys: TokenKeys, username: string, cardNumber: string): Promise<string> {
  return keyedHash(keys, `card\u0000${username}\u0000${cardNumber}`);
}
