import { textOfBase64, toBase64 } from '../bytes';
import type { Settings } from '../config/settings';
import { importCredentialKey, macOf, type CredentialEntry } from '../credentials/credentials';
import { pbkdf2 } from '../credentials/password-hash';
import { fail } from '../failures';
import type { MerchantConfig, MerchantDirectory } from '../merchants/merchant-config';

/**
 * HTTP Basic authentication against the merchant configuration (docs/pipeline.md step 2).
 *
 * Credentials are stored as keyed hashes in the MERCHANT_PASSWORD_HASHES secret (see
 * src/credentials/credentials.ts): an issued password costs one HMAC to check, a person's
 * password one PBKDF2 run (the slow path). A merchant may have two at once while it switches.
 *
 * Successful checks are remembered per isolate for a minute, keyed by the parsed username and
 * password (so every spelling of the same header shares one entry) and tied to the stored
 * secret (so a changed or removed credential takes effect at once). Failures are never cached.
 *
 * Failed logins are limited with Workers Rate Limiting (wrangler.toml), per Cloudflare location,
 * and only failures pay for it, so that one misconfigured client cannot lock out the others
 * behind the same address (a NAT, a platform's egress):
 * - an issued credential is checked first, with one HMAC (microseconds), whatever the limits say:
 *   the right one always passes;
 * - the slow path (PBKDF2) counts against the client address before it runs: an address over
 *   the limit gets 429 without hashing, and so does a username past its failure limit;
 * - a failure counts against the address and the username: past either limit it answers 429
 *   instead of 401.
 */

const VERIFIED_TTL_MS = 60_000;
const MEMORY_MAX = 1_000;
/** Seconds a client waits after the limit: the limiters' window. */
const LOGIN_LIMIT_WINDOW_SECONDS = 60;

/** What one isolate remembers about logins; a new one is a cold isolate. */
export class LoginMemory {
  /** Successful checks, by username and password. */
  readonly verified = new Map<string, { source: string; until: number }>();
  /** Usernames past their failure limit, until when. */
  readonly throttled = new Map<string, number>();
  /** Client addresses past their limit, until when. */
  readonly limitedAddresses = new Map<string, number>();
  /**
   * Headers already parsed: a merchant's checkout sends the same header on every call, and
   * decoding it (a regex, base64, strict UTF-8) was a measurable part of a request.
   */
  readonly parsedHeaders = new Map<string, { username: string; password: string }>();
  /** Imported once per key (not per settings object: a key is the same key). */
  readonly credentialKeys = new Map<string, Promise<CryptoKey>>();
  /**
   * Cold checks under way, by credentials: identical requests arriving together (a checkout's
   * burst) share one check, so one slow hash runs and one count is taken against the limits.
   */
  readonly checking = new Map<string, { source: string; check: Promise<MerchantConfig> }>();
}

/** Sets a bounded map's entry, forgetting everything when it is full. */
function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  if (map.size >= MEMORY_MAX) map.clear();
  map.set(key, value);
}

/** The rate limiters of failed logins, and where a request comes from. */
export interface LoginLimits {
  byAddress?: RateLimit;
  byUsername?: RateLimit;
  address: string;
  /** Tells the log line what the limiters did. */
  note: (what: string) => void;
}

