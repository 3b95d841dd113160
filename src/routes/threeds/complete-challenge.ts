import { unwrap } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import { COMPLETE_CHALLENGE } from '../../schemas/threeds-requests';
import { completeChallenge } from '../../threeds/steps/complete-challenge';
import { threeDsDeps } from '../deps-from-request';

/**
 * `POST /verifications/customers/3ds/sandbox/completeChallenge` (`test` only; 403
 * sandboxIsNotEnabled in `live`): completes a pending challenge without a browser
 * (docs/threeds.md "Sandbox controls").
 */
export const completeChallengeEndpoint: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(COMPLETE_CHALLENGE, body);
    rc.log.entity = request.merchant.entity;
    rc.log.transactionReference = request.transactionReference;
    const answer = unwrap(await completeChallenge(threeDsDeps(rc), merchant, request));
    rc.log.sandbox = request.result;
    return { status: 200, body: answer };
  },
};
