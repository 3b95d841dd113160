import { unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import { authenticateSchema } from '../../schemas/threeds-requests-v3';
import { authenticate } from '../../threeds/steps/authenticate';
import { threeDsDeps } from '../deps-from-request';

/** `POST /verifications/customers/3ds/authenticate` (docs/threeds.md "authenticate"). */
export const authenticateEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc, apiVersion }) {
    const request = validateBody(authenticateSchema(apiVersion), body);
    rc.log.entity = request.merchant.entity;
    rc.log.transactionReference = request.transactionReference;
    rc.log.instrument = request.instruction.paymentInstrument.type;
    const authenticated = unwrap(await authenticate(threeDsDeps(rc), merchant, request, apiVersion));
    rc.log.card = authenticated.card;
    rc.log.scenario = authenticated.scenario;
    rc.log.outcome = String(authenticated.answer.outcome);
    return { status: 200, body: authenticated.answer };
  },
};
