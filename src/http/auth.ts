import { textOfBase64, toHex, utf8 } from '../bytes';
import { MERCHANTS, type MerchantConfig } from '../config/merchants';
import { encodeStored, MAX_ITERATIONS, pbkdf2, type StoredHash } from '../credentials/password-hash';
import { fail } from './errors';

/**
 * HTTP Basic authentication against the merchant configuration (CONTRACT.md §1, §2 step 2).
 *
 * Passwords are stored only as salted PBKDF2-SHA256 hashes, in the MERCHANT_PASSWORD_HASHES
 * secret: a JSON object `{ "<username>": "pbkdf2-sha256:<iterations>:<salt b64>:<hash b64>" }`
 * (make one with `npm run hash-password`), parsed once with the other settings.
 */

/**
 * PBKDF2 costs milliseconds of CPU on purpose; a merchant's checkout calls many times a minute
 * with the same credentials. Successful checks are remembered per isolate for a minute, keyed by
 * a SHA-256 of the Authorization value and the stored hash (so a password change or a removed
 * merchant takes effect at once). Failures are never cached.
 */
const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 1_000;
const verified = new Map<string, number>();

/** Parses `Authorization: Basic …` into username and password, or ends the request with 401. */
export function parseBasicAuthorization(header: string | null): { username: string; password: string } {
  if (header === null) fail({ kind: 'authorizationMissing' });
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (!match) fail({ kind: 'authorizationMalformed' });
  let decoded: string;
  try {
    decoded = textOfBase64(match[1]!);
  } catch {
    fail({ kind: 'authorizationMalformed' });
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) fail({ kind: 'authorizationMalformed' });
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Authenticates the request's Basic credentials and returns the merchant, or ends the request
 * with 401 (or 503 when the hash secret is missing or malformed).
 */
export async function authenticate(request: Request, hashes: ReadonlyMap<string, StoredHash>): Promise<MerchantConfig> {
  const header = request.headers.get('Authorization');
  const { username, password } = parseBasicAuthorization(header);
  const merchant = MERCHANTS.get(username);
  const stored = merchant ? hashes.get(username) : undefined;

  const cacheKey = await sha256Hex(`${header}\u0000${stored ? encodeStored(stored) : ''}`);
  const until = verified.get(cacheKey);
  if (merchant && stored && until !== undefined && until > Date.now()) return merchant;

  // An unknown user still costs one PBKDF2 run, so response time does not reveal usernames.
  const ok = (await verifyPassword(password, stored ?? DUMMY_HASH)) && stored !== undefined;
  if (!ok || !merchant) fail({ kind: 'accessDenied' });
  if (verified.size >= VERIFIED_MAX) verified.clear();
  verified.set(cacheKey, Date.now() + VERIFIED_TTL_MS);
  return merchant;
}

/** PBKDF2-SHA256 of the password with the stored salt, compared in constant time. */
export async function verifyPassword(password: string, stored: StoredHash): Promise<boolean> {
  const derived = await pbkdf2(password, stored.salt, stored.iterations, stored.hash.byteLength);
  return derived.byteLength === stored.hash.byteLength && crypto.subtle.timingSafeEqual(derived, stored.hash);
}

const DUMMY_HASH: StoredHash = { iterations: MAX_ITERATIONS, salt: new Uint8Array(16), hash: new Uint8Array(32) };

async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(text))));
}
