import type { Brand } from '../bin/model';
import { failed, ok, type Result } from '../failures';
import type { EntityConfig, MerchantConfig } from './merchant-config';

/**
 * The business rules of every endpoint, in one place and in the order docs/pipeline.md gives
 * them (step 6): the entity, then the feature (3-D Secure; card numbers for PCI-compliant
 * entities only), then the card's brand, then the currency. The domain steps apply them; no
 * route decides one.
 */

/**
 * The merchant's entity, or entityIsNotConfigured, also for an entity that belongs to another
 * merchant: the answer never reveals that it exists.
 */
export function entityRule(merchant: MerchantConfig, entityId: string): Result<EntityConfig> {
  const entity = merchant.entities.get(entityId);
  return entity ? ok(entity) : failed({ kind: 'entityNotConfigured' });
}

/** The entity, which must have 3-D Secure enabled (else merchantIsNotConfigured). */
export function threeDsEntityRule(merchant: MerchantConfig, entityId: string): Result<EntityConfig> {
  const entity = entityRule(merchant, entityId);
  if (entity.ok && !entity.value.threeDS) return failed({ kind: 'merchantNotConfigured', feature: '3-D Secure' });
  return entity;
}

/**
 * A full card number may be handled only by a PCI-compliant entity (else merchantIsNotConfigured,
 * naming what the caller wanted to do with it). Tokens and BIN prefixes are open to every entity.
 */
export function cardNumberRule(entity: EntityConfig, feature: string): Result<void> {
  return entity.pciCompliant ? ok(undefined) : failed({ kind: 'merchantNotConfigured', feature });
}

/**
 * Whether the entity takes a card with these brands: any one of them allowed is enough (a
 * co-badged card may go through either scheme); else paymentInstrumentIsNotSupported.
 */
export function brandRule(entity: EntityConfig, brands: readonly Brand[]): Result<void> {
  const allowed = entity.brands === 'all' || brands.some((b) => (entity.brands as readonly Brand[]).includes(b));
  return allowed ? ok(undefined) : failed({ kind: 'paymentInstrumentNotSupported' });
}

/** Whether the entity takes this ISO 4217 currency; else currencyIsNotSupported. */
export function currencyRule(entity: EntityConfig, currency: string): Result<void> {
  const allowed = entity.currencies === 'all' || entity.currencies.includes(currency);
  return allowed ? ok(undefined) : failed({ kind: 'currencyNotSupported', currency });
}
