import { failed, ok, type Result } from '../../failures';
import type { ApiVersion } from '../../media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import { isoSeconds } from '../../tokens/token-resource';
import { THREEDS_PATH } from '../api-paths';
import { transactionOutcome, type TransactionState } from '../transaction-outcome';
import { threeDsCaller, type ThreeDsDeps } from './step-deps';

/**
 * GET of a 3DS transaction (docs/threeds.md "Retrieve a transaction"): what it is now, from the
 * transaction's object, without changing it and without calling the 3DS Server provider. The
 * state and outcome are derived as the transaction's event derives them (transaction-outcome.ts);
 * an open challenge stays open here (`verification` would end it as not completed).
 */

interface RetrievedTransaction {
  body: Record<string, unknown>;
  state: TransactionState;
}

export async function retrieveTransaction(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  query: { entity: string; transactionReference: string },
  version: ApiVersion = 1,
): Promise<Result<RetrievedTransaction>> {
  const called = threeDsCaller(merchant, query.entity, query.transactionReference);
  if (!called.ok) return called;
  const facts = await deps.transactionFor(called.value.scope).owner.transaction(deps.now);
  // Another merchant's, another entity's and an unknown reference all look the same.
  if (!facts) return failed({ kind: 'resourceNotFound' });
  const { state, result } = await transactionOutcome(deps, facts, query.transactionReference, version);
  const href = `${deps.baseUrl}${THREEDS_PATH}/authentications/${encodeURIComponent(query.transactionReference)}`;
  return ok({
    state,
    body: {
      transactionReference: query.transactionReference,
      merchant: { entity: query.entity },
      state,
      createdAt: isoSeconds(facts.createdAt),
      updatedAt: isoSeconds(facts.updatedAt),
      ...(result ? { result } : {}),
      _links: { '3ds:transaction': { href: `${href}?entity=${encodeURIComponent(query.entity)}` } },
    },
  });
}
