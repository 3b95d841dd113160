import { unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import { VERIFICATION } from '../../schemas/threeds-requests';
import { verification } from '../../threeds/steps/verification';
import { threeDsDeps } from '../deps-from-request';

/** `POST /verifications/customers/3ds/verification` (docs/threeds.md "verification"). */
export const verificationEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc, apiVersion }) {
    const request = validateBody(VERIFICATION, body);
    rc.log.entity = request.merchant.entity;
    rc.log.transactionReference = request.transactionReference;
    const verified = unwrap(await verification(threeDsDeps(rc), merchant, request, apiVersion));
    rc.log.outcome = verified.outcome;
    return { status: 200, body: verified.answer };
  },
};
