import { unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import { MERCHANT_INITIATED } from '../../schemas/threeds-requests';
import { merchantInitiated } from '../../threeds/steps/merchant-initiated';
import { threeDsDeps } from '../deps-from-request';

/** `POST /verifications/customers/3ds/merchantInitiated` (docs/threeds.md "Series and 3RI"). */
export const merchantInitiatedEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc, apiVersion }) {
    const request = validateBody(MERCHANT_INITIATED, body);
    rc.log.entity = request.merchant.entity;
    rc.log.transactionReference = request.transactionReference;
    rc.log.instrument = request.instruction.paymentInstrument.type;
    const authenticated = unwrap(await merchantInitiated(threeDsDeps(rc), merchant, request, apiVersion));
    rc.log.card = authenticated.card;
    rc.log.scenario = authenticated.scenario;
    rc.log.outcome = String(authenticated.answer.outcome);
    return { status: 200, body: authenticated.answer };
  },
};
