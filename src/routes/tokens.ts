import * as v from 'valibot';
import { BIN_INDEX } from '../bin/default-index';
import { brandAllowed } from '../config/merchants';
import { fail } from '../http/errors';
import { CARD_EXPIRY_DATE, CARD_HOLDER_NAME, cardNumberSchema, MERCHANT, str } from '../http/fields';
import { TOKENS_API } from '../http/headers';
import { maskPan } from '../http/log';
import type { Endpoint, EndpointCall } from '../http/pipeline';
import { jsonObject, namedCheck, validateBody } from '../http/validation';
import {
  cardHasExpired, createToken, deleteToken, findToken, MAX_TOKEN_TTL_MS, openCard, tokenResource,
} from '../tokens/tokens';
import { entityOf } from './entity';
import { publicBaseUrl, TOKEN_ID } from './links';
import { tokenContext } from './token-access';

/** The token resource: `POST /tokens`, `GET /tokens/{id}`, `DELETE /tokens/{id}` (CONTRACT.md §4). */

/** ISO 8601 date and time with a zone, and a real calendar date (no 30 February). */
function isIsoDateTime(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const CREATE_TOKEN = jsonObject({
  paymentInstrument: jsonObject({
    type: v.literal('card/front'),
    cardNumber: cardNumberSchema(12),
    cardExpiryDate: CARD_EXPIRY_DATE,
    cardHolderName: v.optional(CARD_HOLDER_NAME),
  }),
  merchant: MERCHANT,
  description: v.optional(str(1, 255, 'The description')),
  tokenExpiryDateTime: v.optional(v.pipe(
    v.string(),
    namedCheck('dateHasInvalidFormat', isIsoDateTime, 'Use an ISO 8601 date and time with a zone, e.g. 2027-01-31T23:59:59Z.'),
  )),
});

const hrefOf = (call: EndpointCall, tokenId: string): string => `${publicBaseUrl(call.rc)}/tokens/${tokenId}`;

export const createTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: true,
  async handle(call) {
    const { merchant, body, rc } = call;
    const request = validateBody(CREATE_TOKEN, body);
    const entity = entityOf(merchant, request.merchant.entity, rc);
    const instrument = request.paymentInstrument;
    rc.log.card = maskPan(instrument.cardNumber);
    if (!entity.pciCompliant) fail({ kind: 'merchantNotConfigured', feature: 'card numbers (tokenize from a PCI-compliant entity)' });
    const ctx = await tokenContext(rc);
    const fieldError = (jsonPath: string, message: string): never =>
      fail({ kind: 'bodyDoesNotMatchSchema', errors: [{ errorName: 'fieldHasInvalidValue', message, jsonPath }] });
    if (cardHasExpired(instrument.cardExpiryDate, ctx.now)) {
      fieldError('$.paymentInstrument.cardExpiryDate', 'The card has expired.');
    }
    const tokenExpiry = request.tokenExpiryDateTime === undefined ? undefined : new Date(request.tokenExpiryDateTime);
    if (tokenExpiry && (tokenExpiry.getTime() <= ctx.now || tokenExpiry.getTime() > ctx.now + MAX_TOKEN_TTL_MS)) {
      fieldError('$.tokenExpiryDateTime', 'The token expiry must be in the future and at most 4 years away.');
    }
    const binRecord = BIN_INDEX.find(instrument.cardNumber)?.record;
    if (!brandAllowed(entity, binRecord?.brands ?? [])) fail({ kind: 'paymentInstrumentNotSupported' });

    const { record, created } = await createToken(ctx, merchant.username, {
      card: { cardNumber: instrument.cardNumber, cardExpiryDate: instrument.cardExpiryDate, cardHolderName: instrument.cardHolderName },
      binRecord, description: request.description, tokenExpiry,
    });
    rc.log.token = record.tokenId;
    const href = hrefOf(call, record.tokenId);
    const cardHolderName = created ? instrument.cardHolderName : (await openCard(ctx, record)).cardHolderName;
    return { status: created ? 201 : 200, headers: { Location: href }, body: tokenResource(record, cardHolderName, href) };
  },
};

/** The token id from the path, or 400 urlContainsInvalidValue. */
function tokenIdParam(call: EndpointCall): string {
  const tokenId = call.params.tokenId ?? '';
  if (!TOKEN_ID.test(tokenId)) {
    fail({ kind: 'urlContainsInvalidValue', errors: [{ errorName: 'fieldHasInvalidValue', message: 'Not a token id.', jsonPath: '$.tokenId' }] });
  }
  call.rc.log.token = tokenId;
  return tokenId;
}

export const getTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const tokenId = tokenIdParam(call);
    const ctx = await tokenContext(call.rc);
    const record = await findToken(ctx, call.merchant.username, tokenId);
    if (!record) fail({ kind: 'tokenNotFound' });
    const { cardHolderName } = await openCard(ctx, record);
    return { status: 200, body: tokenResource(record, cardHolderName, hrefOf(call, tokenId)) };
  },
};

export const deleteTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const tokenId = tokenIdParam(call);
    const ctx = await tokenContext(call.rc);
    if (!(await deleteToken(ctx, call.merchant.username, tokenId))) fail({ kind: 'tokenNotFound' });
    return { status: 204 };
  },
};
