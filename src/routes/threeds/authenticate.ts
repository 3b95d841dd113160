import { unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import { AUTHENTICATE } from '../../schemas/threeds-requests';
import { authenticate } from '../../threeds/steps/authenticate';
import { threeDsDeps } from '../deps-from-request';

/** `POST /verifications/customers/3ds/authenticate` (docs/threeds.md "authenticate"). */
export const authenticateEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc, apiVersion }) {
    const request = validateBody(AUTHENTICATE, body);
    rc.log.entity = request.merchant.entity;
    rc.log.transactionReference = request.transactionReference;
    const authenticated = unwrap(await authenticate(threeDsDeps(rc), merchant, request, apiVersion));
    rc.log.card = authenticated.card;
    rc.log.scenario = authenticated.scenario;
    rc.log.outcome = String(authenticated.answer.outcome);
    return { status: 200, body: authenticated.answer };
  },
};
