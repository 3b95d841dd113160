import { fromBase64, utf8 } from '../bytes';
import { decodeEntry, type CredentialEntry } from '../credentials/credentials';
import { FailureError } from '../failures';

/**
 * The Worker's environment (vars and secrets, docs/configuration.md), parsed once per `env` object into
 * typed settings. Every problem is found at once and named: a request on a misconfigured Worker
 * answers 503 `serviceUnavailable` and logs what is wrong, instead of failing later in one
 * endpoint with a default that differs from another's.
 */

export type Environment = 'test' | 'live';

export interface TokenEncryptionKeys {
  /** Key id new tokens are sealed with. */
  current: string;
  /** Raw AES-256 keys by key id (32 bytes each). */
  keys: ReadonlyMap<string, Uint8Array<ArrayBuffer>>;
}

export interface Settings {
  environment: Environment;
  /** Base of links, token hrefs and page URLs; undefined means the request's origin. */
  publicBaseUrl: string | undefined;
  /** HS256 key of the 3DS JWTs and the keyed request hashes (at least 32 bytes). */
  jwtKey: Uint8Array<ArrayBuffer>;
  tokenEncryption: TokenEncryptionKeys;
  /** HMAC key that finds a merchant's token for a card without storing the number. */
  tokenHmacKey: Uint8Array<ArrayBuffer>;
  /** Each merchant's one or two stored credentials (two while it switches secrets). */
  passwordHashes: ReadonlyMap<string, readonly CredentialEntry[]>;
  /** The secret's text, which names this set of credentials (a cached login is tied to it). */
  passwordHashesSource: string;
  /** Keys the issued credentials' HMAC (MERCHANT_CREDENTIAL_KEY, at least 32 bytes). */
  credentialKey: Uint8Array<ArrayBuffer>;
  /** The deadline of every KV and Durable Object call (STORAGE_TIMEOUT_MS, 100–5000 ms). */
  storageTimeoutMs: number;
  /**
   * Into how many objects each merchant's event log is split, by subject (EVENT_LOG_SHARDS, 1–32,
   * default 8; src/events/event-shards.ts). Fixed for a deployment's life: a subject's shard follows
   * from it, so changing it would split a subject's order between two objects.
   */
  eventLogShards: number;
  /**
   * The 3DS Server provider of live 3-D Secure (THREEDS_SERVER_URL, secret THREEDS_SERVER_API_KEY):
   * required in `live`, ignored in `test` (where the built-in issuer answers).
   */
  threeDsServer?: ThreeDsServerSettings;
  /**
   * `test`: the secret the test issuer's app-channel ACS derives each challenge's ephemeral key
   * from (ACS_EPHEMERAL_KEY_SECRET, at least 32 bytes; src/emv/acs-ephemeral-key.ts). Unset, an
   * app challenge is a misconfiguration (503); ignored in `live`, where the issuer's ACS is real.
   */
  acsEphemeralKeySecret?: Uint8Array<ArrayBuffer>;
}

export interface ThreeDsServerSettings {
  baseUrl: string;
  apiKey: string;
  /**
   * The deadline of an AReq (THREEDS_SERVER_TIMEOUT_MS, 1000–30000, default 15000: the provider
   * answers within 10 s, its Directory Server timeout); card preparation and results take at most 5 s.
   */
  authenticateTimeoutMs: number;
}

/** The default deadline of an AReq at the provider (docs/configuration.md). */
const DEFAULT_AUTHENTICATE_TIMEOUT_MS = 15_000;
/** The longest THREEDS_SERVER_TIMEOUT_MS: a live authentication's lease covers it (src/threeds/transaction/live-transaction.ts). */
export const MAX_AUTHENTICATE_TIMEOUT_MS = 30_000;
/** The longest STORAGE_TIMEOUT_MS. */
export const MAX_STORAGE_TIMEOUT_MS = 5_000;

/** The environment cannot serve requests; `problems` says why (logged, never sent): a 503. */
export class SettingsError extends FailureError {
  constructor(readonly problems: readonly string[]) {
    super({ kind: 'misconfigured', what: problems.join('; ') });
    this.name = 'SettingsError';
  }
}

/**
 * How long one storage call may take before it counts as failed (`STORAGE_TIMEOUT_MS`): every KV
 * and Durable Object call has this deadline (docs/storage.md "Deadlines and failures").
 */
const DEFAULT_STORAGE_TIMEOUT_MS = 5_000;

