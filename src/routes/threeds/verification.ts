import { unwrap } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { VERIFICATION } from '../../threeds/schemas';
import { verification as step } from '../../threeds/steps/verification';
import { threeDsDeps } from '../context';
import { threeDsCaller } from './caller';

/** `POST /verifications/customers/3ds/verification` (CONTRACT.md §6.3). */
export const verification: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(VERIFICATION, body);
    const caller = threeDsCaller(merchant, request.merchant.entity, request.transactionReference, rc);
    const verified = unwrap(await step(threeDsDeps(rc), caller, request));
    rc.log.outcome = verified.outcome;
    return { status: 200, body: verified.answer };
  },
};
