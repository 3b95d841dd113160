import type * as v from 'valibot';
import { unwrap, type Result } from '../../failures';
import { THREE_DS_API } from '../../http/api-headers';
import type { Endpoint } from '../../http/endpoint';
import { validateBody } from '../../http/validation';
import type { ApiVersion } from '../../media-types';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { Authenticated, ThreeDsDeps } from '../../threeds/steps/step-deps';
import { threeDsDeps } from '../deps-from-request';

/** A request of a step that authenticates a card: what its log line names. */
interface AuthenticatingRequest {
  transactionReference: string;
  merchant: { entity: string };
  instruction: { paymentInstrument: { type: string } };
}

/**
 * The endpoint of a step that authenticates a card (`authenticate`, `merchantInitiated`): the body
 * validated by the version's schema, the step run, and the log line naming the entity, the
 * transaction, the instrument, the masked card, the scenario and the outcome.
 */
export function authenticatingEndpoint<S extends v.GenericSchema<unknown, AuthenticatingRequest>>(
  schemaOf: (version: ApiVersion) => S,
  step: (
    deps: ThreeDsDeps,
    merchant: MerchantConfig,
    request: v.InferOutput<S>,
    version: ApiVersion,
  ) => Promise<Result<Authenticated>>,
): Endpoint {
  return {
    api: THREE_DS_API,
    hasBody: true,
    async handle({ merchant, body, rc, apiVersion }) {
      const request = validateBody(schemaOf(apiVersion), body);
      rc.log.entity = request.merchant.entity;
      rc.log.transactionReference = request.transactionReference;
      rc.log.instrument = request.instruction.paymentInstrument.type;
      const authenticated = unwrap(await step(threeDsDeps(rc), merchant, request, apiVersion));
      rc.log.card = authenticated.card;
      rc.log.scenario = authenticated.scenario;
      rc.log.outcome = String(authenticated.answer.outcome);
      return { status: 200, body: authenticated.answer };
    },
  };
}
