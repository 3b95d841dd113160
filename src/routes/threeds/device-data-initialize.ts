import { unwrap } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { DEVICE_DATA_INITIALIZE } from '../../threeds/schemas';
import { deviceDataInitialize as step } from '../../threeds/steps/device-data-initialize';
import { threeDsDeps } from '../context';
import { threeDsCaller } from './caller';

/** `POST /verifications/customers/3ds/deviceDataInitialize` (CONTRACT.md §6.1). */
export const deviceDataInitialize: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(DEVICE_DATA_INITIALIZE, body);
    const caller = threeDsCaller(merchant, request.merchant.entity, request.transactionReference, rc);
    const initialized = unwrap(await step(threeDsDeps(rc), caller, request));
    rc.log.card = initialized.card;
    if (initialized.conflict) rc.log.note = 'deviceDataInitialize repeated with another body: first answer kept';
    return { status: 200, body: initialized.answer };
  },
};
