import { unwrap } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { COMPLETE_CHALLENGE } from '../../threeds/schemas';
import { completeChallenge as step } from '../../threeds/steps/sandbox';
import { threeDsDeps } from '../context';
import { threeDsCaller } from './caller';

/**
 * `POST /verifications/customers/3ds/sandbox/completeChallenge` (`test` only; 403
 * sandboxIsNotEnabled in `live`): completes a pending challenge without a browser.
 */
export const completeChallenge: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(COMPLETE_CHALLENGE, body);
    const caller = threeDsCaller(merchant, request.merchant.entity, request.transactionReference, rc);
    const answer = unwrap(await step(threeDsDeps(rc), caller, request));
    rc.log.sandbox = request.result;
    return { status: 200, body: answer };
  },
};