/** HS256 wants at least 256 bits of key; so does the token HMAC. */
export const MIN_SECRET_BYTES = 32;

const parsed = new WeakMap<object, Settings | SettingsError>();

/**
 * The settings of this `env`, parsed on first use and remembered for the isolate's life.
 * Throws {@link SettingsError} listing every problem.
 *
 * @example
 * ```ts
 * const { environment, jwtKey } = settingsOf(env);
 * ```
 */
export function settingsOf(env: Env): Settings {
  let result = parsed.get(env);
  if (result === undefined) {
    result = parseSettings(env);
    parsed.set(env, result);
  }
  if (result instanceof SettingsError) throw result;
  return result;
}

/** Parses the environment; never throws, a {@link SettingsError} carries every problem. */
export function parseSettings(env: Env): Settings | SettingsError {
  const problems: string[] = [];
  const environment = env.ENVIRONMENT;
  if (environment !== 'test' && environment !== 'live') {
    problems.push(`ENVIRONMENT must be "test" or "live", not ${JSON.stringify(environment ?? null)}`);
  }
  const publicBaseUrl = baseUrl(env.PUBLIC_BASE_URL, problems);
  const jwtKey = secretBytes('JWT_SIGNING_KEY', env.JWT_SIGNING_KEY, problems);
  const tokenHmacKey = secretBytes('TOKEN_HMAC_KEY', env.TOKEN_HMAC_KEY, problems);
  const tokenEncryption = encryptionKeys(env.TOKEN_ENCRYPTION_KEYS, problems);
  const passwordHashes = storedHashes(env.MERCHANT_PASSWORD_HASHES, problems);
  const credentialKey = secretBytes('MERCHANT_CREDENTIAL_KEY', env.MERCHANT_CREDENTIAL_KEY, problems);
  const storageTimeoutMs = storageTimeout(env.STORAGE_TIMEOUT_MS, problems);
  const threeDsServer = provider(env, environment === 'live', problems);
  const eventLogShards = integerMs('EVENT_LOG_SHARDS', env.EVENT_LOG_SHARDS, { min: 1, max: 32, default: 8 }, problems);
  const acsEphemeralKeySecret =
    environment === 'test' && env.ACS_EPHEMERAL_KEY_SECRET
      ? secretBytes('ACS_EPHEMERAL_KEY_SECRET', env.ACS_EPHEMERAL_KEY_SECRET, problems)
      : undefined;
  if (problems.length > 0) return new SettingsError(problems);
  return {
    environment: environment as Environment,
    publicBaseUrl,
    jwtKey,
    tokenHmacKey,
    tokenEncryption,
    passwordHashes,
    passwordHashesSource: env.MERCHANT_PASSWORD_HASHES,
    credentialKey,
    storageTimeoutMs,
    eventLogShards,
    ...(threeDsServer ? { threeDsServer } : {}),
    ...(acsEphemeralKeySecret ? { acsEphemeralKeySecret } : {}),
  };
}

/** The 3DS Server provider's URL and key: required in `live`, ignored in `test`. */
function provider(env: Env, live: boolean, problems: string[]): Settings['threeDsServer'] {
  if (!live) return undefined;
  const key = env.THREEDS_SERVER_API_KEY;
  if (!env.THREEDS_SERVER_URL?.trim()) problems.push('THREEDS_SERVER_URL is not set');
  const url = httpUrl('THREEDS_SERVER_URL', env.THREEDS_SERVER_URL, problems);
  if (!key) problems.push('THREEDS_SERVER_API_KEY is not set');
  const authenticateTimeoutMs = integerMs(
    'THREEDS_SERVER_TIMEOUT_MS',
    env.THREEDS_SERVER_TIMEOUT_MS,
    { min: 1_000, max: MAX_AUTHENTICATE_TIMEOUT_MS, default: DEFAULT_AUTHENTICATE_TIMEOUT_MS },
    problems,
  );
  return url && key ? { baseUrl: url, apiKey: key, authenticateTimeoutMs } : undefined;
}

/**
 * The storage deadline. It stays within 5 s: a live authentication's lease
 * (src/threeds/transaction/live-transaction.ts) covers its storage calls, each within this deadline.
 */
function storageTimeout(value: string | undefined, problems: string[]): number {
  return integerMs(
    'STORAGE_TIMEOUT_MS',
    value,
    { min: 100, max: MAX_STORAGE_TIMEOUT_MS, default: DEFAULT_STORAGE_TIMEOUT_MS },
    problems,
  );
}

