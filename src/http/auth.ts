import { textOfBase64, toBase64 } from '../bytes';
import type { Settings } from '../config/settings';
import { MERCHANTS, type MerchantConfig } from '../config/merchants';
import { importCredentialKey, macOf, type CredentialEntry } from '../credentials/credentials';
import { pbkdf2 } from '../credentials/password-hash';
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
/** Client addresses past their limit in this isolate, until when. */
const limitedAddresses = new Map<string, number>();
/** Imported once per isolate and key (not per settings object: a key is the same key). */
const credentialKeys = new Map<string, Promise<CryptoKey>>();

/** The rate limiters of failed logins, and where a request comes from. */
export interface LoginLimits {
  byAddress?: RateLimit;
  byUsername?: RateLimit;
  address: string;
  /** Tells the log line what the limiters did. */
  note: (what: string) => void;
}

/**
 * Headers already parsed in this isolate: a merchant's checkout sends the same header on every
 * call, and decoding it (a regex, base64, strict UTF-8) was a measurable part of a request.
 */
const parsedHeaders = new Map<string, { username: string; password: string }>();
const PARSED_MAX = 1_000;

/** Parses `Authorization: Basic …` into username and password, or ends the request with 401. */
export function parseBasicAuthorization(header: string | null): { username: string; password: string } {
  const known = header === null ? undefined : parsedHeaders.get(header);
  if (known) return known;
  const parsed = parseHeader(header);
  if (parsedHeaders.size >= PARSED_MAX) parsedHeaders.clear();
  parsedHeaders.set(header!, parsed);
  return parsed;
}

function parseHeader(header: string | null): { username: string; password: string } {
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
export function authenticate(
  request: Request,
  settings: Settings,
  limits: () => LoginLimits,
): MerchantConfig | Promise<MerchantConfig> {
  const { username, password } = parseBasicAuthorization(request.headers.get('Authorization'));
  const merchant = MERCHANTS.get(username);
  const hit = verified.get(`${username}\u0000${password}`);
  // The warm path: no promise, no hashing, no limiter.
  if (merchant && hit && hit.source === settings.passwordHashesSource && hit.until > Date.now()) return merchant;
  return checkCold(username, password, settings, limits());
}

/** A login the cache cannot answer: limited, then checked against the stored credentials. */
async function checkCold(
  username: string,
  password: string,
  settings: Settings,
  limits: LoginLimits,
): Promise<MerchantConfig> {
  const merchant = MERCHANTS.get(username);
  const entries = merchant ? settings.passwordHashes.get(username) : undefined;
  const cacheKey = `${username}\u0000${password}`;
  const now = Date.now();

  // An address this isolate saw go over its limit is answered at once, without asking the limiter.
  const limitedUntil = limitedAddresses.get(limits.address) ?? 0;
  if (limitedUntil > now || !(await allowed(limits.byAddress, limits.address, limits))) {
    if (limitedUntil <= now) {
      if (limitedAddresses.size >= VERIFIED_MAX) limitedAddresses.clear();
      limitedAddresses.set(limits.address, now + LOGIN_LIMIT_WINDOW_SECONDS * 1000);
    }
    fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
  }
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
  const name = toBase64(settings.credentialKey);
  let key = credentialKeys.get(name);
  if (!key) {
    key = importCredentialKey(settings.credentialKey);
    credentialKeys.set(name, key);
  }
  return key;
}

const DUMMY_ENTRY: CredentialEntry = { kind: 'hmac', mac: new Uint8Array(32) };

/** Whether the password matches the entry; the final comparison is constant-time for both forms. */
async function matches(entry: CredentialEntry, key: CryptoKey, username: string, password: string): Promise<boolean> {
  const [expected, actual] =
    entry.kind === 'hmac'
      ? [entry.mac, await macOf(key, username, password)]
      : [
          entry.hash.hash,
          new Uint8Array(await pbkdf2(password, entry.hash.salt, entry.hash.iterations, entry.hash.hash.byteLength)),
        ];
  return expected.byteLength === actual.byteLength && crypto.subtle.timingSafeEqual(expected, actual);
}
