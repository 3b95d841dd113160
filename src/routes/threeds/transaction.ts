import * as v from 'valibot';
import { fail, unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { toFieldError } from '../../schemas/field-errors';
import { TRANSACTION_QUERY } from '../../schemas/threeds-requests';
import { retrieveTransaction } from '../../threeds/steps/retrieve-transaction';
import { threeDsDeps } from '../deps-from-request';

/**
 * `GET /verifications/customers/3ds/authentications/{transactionReference}?entity=<entity>`
 * (docs/threeds.md "Retrieve a transaction"): the transaction's state and, once there is one, its
 * final outcome. The reference is percent-encoded in the path (it may hold `/`, `?`, `#`...).
 */
export const transactionEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: false,
  async handle({ merchant, rc, params, apiVersion }) {
    let transactionReference: string | undefined;
    try {
      transactionReference = decodeURIComponent(params.transactionReference ?? '');
    } catch {
      transactionReference = undefined;
    }
    const parsed = v.safeParse(TRANSACTION_QUERY, {
      transactionReference,
      entity: rc.url.searchParams.get('entity') ?? undefined,
    });
    if (!parsed.success) fail({ kind: 'urlContainsInvalidValue', errors: parsed.issues.map(toFieldError) });
    rc.log.entity = parsed.output.entity;
    rc.log.transactionReference = parsed.output.transactionReference;
    const found = unwrap(await retrieveTransaction(threeDsDeps(rc), merchant, parsed.output, apiVersion));
    rc.log.outcome = found.state;
    return { status: 200, body: found.body };
  },
};
