import type { EntityConfig, MerchantConfig } from '../config/merchants';
import { fail } from '../http/errors';
import type { RequestContext } from '../http/pipeline';

/**
 * The merchant's entity configuration, or entityIsNotConfigured, also for an entity that belongs
 * to another merchant: the answer never reveals that it exists (CONTRACT.md §2 step 6).
 */
export function entityOf(merchant: MerchantConfig, entity: string, rc: RequestContext): EntityConfig {
  const config = merchant.entities.get(entity);
  if (!config) fail({ kind: 'entityNotConfigured' });
  rc.log.entity = entity;
  return config;
}
