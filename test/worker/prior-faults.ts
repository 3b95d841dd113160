import { objectClient } from '../../src/storage/object-client';
import type { ThreeDsTransactionApi } from '../../src/threeds/transaction-api';
import { priorLinks } from '../../src/threeds/transaction/three-ri-run';

/**
 * Faults of the calls a 3RI's object makes itself on its prior's object (`priorLinks`, the seam
 * of src/threeds/transaction/three-ri-run.ts): the count of a use, and its release.
 */

const DEFAULT_PRIOR = { ...priorLinks };

/** The real prior link again (each test file calls it after each test). */
export function restorePrior(): void {
  Object.assign(priorLinks, DEFAULT_PRIOR);
}

/**
 * Fails the 3RI object's calls of `method` on the prior's object: `before` (never reaches it),
 * `after` (reaches it, the answer is lost), `hang` (no answer: the call's 1 s deadline ends it),
 * `late` (it lands, and its answer comes after that deadline).
 */
export function failPrior(method: 'seriesUse' | 'seriesRelease', when: 'before' | 'after' | 'hang' | 'late'): void {
  priorLinks.prior = (e, scope) => {
    const real = DEFAULT_PRIOR.prior(e, scope);
    const stub = new Proxy(real, {
      get(target, property, receiver) {
        if (property !== method) return Reflect.get(target, property, receiver);
        const call = (...args: unknown[]) =>
          (Reflect.get(target, property, receiver) as (...a: unknown[]) => Promise<unknown>)(...args);
        return async (...args: unknown[]) => {
          if (when === 'before') throw new Error('unreachable');
          if (when === 'hang') return new Promise(() => {});
          const answer = await call(...args);
          if (when === 'after') throw new Error('the answer was lost');
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          return answer;
        };
      },
    });
    // The real client's deadline around the failing stub (a hang or a late answer ends at it).
    return objectClient<ThreeDsTransactionApi>(() => stub, 'ThreeDsTransaction', 1_000);
  };
}
