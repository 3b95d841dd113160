import * as v from 'valibot';
import { toCardBinData } from '../bin/card-bin-data';
import { BIN_INDEX } from '../bin/default-index';
import { brandAllowed } from '../config/merchants';
import { fail, type FieldError } from '../http/errors';
import { CARD_BIN_API } from '../http/headers';
import { maskPan } from '../http/log';
import type { Endpoint } from '../http/pipeline';
import { cardNumberSchema } from '../http/fields';
import { jsonObject, validateBody } from '../http/validation';
import { entityOf } from './entity';
import { foreignTokenHref, publicBaseUrl } from './links';
import { cardBehindToken } from './token-access';

/** `POST /api/cardBin/panLookup` (CONTRACT.md §3). */

const ENTITY_ID = v.pipe(
  v.string(),
  v.minLength(1, 'The entity must not be empty.'),
  v.maxLength(64, 'The entity must be at most 64 characters.'),
  v.regex(/^[A-Za-z0-9]*$/, 'The entity may contain only letters and digits.'),
);

const CARD_NUMBER = cardNumberSchema(12);

const PAN_LOOKUP = jsonObject({
  merchant: jsonObject({ entity: ENTITY_ID }),
  cardNumber: v.optional(CARD_NUMBER),
  token: v.optional(v.pipe(v.string(), v.minLength(1, 'The token must not be empty.'))),
});

/** Exactly one of cardNumber and token (CONTRACT.md §3). */
function oneCardIdentifier(input: unknown): FieldError[] {
  if (typeof input !== 'object' || input === null) return [];
  const has = (k: string): boolean => k in input;
  if (has('cardNumber') && has('token')) {
    return [{ errorName: 'fieldIsNotAllowed', message: 'Send either cardNumber or token, not both.', jsonPath: '$.token' }];
  }
  if (!has('cardNumber') && !has('token')) {
    return [{ errorName: 'fieldIsMissing', message: 'Send cardNumber or token.', jsonPath: '$.cardNumber' }];
  }
  return [];
}

/** A token must be an href of this service's token resource: `{base_url}/tokens/<id>`. */
function tokenIsOurs(input: unknown, baseUrl: string): FieldError[] {
  if (typeof input !== 'object' || input === null || !('token' in input)) return [];
  const token = input.token;
  if (typeof token !== 'string' || token === '') return [];
  const error = foreignTokenHref(token, baseUrl, '$.token');
  return error ? [error] : [];
}

export const panLookup: Endpoint = {
  api: CARD_BIN_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const baseUrl = publicBaseUrl(rc);
    const request = validateBody(PAN_LOOKUP, body, (input) => [
      ...oneCardIdentifier(input), ...tokenIsOurs(input, baseUrl),
    ]);
    const entity = entityOf(merchant, request.merchant.entity, rc);
    let cardNumber: string;
    if (request.token !== undefined) {
      // By token, any entity may look up: the merchant never handles the card number.
      cardNumber = (await cardBehindToken(rc, merchant, request.token, baseUrl)).cardNumber;
    } else {
      cardNumber = request.cardNumber!;
      rc.log.card = maskPan(cardNumber);
      if (!entity.pciCompliant) fail({ kind: 'merchantNotConfigured', feature: 'lookups by full card number' });
    }
    const match = BIN_INDEX.find(cardNumber);
    if (!match) fail({ kind: 'binNotFound' });
    if (!brandAllowed(entity, match.record.brands)) fail({ kind: 'paymentInstrumentNotSupported' });
    rc.log.binSource = match.source;
    return { status: 200, body: toCardBinData(cardNumber, match) };
  },
};
