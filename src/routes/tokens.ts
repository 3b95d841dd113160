import * as v from 'valibot';
import { fail, unwrap } from '../http/errors';
import { TOKENS_API } from '../http/headers';
import type { Endpoint, EndpointCall } from '../http/pipeline';
import { validateBody } from '../http/validation';
import { CARD_EXPIRY_DATE, CARD_HOLDER_NAME, cardNumberSchema, ISO_DATE_TIME, MERCHANT, str } from '../schemas/fields';
import { jsonObject } from '../schemas/rules';
import { TOKEN_ID } from '../tokens/token-card';
import { tokenResource } from '../tokens/token-resource';
import { createToken, deleteToken, getToken } from '../tokens/tokens';
import { entityOf, publicBaseUrl, tokenDeps } from './context';

/** The token resource: `POST /tokens`, `GET /tokens/{id}`, `DELETE /tokens/{id}` (CONTRACT.md §4). */

/** A billing address as Worldpay's tokens document has it (its city may be longer than 3DS's). */
const BILLING_ADDRESS = jsonObject({
  address1: str(1, 80, 'The first address line'),
  address2: v.optional(str(0, 80, 'The second address line')),
  address3: v.optional(str(0, 80, 'The third address line')),
  postalCode: str(1, 15, 'The postal code'),
  city: str(1, 50, 'The city'),
  state: v.optional(str(1, 30, 'The state')),
  countryCode: v.pipe(
    str(2, 2, 'The country code'),
    v.regex(/^[A-Z]*$/, 'Country codes are two capital letters (ISO 3166).'),
  ),
});

export const CREATE_TOKEN = jsonObject({
  paymentInstrument: jsonObject({
    type: v.literal('card/front'),
    cardHolderName: v.optional(CARD_HOLDER_NAME),
    cardNumber: cardNumberSchema(10),
    cardExpiryDate: CARD_EXPIRY_DATE,
    billingAddress: v.optional(BILLING_ADDRESS),
  }),
  merchant: MERCHANT,
  description: v.optional(
    v.pipe(str(1, 255, 'The description'), v.regex(/^[^&<]*$/, 'The description may not contain & or <.')),
  ),
  tokenExpiryDateTime: v.optional(ISO_DATE_TIME),
  namespace: v.optional(
    v.pipe(
      str(1, 64, 'The namespace'),
      v.regex(/^[^_\s&<][^\s&<]*$/, 'A namespace has no spaces, & or <, and does not start with _.'),
    ),
  ),
  schemeTransactionReference: v.optional(
    v.pipe(
      str(1, 56, 'The scheme transaction reference'),
      v.regex(/^[a-zA-Z0-9 ]*$/, 'Scheme transaction references are letters, digits and spaces.'),
    ),
  ),
});

const hrefOf = (call: EndpointCall, tokenId: string): string => `${publicBaseUrl(call.rc)}/tokens/${tokenId}`;

const STATUS = { created: 201, existing: 200, conflict: 409 } as const;

export const createTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: true,
  async handle(call) {
    const { merchant, body, rc } = call;
    const request = validateBody(CREATE_TOKEN, body);
    const entity = entityOf(merchant, request.merchant.entity, rc);
    const { type: _type, ...card } = request.paymentInstrument;
    const created = unwrap(
      await createToken(tokenDeps(rc), merchant.username, entity, { ...request, paymentInstrument: card }),
    );
    rc.log.card = created.masked;
    rc.log.token = created.token.tokenId;
    const href = hrefOf(call, created.token.tokenId);
    const resource = tokenResource(created.token, created.card, href);
    return {
      status: STATUS[created.status],
      headers: { Location: href },
      body: created.conflicts ? { ...resource, conflicts: created.conflicts } : resource,
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
    const { token, card } = unwrap(await getToken(tokenDeps(call.rc), call.merchant.username, tokenId));
    return { status: 200, body: tokenResource(token, card, hrefOf(call, tokenId)) };
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
