import { FailureError } from '../../failures';
import type { EntityConfig } from '../../merchants/merchant-config';
import type { RequestorBlock } from '../../merchants/requestor';
import { providerMissing, type ThreeDsServer } from '../live/three-ds-server';
import type { ThreeDsDeps } from './step-deps';

/**
 * What a live step needs that `test` does not: the provider and the entity's requestor block.
 * Their absence is this deployment's misconfiguration (the live Worker checks both at start-up;
 * the `test` Worker run with ENVIRONMENT=live may lack them): 503, logged.
 */
export function liveParts(
  deps: ThreeDsDeps,
  entity: EntityConfig,
): { provider: ThreeDsServer; requestor: RequestorBlock } {
  if (!deps.provider) throw providerMissing();
  if (!entity.threeDSRequestor) {
    const what = 'the entity has no threeDSRequestor block for live 3-D Secure';
    throw new FailureError({ kind: 'misconfigured', what }, what);
  }
  return { provider: deps.provider, requestor: entity.threeDSRequestor };
}
