import { tokenIdFromHref, foreignHrefError } from '../cards/token-card';
import { lookupCard } from '../cards/card-bin-lookups';
import { unwrap, type FieldError } from '../failures';
import { CARD_BIN_API } from '../http/api-headers';
import type { Endpoint } from '../http/endpoint';
import { validateBody } from '../http/validation';
import { PAN_LOOKUP } from '../schemas/card-bin-requests';
import { cardDeps } from './deps-from-request';

/** `POST /api/cardBin/panLookup` (docs/card-bin.md "panLookup"). */

/** Exactly one of cardNumber and token. */
function oneCardIdentifier(input: unknown): FieldError[] {
  if (typeof input !== 'object' || input === null) return [];
  const has = (k: string): boolean => k in input;
  if (has('cardNumber') && has('token')) {
    return [
      { errorName: 'fieldIsNotAllowed', message: 'Send either cardNumber or token, not both.', jsonPath: '$.token' },
    ];
  }
  if (!has('cardNumber') && !has('token')) {
    return [{ errorName: 'fieldIsMissing', message: 'Send cardNumber or token.', jsonPath: '$.cardNumber' }];
  }
  return [];
}

/** A token must be an href of this service's token resource, checked with the schema. */
function tokenIsOurs(input: unknown, baseUrl: string): FieldError[] {
  if (typeof input !== 'object' || input === null || !('token' in input)) return [];
  const { token } = input;
  const foreign = typeof token === 'string' && token !== '' && tokenIdFromHref(token, baseUrl) === undefined;
  return foreign ? [foreignHrefError(baseUrl, '$.token')] : [];
}

export const panLookupEndpoint: Endpoint = {
  api: CARD_BIN_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const deps = cardDeps(rc);
    const request = validateBody(PAN_LOOKUP, body, (input) => [
      ...oneCardIdentifier(input),
      ...tokenIsOurs(input, deps.baseUrl),
    ]);
    rc.log.entity = request.merchant.entity;
    const input = request.token !== undefined ? { token: request.token } : { cardNumber: request.cardNumber! };
    const { answer, card } = unwrap(await lookupCard(deps, merchant, request.merchant.entity, input));
    rc.log.card = card.masked;
    if (card.tokenId) rc.log.token = card.tokenId;
    rc.log.binSource = card.match!.source;
    return { status: 200, body: answer };
  },
};
