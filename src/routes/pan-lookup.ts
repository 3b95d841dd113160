import { toCardBinData } from '../bin/card-bin-data';
import { resolveCard } from '../cards/resolve-card';
import type { FieldError } from '../failures';
import { unwrap } from '../http/errors';
import { CARD_BIN_API } from '../http/headers';
import type { Endpoint } from '../http/pipeline';
import { validateBody } from '../http/validation';
import { PAN_LOOKUP } from '../schemas/card-bin';
import { foreignHrefError, tokenIdFromHref } from '../tokens/token-card';
import { cardContext, entityOf } from './context';

/** `POST /api/cardBin/panLookup` (CONTRACT.md §3). */

/** Exactly one of cardNumber and token (CONTRACT.md §3). */
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

export const panLookup: Endpoint = {
  api: CARD_BIN_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const cards = cardContext(rc, Date.now());
    const request = validateBody(PAN_LOOKUP, body, (input) => [
      ...oneCardIdentifier(input),
      ...tokenIsOurs(input, cards.baseUrl),
    ]);
    const entity = entityOf(merchant, request.merchant.entity, rc);
    // By token, any entity may look up: the merchant never handles the card number.
    const input =
      request.token !== undefined
        ? { type: 'card/tokenized' as const, href: request.token }
        : { type: 'card/front' as const, cardNumber: request.cardNumber! };
    const card = unwrap(
      await resolveCard({ ...cards, username: merchant.username, entity }, input, {
        hrefPath: '$.token',
        pciFeature: 'lookups by full card number',
        requireMatch: true,
      }),
    );
    rc.log.card = card.masked;
    if (card.tokenId) rc.log.token = card.tokenId;
    rc.log.binSource = card.match!.source;
    return { status: 200, body: toCardBinData(card.cardNumber, card.match!) };
  },
};
