import type { MerchantConfig } from '../../config/merchants';
import { fail } from '../../http/errors';
import type { RequestContext } from '../../http/pipeline';
import type { Caller } from '../../threeds/steps/deps';
import { entityOf } from '../context';

/**
 * Business rules common to the 3DS steps (CONTRACT.md §2 step 6, §5): the entity must be this
 * merchant's and have 3DS enabled. The session is scoped by merchant, entity and reference.
 */
export function threeDsCaller(
  merchant: MerchantConfig,
  entityId: string,
  transactionReference: string,
  rc: RequestContext,
): Caller {
  const entity = entityOf(merchant, entityId, rc);
  if (!entity.threeDS) fail({ kind: 'merchantNotConfigured', feature: '3-D Secure' });
  rc.log.transactionReference = transactionReference;
  return { entity, scope: { username: merchant.username, entity: entityId, transactionReference } };
}
