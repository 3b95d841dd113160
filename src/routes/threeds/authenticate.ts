import { unwrap } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { AUTHENTICATE } from '../../threeds/schemas';
import { authenticate as step } from '../../threeds/steps/authenticate';
import { threeDsDeps } from '../context';
import { threeDsCaller } from './caller';

/** `POST /verifications/customers/3ds/authenticate` (CONTRACT.md §6.2). */
export const authenticate: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(AUTHENTICATE, body);
    const caller = threeDsCaller(merchant, request.merchant.entity, request.transactionReference, rc);
    const authenticated = unwrap(await step(threeDsDeps(rc), caller, request));
    rc.log.card = authenticated.card;
    rc.log.scenario = authenticated.scenario;
    rc.log.outcome = String(authenticated.answer.outcome);
    return { status: 200, body: authenticated.answer };
  },
};
