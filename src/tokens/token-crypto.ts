/**
 * Encryption of the card details behind a token (AES-256-GCM, WebCrypto) and the keyed hash that
 * finds a merchant's existing token for a card without storing the card number.
 *
 * TOKEN_ENCRYPTION_KEYS is `{"current": "<kid>", "keys": {"<kid>": "<base64 of 32 bytes>"}}`.
 * New tokens use the current key; each sealed value keeps its key id, so keys can rotate: add a
 * key, make it current, and keep the old ones while tokens sealed with them live.
 */

export class TokenKeysMisconfigured extends Error {}

export interface SealedValue {
  /** Key id. */
  kid: string;
  /** base64 of the 12-byte IV. */
  iv: string;
  /** base64 of ciphertext and tag. */
  ct: string;
}

export interface TokenKeys {
  current: string;
  keys: Map<string, CryptoKey>;
  hmac: CryptoKey;
}

let cached: { source: string; keys: Promise<TokenKeys> } | undefined;

/** Parses and imports the token keys (once per isolate and secret value). */
export function tokenKeys(encryptionKeys: string | undefined, hmacKey: string | undefined): Promise<TokenKeys> {
  if (!encryptionKeys || !hmacKey) throw new TokenKeysMisconfigured('TOKEN_ENCRYPTION_KEYS or TOKEN_HMAC_KEY is not set');
  const source = `${encryptionKeys}\u0000${hmacKey}`;
  if (cached?.source !== source) cached = { source, keys: importKeys(encryptionKeys, hmacKey) };
  return cached.keys;
}

async function importKeys(encryptionKeys: string, hmacKey: string): Promise<TokenKeys> {
  let config: { current?: unknown; keys?: Record<string, unknown> };
  try {
    config = JSON.parse(encryptionKeys) as typeof config;
  } catch {
    throw new TokenKeysMisconfigured('TOKEN_ENCRYPTION_KEYS is not JSON');
  }
  if (typeof config.current !== 'string' || typeof config.keys !== 'object' || config.keys === null || !(config.current in config.keys)) {
    throw new TokenKeysMisconfigured('TOKEN_ENCRYPTION_KEYS needs "current" naming one of its "keys"');
  }
  const keys = new Map<string, CryptoKey>();
  for (const [kid, b64] of Object.entries(config.keys)) {
    let raw: Uint8Array<ArrayBuffer> | undefined;
    try {
      raw = typeof b64 === 'string' ? fromBase64(b64) : undefined;
    } catch {
      raw = undefined;
    }
    if (!raw || raw.byteLength !== 32) throw new TokenKeysMisconfigured(`TOKEN_ENCRYPTION_KEYS key ${kid} is not 32 bytes of base64`);
    keys.set(kid, await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']));
  }
  const hmacBytes = new TextEncoder().encode(hmacKey);
  if (hmacBytes.byteLength < 32) throw new TokenKeysMisconfigured('TOKEN_HMAC_KEY is shorter than 32 bytes');
  const hmac = await crypto.subtle.importKey('raw', hmacBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return { current: config.current, keys, hmac };
}

/**
 * Seals a value with the current key. `aad` binds the ciphertext to its record (the token id
 * and merchant), so a sealed value copied into another record does not open.
 */
export async function seal(keys: TokenKeys, plaintext: string, aad: string): Promise<SealedValue> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(aad) },
    keys.keys.get(keys.current)!, new TextEncoder().encode(plaintext),
  );
  return { kid: keys.current, iv: toBase64(iv), ct: toBase64(new Uint8Array(ct)) };
}

/** Opens a sealed value; throws when its key is gone or it was tampered with. */
export async function open(keys: TokenKeys, sealed: SealedValue, aad: string): Promise<string> {
  const key = keys.keys.get(sealed.kid);
  if (!key) throw new TokenKeysMisconfigured(`token key ${sealed.kid} is no longer configured`);
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: fromBase64(sealed.iv), additionalData: new TextEncoder().encode(aad) },
    key, fromBase64(sealed.ct),
  );
  return new TextDecoder().decode(plain);
}

/**
 * HMAC-SHA256 (base64url) of a merchant's card, for de-duplication. The same card is the same
 * number with the same expiry date: a reissued card with a new date gets a new token.
 */
export async function cardFingerprint(
  keys: TokenKeys, username: string, cardNumber: string, expiry: { month: number; year: number },
): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', keys.hmac, new TextEncoder().encode(`${username}\u0000${cardNumber}\u0000${expiry.year}-${expiry.month}`));
  return toBase64(new Uint8Array(mac)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}
