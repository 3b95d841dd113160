import * as v from 'valibot';
import { unwrap } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { MERCHANT } from '../../schemas/fields';
import { jsonObject } from '../../schemas/rules';
import { TRANSACTION_REFERENCE, VERIFICATION } from '../../threeds/schemas';
import { completeChallenge as step } from '../../threeds/steps/sandbox';
import { threeDsDeps } from '../context';
import { threeDsCaller } from './caller';

/**
 * `POST /verifications/customers/3ds/sandbox/completeChallenge` (`test` only; 403
 * sandboxIsNotEnabled in `live`): completes a pending challenge as passed, failed, cancelled or
 * timed out, without a browser, for a merchant's CI.
 */
export const COMPLETE_CHALLENGE = jsonObject({
  transactionReference: TRANSACTION_REFERENCE,
  merchant: MERCHANT,
  challenge: VERIFICATION.pipe[1].entries.challenge,
  result: v.picklist(
    ['passed', 'failed', 'cancelled', 'timedOut'],
    'The result is passed, failed, cancelled or timedOut.',
  ),
});

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
