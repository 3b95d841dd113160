import * as v from 'valibot';
import { fail, unwrap } from '../http/errors';
import { TOKENS_API } from '../http/headers';
import type { Endpoint, EndpointCall } from '../http/pipeline';
import { validateBody } from '../http/validation';
import { CARD_EXPIRY_DATE, CARD_HOLDER_NAME, cardNumberSchema, ISO_DATE_TIME, MERCHANT, str } from '../schemas/fields';
import { jsonObject } from '../schemas/rules';
import { TOKEN_ID } from '../tokens/token-card';
import { createToken, deleteToken, getToken, tokenResource } from '../tokens/tokens';
import { entityOf, publicBaseUrl, tokenDeps } from './context';

/** The token resource: `POST /tokens`, `GET /tokens/{id}`, `DELETE /tokens/{id}` (CONTRACT.md §4). */

const CREATE_TOKEN = jsonObject({
  paymentInstrument: jsonObject({
    type: v.literal('card/front'),
    cardNumber: cardNumberSchema(12),
    cardExpiryDate: CARD_EXPIRY_DATE,
    cardHolderName: v.optional(CARD_HOLDER_NAME),
  }),
  merchant: MERCHANT,
  description: v.optional(str(1, 255, 'The description')),
  tokenExpiryDateTime: v.optional(ISO_DATE_TIME),
});

const hrefOf = (call: EndpointCall, tokenId: string): string => `${publicBaseUrl(call.rc)}/tokens/${tokenId}`;

export const createTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: true,
  async handle(call) {
    const { merchant, body, rc } = call;
    const request = validateBody(CREATE_TOKEN, body);
    const entity = entityOf(merchant, request.merchant.entity, rc);
    const {
      paymentInstrument: { type: _type, ...card },
      description,
      tokenExpiryDateTime,
    } = request;
    const created = unwrap(
      await createToken(tokenDeps(rc), merchant.username, entity, {
        paymentInstrument: card,
        description,
        tokenExpiryDateTime,
      }),
    );
    rc.log.card = created.card;
    rc.log.token = created.token.tokenId;
    const href = hrefOf(call, created.token.tokenId);
    return {
      status: created.created ? 201 : 200,
      headers: { Location: href },
      body: tokenResource(created.token, created.cardHolderName, href),
    };
  },
};

/** The token id from the path, or 400 urlContainsInvalidValue. */
function tokenIdParam(call: EndpointCall): string {
  const tokenId = call.params.tokenId ?? '';
  if (!TOKEN_ID.test(tokenId)) {
    fail({
      kind: 'urlContainsInvalidValue',
      errors: [{ errorName: 'fieldHasInvalidValue', message: 'Not a token id.', jsonPath: '$.tokenId' }],
    });
  }
  call.rc.log.token = tokenId;
  return tokenId;
}

export const getTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const tokenId = tokenIdParam(call);
    const { token, cardHolderName } = unwrap(await getToken(tokenDeps(call.rc), call.merchant.username, tokenId));
    return { status: 200, body: tokenResource(token, cardHolderName, hrefOf(call, tokenId)) };
  },
};

export const deleteTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    unwrap(await deleteToken(tokenDeps(call.rc), call.merchant.username, tokenIdParam(call)));
    return { status: 204 };
  },
};
