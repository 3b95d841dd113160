import * as v from 'valibot';
import { TOKEN_ID } from '../cards/token-card';
import { parseReference } from '../tokens/token-ids';
import { fail, failed, unwrap } from '../failures';
import { TOKENS_API } from '../http/api-headers';
import type { Endpoint, EndpointCall } from '../http/endpoint';
import { validateBody } from '../http/validation';
import { toFieldError } from '../schemas/field-errors';
import { CREATE_TOKEN, TOKEN_QUERY, TOKEN_UPDATES } from '../schemas/token-requests';
import { queryTokens } from '../tokens/token-namespaces';
import { conflictResource, tokenResource } from '../tokens/token-resource';
import { UPDATE_PATHS } from '../tokens/update-paths';
import {
  acceptConflict,
  createToken,
  deleteToken,
  getToken,
  readConflict,
  tokenExpiryErrors,
  updateToken,
} from '../tokens/token-steps';
import type { TokenChange } from '../tokens/token-updates';
import { createFailureFor } from '../tokens/token-versions';
import { publicBaseUrl, tokenDeps } from './deps-from-request';

/**
 * The token resource (docs/tokens.md): `POST /tokens`, `GET /tokens?namespace=…`,
 * `GET /tokens/{id}`, `DELETE /tokens/{id}`, a `PUT` on each updatable attribute, and the
 * conflicts of a second tokenization (`GET` and `PUT` on the `tokens:conflicts` link).
 */

/** A token's href: the token resource's path, then the token's reference (src/tokens/token-ids.ts). */
const hrefOf = (call: EndpointCall, reference: string): string => `${publicBaseUrl(call.rc)}/tokens/${reference}`;
const conflictHref = (call: EndpointCall, reference: string, conflictId: string): string =>
  `${hrefOf(call, reference)}/conflicts/${conflictId}`;

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
    const href = hrefOf(call, created.reference);
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
              href: conflictHref(call, created.reference, conflict.id),
              expiresAt: conflict.expiresAt,
            },
          )
        : resource,
    };
  },
};

/** The token's reference from the path (its href's last segment), or 400 urlContainsInvalidValue. */
function tokenIdParam(call: EndpointCall): string {
  const reference = call.params.tokenId ?? '';
  if (!TOKEN_ID.test(reference)) {
    fail({
      kind: 'urlContainsInvalidValue',
      errors: [{ errorName: 'fieldHasInvalidValue', message: 'Not a token id.', jsonPath: '$.tokenId' }],
    });
  }
  // The log names the token by its id, as the answers do.
  call.rc.log.token = parseReference(reference)?.tokenId ?? reference;
  return reference;
}

export const getTokenEndpoint: Endpoint = {
  api: TOKENS_API,
  hasBody: false,
  async handle(call) {
    const reference = tokenIdParam(call);
    const { token, card } = unwrap(await getToken(tokenDeps(call.rc), call.merchant.username, reference));
    return { status: 200, body: tokenResource(token, card, hrefOf(call, reference)) };
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
          tokens: answers.map(({ token, card, reference }) => tokenResource(token, card, hrefOf(call, reference))),
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
      const value = validateBody(TOKEN_UPDATES[attribute], call.value) as Extract<
        TokenChange,
        { attribute: A }
      >['value'];
      const reference = tokenIdParam(call);
      call.rc.log.update = attribute;
      const change = { attribute, value } as TokenChange;
      unwrap(await updateToken(tokenDeps(call.rc), call.merchant.username, reference, change));
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
    const reference = tokenIdParam(call);
    const conflictId = call.params.conflictId ?? '';
    const conflict = await readConflict(tokenDeps(call.rc), call.merchant.username, reference, conflictId);
    if (!conflict) fail({ kind: 'resourceNotFound' });
    const { token, card } = conflict;
    const resource = tokenResource(token, card, hrefOf(call, reference));
    return {
      status: 200,
      body: conflictResource(resource, conflict.conflicts, {
        href: conflictHref(call, reference, conflictId),
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
    const reference = tokenIdParam(call);
    call.rc.log.update = 'conflicts';
    unwrap(await acceptConflict(tokenDeps(call.rc), call.merchant.username, reference, call.params.conflictId ?? ''));
    return { status: 204 };
  },
};