/** A whole number of milliseconds within bounds; its default when unset (or wrong, with a problem). */
function integerMs(
  name: string,
  value: string | undefined,
  bounds: { min: number; max: number; default: number },
  problems: string[],
): number {
  if (value === undefined || value.trim() === '') return bounds.default;
  const ms = Number(value.trim());
  if (!Number.isInteger(ms) || ms < bounds.min || ms > bounds.max) {
    problems.push(`${name} must be an integer from ${bounds.min} to ${bounds.max}`);
    return bounds.default;
  }
  return ms;
}

function baseUrl(value: string | undefined, problems: string[]): string | undefined {
  return httpUrl('PUBLIC_BASE_URL', value, problems);
}

/** An absolute http(s) URL without its trailing slashes; undefined when unset (or wrong, with a problem). */
function httpUrl(name: string, value: string | undefined, problems: string[]): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  try {
    const url = new URL(trimmed);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    return trimmed.replace(/\/+$/, '');
  } catch {
    problems.push(`${name} must be an absolute http(s) URL`);
    return undefined;
  }
}

function secretBytes(name: string, value: string | undefined, problems: string[]): Uint8Array<ArrayBuffer> {
  if (!value) {
    problems.push(`${name} is not set`);
    return new Uint8Array(0);
  }
  const bytes = utf8(value);
  if (bytes.byteLength < MIN_SECRET_BYTES) problems.push(`${name} is shorter than ${MIN_SECRET_BYTES} bytes`);
  return bytes;
}

function encryptionKeys(value: string | undefined, problems: string[]): TokenEncryptionKeys {
  const keys = new Map<string, Uint8Array<ArrayBuffer>>();
  const none: TokenEncryptionKeys = { current: '', keys };
  if (!value) {
    problems.push('TOKEN_ENCRYPTION_KEYS is not set');
    return none;
  }
  let config: { current?: unknown; keys?: unknown };
  try {
    config = JSON.parse(value) as typeof config;
  } catch {
    problems.push('TOKEN_ENCRYPTION_KEYS is not JSON');
    return none;
  }
  const entries = typeof config.keys === 'object' && config.keys !== null ? Object.entries(config.keys) : [];
  if (typeof config.current !== 'string' || !entries.some(([kid]) => kid === config.current)) {
    problems.push('TOKEN_ENCRYPTION_KEYS needs "current" naming one of its "keys"');
    return none;
  }
  for (const [kid, b64] of entries) {
    let raw: Uint8Array<ArrayBuffer> | undefined;
    try {
      raw = typeof b64 === 'string' ? fromBase64(b64) : undefined;
    } catch {
      raw = undefined;
    }
    if (raw?.byteLength === 32) keys.set(kid, raw);
    else problems.push(`TOKEN_ENCRYPTION_KEYS key ${kid} is not 32 bytes of base64`);
  }
  return { current: config.current, keys };
}

/**
 * A secret of `{"<username>": value or [values]}` (MERCHANT_PASSWORD_HASHES):
 * each merchant's values as a list; none, with the problem named, when it is not such an object.
 */
function perMerchant(name: string, value: string, shape: string, problems: string[]): [string, unknown[]][] {
  let object: unknown;
  try {
    object = JSON.parse(value);
  } catch {
    problems.push(`${name} is not JSON`);
    return [];
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    problems.push(`${name} is not ${shape}`);
    return [];
  }
  return Object.entries(object).map(([username, raw]) => [username, Array.isArray(raw) ? raw : [raw]]);
}

/** At most two entries per merchant: the current secret and the one it is switching to. */
const MAX_ENTRIES = 2;

function storedHashes(value: string | undefined, problems: string[]): Map<string, CredentialEntry[]> {
  const hashes = new Map<string, CredentialEntry[]>();
  if (!value || value.trim() === '') {
    problems.push('MERCHANT_PASSWORD_HASHES is not set');
    return hashes;
  }
  for (const [username, values] of perMerchant('MERCHANT_PASSWORD_HASHES', value, 'an object', problems)) {
    const entries = values.map((v) => (typeof v === 'string' ? decodeEntry(v) : undefined));
    if (values.length === 0 || values.length > MAX_ENTRIES || entries.some((e) => e === undefined)) {
      problems.push(
        `MERCHANT_PASSWORD_HASHES has a malformed entry for ${username} (one or two hmac-sha256 or pbkdf2-sha256 values)`,
      );
    } else {
      hashes.set(username, entries as CredentialEntry[]);
    }
  }
  return hashes;
}
