import { textOfBase64 } from '../bytes';
import type { Settings } from '../config/settings';
import { MERCHANTS, type MerchantConfig } from '../config/merchants';
import { importCredentialKey, matches, type CredentialEntry } from '../credentials/credentials';
import { fail } from './errors';

/**
 * HTTP Basic authentication against the merchant configuration (CONTRACT.md §1, §2 step 2).
 *
 * Credentials are stored as keyed hashes in the MERCHANT_PASSWORD_HASHES secret (see
 * src/credentials/credentials.ts): an issued password costs one HMAC to check, a person's
 * password one PBKDF2 run (the slow path). A merchant may have two at once while it switches.
 *
 * Successful checks are remembered per isolate for a minute, keyed by the parsed username and
 * password (so every spelling of the same header shares one entry) and tied to the stored
 * secret (so a changed or removed credential takes effect at once). Failures are never cached.
 *
 * Failed logins are limited with Workers Rate Limiting (wrangler.toml), per Cloudflare location:
 * - per client address, every credential check that misses the cache counts, before any hashing:
 *   a client over the limit gets 429 at once. A merchant's server logs in cold about once a
 *   minute per isolate, far under the limit, and a warm login is never counted;
 * - per username, failures count: past the limit a failure answers 429 instead of 401, and this
 *   isolate stops running the slow hash for the username (429 before hashing). An issued
 *   credential is still checked (microseconds), so the merchant's own logins from its own
 *   address keep working while someone else fails on another.
 */

const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 1_000;
/** Seconds a client waits after the limit: the limiters' window. */
export const LOGIN_LIMIT_WINDOW_SECONDS = 60;

const verified = new Map<string, { source: string; until: number }>();
/** Usernames past their failure limit in this isolate, until when. */
const throttled = new Map<string, number>();
const credentialKeys = new WeakMap<object, Promise<CryptoKey>>();

/** The rate limiters of failed logins, and where a request comes from. */
export interface LoginLimits {
  byAddress?: RateLimit;
  byUsername?: RateLimit;
  address: string;
  /** Tells the log line what the limiters did. */
  note: (what: string) => void;
}

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
 * with 401, or 429 when its address or username is past the limit of failed logins.
 */
export async function authenticate(request: Request, settings: Settings, limits: LoginLimits): Promise<MerchantConfig> {
  const { username, password } = parseBasicAuthorization(request.headers.get('Authorization'));
  const merchant = MERCHANTS.get(username);
  const entries = merchant ? settings.passwordHashes.get(username) : undefined;
  const cacheKey = `${username}\u0000${password}`;
  const now = Date.now();
  const hit = verified.get(cacheKey);
  if (merchant && entries && hit && hit.source === settings.passwordHashesSource && hit.until > now) return merchant;

  if (!(await allowed(limits.byAddress, limits.address, limits)))
    fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
  const slowOnly = entries === undefined || entries.every((e) => e.kind === 'pbkdf2');
  if ((throttled.get(username) ?? 0) > now && slowOnly)
    fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });

  const key = await credentialKey(settings);
  // An unknown username still costs one keyed hash, so the answer's time does not tell it apart.
  let ok = false;
  for (const entry of entries ?? [DUMMY_ENTRY]) if (await matches(entry, key, username, password)) ok = true;
  if (!ok || !merchant || !entries) {
    if (!(await allowed(limits.byUsername, username, limits))) {
      throttled.set(username, now + LOGIN_LIMIT_WINDOW_SECONDS * 1000);
      fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
    }
    fail({ kind: 'accessDenied' });
  }
  if (verified.size >= VERIFIED_MAX) verified.clear();
  verified.set(cacheKey, { source: settings.passwordHashesSource, until: now + VERIFIED_TTL_MS });
  return merchant;
}

/** One count against a limiter; a limiter that fails lets the request through (and says so). */
async function allowed(limiter: RateLimit | undefined, key: string, limits: LoginLimits): Promise<boolean> {
  if (!limiter) return true;
  try {
    const { success } = await limiter.limit({ key });
    if (!success) limits.note('limited');
    return success;
  } catch {
    limits.note('rate limiter unavailable');
    return true;
  }
}

function credentialKey(settings: Settings): Promise<CryptoKey> {
  let key = credentialKeys.get(settings);
  if (!key) {
    key = importCredentialKey(settings.credentialKey);
    credentialKeys.set(settings, key);
  }
  return key;
}

const DUMMY_ENTRY: CredentialEntry = { kind: 'hmac', mac: new Uint8Array(32) };
