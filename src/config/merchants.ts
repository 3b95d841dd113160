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
      }),
    ),
    v.check((ms) => new Set(ms.map((m) => m.username)).size === ms.length, 'usernames must be unique'),
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

/** Whether the entity may use a card with these brands (any one of them allowed is enough). */
export function brandAllowed(entity: EntityConfig, brands: readonly Brand[]): boolean {
  return entity.brands === 'all' || brands.some((b) => (entity.brands as readonly Brand[]).includes(b));
}

export function currencyAllowed(entity: EntityConfig, currency: string): boolean {
  return entity.currencies === 'all' || entity.currencies.includes(currency);
}
