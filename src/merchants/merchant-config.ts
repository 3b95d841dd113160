import * as v from 'valibot';
import { BRANDS, type Brand } from '../bin/model';
import { isConfigurableOrigin, originListed } from './origins';
import { REQUESTOR_BLOCK, type RequestorBlock } from './requestor';

/**
 * The merchant configuration (`data/merchants.json`, docs/configuration.md "Merchants"): who the
 * merchants are, their entities and what each may do, and their publishable keys. Not secret:
 * passwords live in a secret (src/config/settings.ts). Validated when the Worker loads: a
 * malformed file fails start-up and the tests, never a request.
 */

/** What one merchant entity may do (docs/configuration.md "Entities"). */
export interface EntityConfig {
  pciCompliant: boolean;
  threeDS: boolean;
  /** Allowed card brands; `all` allows every brand. */
  brands: 'all' | readonly Brand[];
  /** Allowed ISO 4217 currencies; `all` allows every currency. */
  currencies: 'all' | readonly string[];
  /** Frictionless 3DS below this amount in minor units (docs/threeds.md "Risk rules"). */
  frictionlessThreshold: number;
  /**
   * The low value exemption's limit per currency, in minor units, where the schemes set none
   * (they set 30 EUR and 25 GBP; docs/threeds.md "Exemptions"). Empty: low value only in EUR and GBP.
   */
  lowValueLimits: Readonly<Record<string, number>>;
  /** Who the merchant is to the card schemes in a live authentication (required for `live`). */
  threeDSRequestor?: RequestorBlock;
}

export interface MerchantConfig {
  username: string;
  entities: ReadonlyMap<string, EntityConfig>;
  /**
   * Keys a merchant may put in a web page: each allows only the lookup by BIN prefix, and only
   * from the listed origins (docs/card-bin.md "Publishable keys"). Not secrets.
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

/** A publishable key: `pk_`, then 16–64 letters, digits or `_`. */
export const PUBLISHABLE_KEY = /^pk_[A-Za-z0-9_]{16,64}$/;

const ENTITY = v.strictObject({
  pciCompliant: v.boolean(),
  threeDS: v.boolean(),
  brands: v.union([v.literal('all'), v.array(v.picklist(BRANDS))]),
  currencies: v.union([v.literal('all'), v.array(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/)))]),
  frictionlessThreshold: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3000),
  lowValueLimits: v.optional(
    v.record(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/)), v.pipe(v.number(), v.integer(), v.minValue(0))),
    {},
  ),
  threeDSRequestor: v.optional(REQUESTOR_BLOCK),
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
                v.array(
                  v.pipe(v.string(), v.check(isConfigurableOrigin, 'an origin is scheme://host[:port], nothing more')),
                ),
                v.minLength(1, 'a publishable key needs at least one origin'),
              ),
            }),
          ),
          [],
        ),
        // One way to configure: a merchant makes its endpoints through the API (docs/events.md).
        events: v.optional(
          v.never('event endpoints are made through the API now (POST /events/endpoints, docs/events.md)'),
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
 * The merchants, as the request path asks for them: by username (Basic auth), by publishable key,
 * and which origins any key allows (CORS).
 */
export class MerchantDirectory {
  private readonly byUsername: ReadonlyMap<string, MerchantConfig>;
  private readonly byKey: ReadonlyMap<string, { merchant: MerchantConfig; key: PublishableKey }>;

  constructor(merchants: Iterable<MerchantConfig>) {
    const list = [...merchants];
    this.byUsername = new Map(list.map((m) => [m.username, m]));
    this.byKey = new Map(
      list.flatMap((merchant) => merchant.publishableKeys.map((key) => [key.key, { merchant, key }])),
    );
  }

  merchant(username: string): MerchantConfig | undefined {
    return this.byUsername.get(username);
  }

  /** The merchant a publishable key belongs to, and the key. */
  publishableKey(key: string): { merchant: MerchantConfig; key: PublishableKey } | undefined {
    return this.byKey.get(key);
  }

  /** Whether some publishable key allows this origin: the origins CORS answers. */
  isPublishableOrigin(origin: string): boolean {
    for (const { key } of this.byKey.values()) if (originListed(key.origins, origin)) return true;
    return false;
  }
}

/**
 * Parses and validates a merchant configuration document; throws with every problem listed,
 * so a malformed configuration fails the Worker at start-up (and the tests), never silently.
 * For `live`, every entity with 3-D Secure enabled needs its requestor block, and every event
 * endpoint is https.
 */
export function parseMerchantConfig(input: unknown, options: { live?: boolean } = {}): MerchantDirectory {
  const result = v.safeParse(CONFIG, input);
  if (!result.success) {
    const problems = result.issues.flatMap((i) => deepest(i, ''));
    throw new Error(`data/merchants.json is invalid: ${problems.join('; ')}`);
  }
  if (options.live) {
    const missing = result.output.merchants.flatMap((m) =>
      Object.entries(m.entities)
        .filter(([, e]) => e.threeDS && e.threeDSRequestor === undefined)
        .map(([id]) => `merchants.${m.username}.entities.${id}.threeDSRequestor: needed for live 3-D Secure`),
    );
    if (missing.length > 0) throw new Error(`data/merchants.json is invalid: ${missing.join('; ')}`);
  }
  return new MerchantDirectory(
    result.output.merchants.map((m) => ({
      username: m.username,
      entities: new Map(Object.entries(m.entities)),
      publishableKeys: m.publishableKeys.map((k) => ({ key: k.key, origins: new Set(k.origins) })),
    })),
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