/** Parses `Authorization: Basic …` into username and password, or ends the request with 401. */
function parseBasicAuthorization(header: string | null, memory: LoginMemory): { username: string; password: string } {
  const known = header === null ? undefined : memory.parsedHeaders.get(header);
  if (known) return known;
  const parsed = parseHeader(header);
  remember(memory.parsedHeaders, header!, parsed);
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
 * with 401, or 429 when its address or username is past the limit of failed logins. The warm
 * path (a login remembered in this isolate) answers without a promise.
 */
export function signInWithBasicAuth(
  request: Request,
  settings: Settings,
  merchants: MerchantDirectory,
  memory: LoginMemory,
  limits: () => LoginLimits,
): MerchantConfig | Promise<MerchantConfig> {
  const { username, password } = parseBasicAuthorization(request.headers.get('Authorization'), memory);
  const merchant = merchants.merchant(username);
  const hit = memory.verified.get(`${username}\u0000${password}`);
  if (merchant && hit && hit.source === settings.passwordHashesSource && hit.until > Date.now()) return merchant;
  const key = `${username}\u0000${password}`;
  const under = memory.checking.get(key);
  if (under && under.source === settings.passwordHashesSource) return under.check;
  const check = checkCold(username, password, merchant, settings, memory, limits()).finally(() => {
    if (memory.checking.get(key)?.check === check) memory.checking.delete(key);
  });
  memory.checking.set(key, { source: settings.passwordHashesSource, check });
  return check;
}

/** A login the cache cannot answer: the issued credential, then the limited slow path, then failure. */
async function checkCold(
  username: string,
  password: string,
  merchant: MerchantConfig | undefined,
  settings: Settings,
  memory: LoginMemory,
  limits: LoginLimits,
): Promise<MerchantConfig> {
  const entries = merchant ? (settings.passwordHashes.get(username) ?? []) : [];
  const issued = entries.filter((e): e is IssuedEntry => e.kind === 'hmac');
  const slow = entries.filter((e): e is SlowEntry => e.kind === 'pbkdf2');
  const signedIn = (): MerchantConfig => {
    remember(memory.verified, `${username}\u0000${password}`, {
      source: settings.passwordHashesSource,
      until: Date.now() + VERIFIED_TTL_MS,
    });
    return merchant!;
  };

  // The issued credential first, unlimited: one HMAC. An unknown username costs the same HMAC
  // (against a dummy), so the answer's time does not tell known usernames apart.
  if (issued.length > 0 || slow.length === 0) {
    const mac = await macOf(await credentialKey(settings, memory), username, password);
    let matched = false;
    for (const entry of issued.length > 0 ? issued : [DUMMY_ENTRY]) if (sameBytes(entry.mac, mac)) matched = true;
    if (matched && merchant) return signedIn();
  }

  let addressCounted = false;
  if (slow.length > 0) {
    // A hundred thousand PBKDF2 rounds: limited before they run.
    await refuseLimitedAddress(memory, limits);
    addressCounted = true;
    if ((memory.throttled.get(username) ?? 0) > Date.now())
      fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
    for (const entry of slow) if (await pbkdf2Matches(entry, password)) return signedIn();
  }

  // A failure: it counts against the address and the username.
  if (!addressCounted) await refuseLimitedAddress(memory, limits);
  if (!(await allowed(limits.byUsername, username, limits))) {
    remember(memory.throttled, username, Date.now() + LOGIN_LIMIT_WINDOW_SECONDS * 1000);
    fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
  }
  fail({ kind: 'accessDenied' });
}

/**
 * Counts one against the client address, or answers 429 when it is past its limit. An address
 * this isolate saw go over the limit is answered from memory, without asking the limiter.
 */
async function refuseLimitedAddress(memory: LoginMemory, limits: LoginLimits): Promise<void> {
  const now = Date.now();
  if ((memory.limitedAddresses.get(limits.address) ?? 0) > now) {
    limits.note('limited');
    fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
  }
  if (!(await allowed(limits.byAddress, limits.address, limits))) {
    remember(memory.limitedAddresses, limits.address, now + LOGIN_LIMIT_WINDOW_SECONDS * 1000);
    fail({ kind: 'tooManyRequests', retryAfter: LOGIN_LIMIT_WINDOW_SECONDS });
  }
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

function credentialKey(settings: Settings, memory: LoginMemory): Promise<CryptoKey> {
  const name = toBase64(settings.credentialKey);
  let key = memory.credentialKeys.get(name);
  if (!key) {
    key = importCredentialKey(settings.credentialKey);
    remember(memory.credentialKeys, name, key);
  }
  return key;
}

type IssuedEntry = Extract<CredentialEntry, { kind: 'hmac' }>;
type SlowEntry = Extract<CredentialEntry, { kind: 'pbkdf2' }>;

const DUMMY_ENTRY: IssuedEntry = { kind: 'hmac', mac: new Uint8Array(32) };

/** Constant-time comparison of two byte strings of the same length. */
function sameBytes(expected: Uint8Array<ArrayBuffer>, actual: Uint8Array<ArrayBuffer>): boolean {
  return expected.byteLength === actual.byteLength && crypto.subtle.timingSafeEqual(expected, actual);
}

async function pbkdf2Matches(entry: SlowEntry, password: string): Promise<boolean> {
  const { salt, iterations, hash } = entry.hash;
  return sameBytes(hash, new Uint8Array(await pbkdf2(password, salt, iterations, hash.byteLength)));
}
