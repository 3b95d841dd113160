import { unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import { deviceDataInitializeSchema } from '../../schemas/threeds-requests-v3';
import { deviceDataInitialize } from '../../threeds/steps/device-data-initialize';
import { threeDsDeps } from '../deps-from-request';

/** `POST /verifications/customers/3ds/deviceDataInitialize` (docs/threeds.md "deviceDataInitialize"). */
export const deviceDataInitializeEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc, apiVersion }) {
    const request = validateBody(deviceDataInitializeSchema(apiVersion), body);
    rc.log.entity = request.merchant.entity;
    rc.log.transactionReference = request.transactionReference;
    if (request.paymentInstrument) rc.log.instrument = request.paymentInstrument.type;
    const initialized = unwrap(await deviceDataInitialize(threeDsDeps(rc), merchant, request));
    rc.log.card = initialized.card;
    if (initialized.conflict) rc.log.note = 'deviceDataInitialize repeated with another body: first answer kept';
    if (initialized.prepared) rc.log.prepared = initialized.prepared;
    return { status: 200, body: initialized.answer };
  },
};
