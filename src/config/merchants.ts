import * as v from 'valibot';
import { BRANDS, type Brand } from '../bin/model';
import merchantsJson from '../../data/merchants.json';

/** What one merchant entity may do (CONTRACT.md §1). */
export interface EntityConfig {
  pciCompliant: boolean;
  threeDS: boolean;
  /** Allowed card brands; `all` allows every brand. */
  brands: 'all' | readonly Brand[];
  /** Allowed ISO 4217 currencies; `all` allows every currency. */
  currencies: 'all' | readonly string[];
  /** Frictionless 3DS below this amount in minor units (CONTRACT.md §6.5). */
  frictionlessThreshold: number;
}

export interface MerchantConfig {
  username: string;
  entities: ReadonlyMap<string, EntityConfig>;
  /**
   * Keys a merchant may put in a web page: each allows only the lookup by BIN prefix, and only
   * from the listed origins (README "Lookup by BIN prefix"). Not secrets.
   */
  publishableKeys: readonly PublishableKey[];
}

export interface PublishableKey {
  key: string;
  /**
   * Origins (`scheme://host[:port]`) whose pages may use the key; `http://localhost:*` and
   * `http://127.0.0.1:*` stand for any port of a developer's own machine.
   */
  origins: ReadonlySet<string>;
}

/** Local origins with any port: the one wildcard an origin list may hold. */
const LOCAL_ANY_PORT = /^http:\/\/(localhost|127\.0\.0\.1):\*$/;

/** A publishable key: `pk_`, then 16–64 letters, digits or `_`. */
export const PUBLISHABLE_KEY = /^pk_[A-Za-z0-9_]{16,64}$/;

/** A web origin as browsers send it: scheme, host, optional port, nothing else (or a local any-port origin). */
function isOrigin(value: string): boolean {
  if (LOCAL_ANY_PORT.test(value)) return true;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

const ENTITY = v.strictObject({
  pciCompliant: v.boolean(),
  threeDS: v.boolean(),
  brands: v.union([v.literal('all'), v.array(v.picklist(BRANDS))]),
  currencies: v.union([v.literal('all'), v.array(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/)))]),
  frictionlessThreshold: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3000),
});

const CONFIG = v.object({
  merchants: v.pipe(
    v.array(
      v.strictObject({
        username: v.pipe(v.string(), v.minLength(1), v.regex(/^[^:]+$/, 'a username cannot contain ":"')),
        entities: v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9 ]{1,64}$/)), ENTITY),
        publishableKeys: v.optional(
          v.array(
            v.strictObject({
              key: v.pipe(v.string(), v.regex(PUBLISHABLE_KEY, 'a publishable key is pk_ and 16–64 of [A-Za-z0-9_]')),
              origins: v.pipe(
                v.array(v.pipe(v.string(), v.check(isOrigin, 'an origin is scheme://host[:port], nothing more'))),
                v.minLength(1, 'a publishable key needs at least one origin'),
              ),
            }),
          ),
          [],
        ),
      }),
    ),
    v.check((ms) => new Set(ms.map((m) => m.username)).size === ms.length, 'usernames must be unique'),
    v.check((ms) => {
      const keys = ms.flatMap((m) => m.publishableKeys.map((k) => k.key));
      return new Set(keys).size === keys.length;
    }, 'publishable keys must be unique'),
  ),
});

/**
 * Parses and validates a merchant configuration document; throws with every problem listed,
 * so a malformed configuration fails the Worker at start-up (and the tests), never silently.
 */
export function parseMerchantConfig(input: unknown): ReadonlyMap<string, MerchantConfig> {
  const result = v.safeParse(CONFIG, input);
  if (!result.success) {
    const problems = result.issues.flatMap((i) => deepest(i, ''));
    throw new Error(`data/merchants.json is invalid: ${problems.join('; ')}`);
  }
  return new Map(
    result.output.merchants.map((m) => [
      m.username,
      {
        username: m.username,
        entities: new Map(Object.entries(m.entities)),
        publishableKeys: m.publishableKeys.map((k) => ({ key: k.key, origins: new Set(k.origins) })),
      },
    ]),
  );
}

/**
 * "where: what" for each problem. A union's own issue says only "expected all or an array"; the
 * issue inside the array (its path relative to the union) says which item is wrong.
 */
function deepest(issue: v.BaseIssue<unknown>, prefix: string): string[] {
  const path = [prefix, ...(issue.path ?? []).map((p) => String(p.key))].filter((p) => p !== '').join('.');
  const inner = (issue.issues ?? []).filter((i) => (i.path?.length ?? 0) > 0);
  return inner.length > 0 ? inner.flatMap((i) => deepest(i, path)) : [`${path || '(root)'}: ${issue.message}`];
}

/** The merchant configuration shipped in data/merchants.json, validated when the Worker loads. */
export const MERCHANTS = parseMerchantConfig(merchantsJson);

/** Every publishable key, with its merchant. */
export const PUBLISHABLE_KEYS: ReadonlyMap<string, { merchant: MerchantConfig; key: PublishableKey }> = new Map(
  [...MERCHANTS.values()].flatMap((merchant) => merchant.publishableKeys.map((key) => [key.key, { merchant, key }])),
);

/** Whether a key allows a page of this origin. */
export function keyAllowsOrigin(key: PublishableKey, origin: string): boolean {
  if (key.origins.has(origin)) return true;
  const local = /^(http:\/\/(?:localhost|127\.0\.0\.1)):\d{1,5}$/.exec(origin);
  return local !== null && key.origins.has(`${local[1]}:*`);
}

/** Whether some publishable key allows this origin: the origins CORS answers. */
export function isPublishableOrigin(origin: string): boolean {
  for (const { key } of PUBLISHABLE_KEYS.values()) if (keyAllowsOrigin(key, origin)) return true;
  return false;
}

/** Whether the entity may use a card with these brands (any one of them allowed is enough). */
export function brandAllowed(entity: EntityConfig, brands: readonly Brand[]): boolean {
  return entity.brands === 'all' || brands.some((b) => (entity.brands as readonly Brand[]).includes(b));
}

export function currencyAllowed(entity: EntityConfig, currency: string): boolean {
  return entity.currencies === 'all' || entity.currencies.includes(currency);
}
