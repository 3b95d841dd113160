import { TOKEN_ID } from '../cards/token-card';
import { fail, unwrap } from '../failures';
import { TOKENS_API } from '../http/api-headers';
import type { Endpoint, EndpointCall } from '../http/endpoint';
import { validateBody } from '../http/validation';
import { CREATE_TOKEN } from '../schemas/token-requests';
import { tokenResource } from '../tokens/token-resource';
import { createToken, deleteToken, getToken, tokenExpiryErrors } from '../tokens/token-steps';
import { publicBaseUrl, tokenDeps } from './deps-from-request';

/** The token resource: `POST /tokens`, `GET /tokens/{id}`, `DELETE /tokens/{id}` (docs/tokens.md). */

const hrefOf = (call: EndpointCall, tokenId: string): string => `${publicBaseUrl(call.rc)}/tokens/${tokenId}`;

const STATUS = { created: 201, existing: 200, conflict: 409 } as const;

export const createTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: true,
  async handle(call) {
    const { merchant, body, rc } = call;
    const request = validateBody(CREATE_TOKEN, body, (input) => tokenExpiryErrors(input, Date.now()));
    rc.log.entity = request.merchant.entity;
    const { type: _type, ...card } = request.paymentInstrument;
    const created = unwrap(
      await createToken(tokenDeps(rc), merchant, request.merchant.entity, { ...request, paymentInstrument: card }),
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
