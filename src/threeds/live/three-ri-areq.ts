import type { FieldError } from '../../failures';
import type { RequestorBlock } from '../../merchants/requestor';
import { currencyNumeric } from '../../reference-data/iso-codes';
import type { MerchantInitiatedRequest } from '../../schemas/threeds-requests';
import { NON_PAYMENT_TYPES, THREE_RI_TYPES, versionProblem, type SeriesRecord } from '../series-rules';
import {
  acquirerFields,
  cardFields,
  cardholderNameFor,
  emvDateTime,
  seriesFields,
  type AReqCard,
} from './areq-builder';
import type { AuthenticationRequest, EmvVersion } from './emv-messages';

/**
 * The AReq of a 3RI (docs/threeds.md "Series and 3RI", CONTRACT §11): the cardholder is absent,
 * so `deviceChannel` 03 with no browser field, no notification URL and no 3DS Method indicator;
 * the prior's version; `threeRIInd` for the type; `threeDSRequestorPriorAuthenticationInfo`
 * naming the prior authentication (its ACS transaction id, method 02 if it was challenged, its
 * time); the series' terms for a recurring or instalment 3RI; the purchase for a payment
 * (`messageCategory` 01), none for add card, maintain card and account verification (02). Pure.
 */

export interface ThreeRiAReqInput {
  threeDSServerTransID: string;
  now: number;
  request: MerchantInitiatedRequest;
  card: AReqCard;
  requestor: RequestorBlock;
  /** The prior's series, as its object answered the use. */
  series: SeriesRecord;
}

export type ThreeRiAReqResult = { ok: true; areq: AuthenticationRequest } | { ok: false; errors: FieldError[] };

export function buildThreeRiAReq(input: ThreeRiAReqInput): ThreeRiAReqResult {
  const { request, card, requestor, series, now } = input;
  const version = series.version as EmvVersion;
  const errors: FieldError[] = [];
  const need = (jsonPath: string, message: string, errorName = 'fieldIsMissing'): undefined => {
    errors.push({ errorName, message, jsonPath });
    return undefined;
  };
  const threeRIInd = THREE_RI_TYPES[request.type];
  const problem = versionProblem(version, request.type);
  if (problem) errors.push(problem);
  if (series.acsTransactionId === undefined)
    need(
      '$.priorTransactionReference',
      'The prior authentication has no ACS transaction id to name.',
      'fieldHasInvalidValue',
    );
  const cardholderName = cardholderNameFor(version, card, need);
  const payment = !NON_PAYMENT_TYPES.includes(request.type);
  const currency = currencyNumeric(request.instruction.value.currency);
  if (payment && !currency)
    need('$.instruction.value.currency', 'Not an ISO 4217 currency of a payment.', 'fieldHasInvalidValue');
  if (errors.length > 0) return { ok: false, errors };

  const prior = {
    threeDSReqPriorAuthMethod: series.method,
    threeDSReqPriorAuthTimestamp: emvDateTime(series.authenticatedAt).slice(0, 12),
    threeDSReqPriorRef: series.acsTransactionId!,
  };
  const inSeries = request.type === 'recurring' || request.type === 'instalment';
  const areq: AuthenticationRequest = {
    messageType: 'AReq',
    messageVersion: version,
    messageCategory: payment ? '01' : '02',
    deviceChannel: '03',
    threeDSServerTransID: input.threeDSServerTransID,
    threeRIInd,
    threeDSRequestorPriorAuthenticationInfo: version === '2.3.1' ? [prior] : prior,
    threeDSRequestorURL: requestor.threeDSRequestorURL,
    ...acquirerFields(requestor, version, card.brands[0]),
    merchantName: requestor.merchantName,
    ...cardFields(card, cardholderName),
    ...(payment
      ? {
          purchaseAmount: String(request.instruction.value.amount),
          purchaseCurrency: currency!.number,
          purchaseExponent: String(currency!.digits),
          purchaseDate: emvDateTime(now),
        }
      : {}),
    ...(inSeries ? seriesFields(version, series.terms, now) : {}),
  };
  return { ok: true, areq };
}
