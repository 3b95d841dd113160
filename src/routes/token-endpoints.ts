import * as v from 'valibot';
import { findToken, TOKEN_ID } from '../cards/token-card';
import { fail, failed, unwrap } from '../failures';
import { TOKENS_API } from '../http/api-headers';
import type { Endpoint, EndpointCall } from '../http/endpoint';
import { validateBody } from '../http/validation';
import { toFieldError } from '../schemas/field-errors';
import { CREATE_TOKEN, TOKEN_QUERY, TOKEN_UPDATES } from '../schemas/token-requests';
import type { TokenRecord } from '../storage/token-store';
import { queryTokens } from '../tokens/token-namespaces';
import { conflictResource, tokenResource } from '../tokens/token-resource';
import { UPDATE_PATHS } from '../tokens/update-paths';
import {
  createToken,
  deleteToken,
  getToken,
  tokenAnswer,
  tokenExpiryErrors,
  type TokenDeps,
} from '../tokens/token-steps';
import { acceptConflict, extendIfDue, readConflict, updateToken, type TokenChange } from '../tokens/token-updates';
import { createFailureFor } from '../tokens/token-versions';
import { publicBaseUrl, tokenDeps } from './deps-from-request';

/**
 * The token resource (docs/tokens.md): `POST /tokens`, `GET /tokens?namespace=…`,
 * `GET /tokens/{id}`, `DELETE /tokens/{id}`, a `PUT` on each updatable attribute, and the
 * conflicts of a second tokenization (`GET` and `PUT` on the `tokens:conflicts` link).
 */

const hrefOf = (call: EndpointCall, tokenId: string): string => `${publicBaseUrl(call.rc)}/tokens/${tokenId}`;
const conflictHref = (call: EndpointCall, tokenId: string, conflictId: string): string =>
  `${hrefOf(call, tokenId)}/conflicts/${conflictId}`;

const STATUS = { created: 201, existing: 200, conflict: 409 } as const;

export const createTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: true,
  async handle(call) {
    const { merchant, body, rc, apiVersion } = call;
    const request = validateBody(CREATE_TOKEN, body, (input) => tokenExpiryErrors(input, Date.now()));
    rc.log.entity = request.merchant.entity;
    const { type: _type, ...card } = request.paymentInstrument;
    const result = await createToken(tokenDeps(rc), merchant, request.merchant.entity, {
      ...request,
      paymentInstrument: card,
    });
    const created = unwrap(result.ok ? result : failed(createFailureFor(result.failure, apiVersion)));
    rc.log.card = created.masked;
    rc.log.token = created.token.tokenId;
    const href = hrefOf(call, created.token.tokenId);
    const resource = tokenResource(created.token, created.card, href);
    const conflict = created.conflict;
    return {
      status: STATUS[created.status],
      headers: { Location: href },
      body: created.conflicts
        ? conflictResource(
            resource,
            created.conflicts,
            conflict && {
              href: conflictHref(call, created.token.tokenId, conflict.id),
              expiresAt: conflict.expiresAt,
            },
          )
        : resource,
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

/** The merchant's live token named in the path, or 404 resourceNotFound. */
async function pathToken(call: EndpointCall, deps: TokenDeps): Promise<TokenRecord> {
  const record = await findToken(deps.tokens, call.merchant.username, tokenIdParam(call), deps.now);
  if (!record) fail({ kind: 'resourceNotFound' });
  return record;
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

/** `GET /tokens?namespace=…&tokenId=…`: `{_embedded: {tokens: [...]}}`. */
export const queryTokensEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const params = Object.fromEntries(call.rc.url.searchParams);
    const parsed = v.safeParse(TOKEN_QUERY, params, { abortPipeEarly: true });
    if (!parsed.success) fail({ kind: 'urlContainsInvalidValue', errors: parsed.issues.map(toFieldError) });
    if (parsed.output.namespace !== undefined) call.rc.log.namespace = parsed.output.namespace;
    const answers = unwrap(await queryTokens(tokenDeps(call.rc), call.merchant.username, parsed.output));
    return {
      status: 200,
      body: {
        _embedded: {
          tokens: answers.map(({ token, card }) => tokenResource(token, card, hrefOf(call, token.tokenId))),
        },
      },
    };
  },
};

/** `PUT /tokens/{id}/<attribute>`: one attribute, validated as on creation; 204. */
function updateEndpoint<A extends TokenChange['attribute']>(attribute: A): Endpoint {
  return {
    api: TOKENS_API,
    hasBody: 'value',
    async handle(call) {
      const deps = tokenDeps(call.rc);
      const value = validateBody(TOKEN_UPDATES[attribute], call.value) as Extract<
        TokenChange,
        { attribute: A }
      >['value'];
      const record = await pathToken(call, deps);
      call.rc.log.update = attribute;
      unwrap(await updateToken(deps, record, { attribute, value } as TokenChange));
      return { status: 204 };
    },
  };
}

/** Each updatable attribute's route under `/tokens/:tokenId/`. */
export const TOKEN_UPDATE_ROUTES = (Object.keys(UPDATE_PATHS) as (keyof typeof UPDATE_PATHS)[]).map((attribute) => ({
  path: `/tokens/:tokenId/${UPDATE_PATHS[attribute]}`,
  endpoint: updateEndpoint(attribute),
}));

/** `GET` on `tokens:conflicts`: the token as it stands, with the conflicting details; 404 once expired or used. */
export const getConflictsEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const deps = tokenDeps(call.rc);
    const found = await pathToken(call, deps);
    const conflictId = call.params.conflictId ?? '';
    const conflict = await readConflict(deps, found, conflictId);
    if (!conflict || conflict.used) fail({ kind: 'resourceNotFound' });
    const { token, card } = await tokenAnswer(await deps.tokenKeys(), await extendIfDue(deps, found));
    const resource = tokenResource(token, card, hrefOf(call, token.tokenId));
    return {
      status: 200,
      body: conflictResource(resource, conflict.conflicts, {
        href: conflictHref(call, token.tokenId, conflictId),
        expiresAt: conflict.expiresAt,
      }),
    };
  },
};

/** `PUT` on `tokens:conflicts`: the token takes every conflicting value; 204. Any body is ignored. */
export const acceptConflictsEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const deps = tokenDeps(call.rc);
    const record = await pathToken(call, deps);
    call.rc.log.update = 'conflicts';
    unwrap(await acceptConflict(deps, record, call.params.conflictId ?? ''));
    return { status: 204 };
  },
};
