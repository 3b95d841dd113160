import { lookupBin } from '../cards/card-bin-lookups';
import { unwrap } from '../failures';
import { CARD_BIN_API } from '../http/api-headers';
import type { Endpoint } from '../http/endpoint';
import { validateBody } from '../http/validation';
import { BIN_LOOKUP } from '../schemas/card-bin-requests';

/**
 * `POST /api/cardBin/binLookup` (docs/card-bin.md "binLookup"), an extension of Worldpay's Card
 * BIN API for the checkout page: `{ merchant: {entity}, bin: "6 to 8 digits" }` in, panLookup's
 * answer shape out, with only what every card under the prefix shares. A publishable key may
 * call it, from a page of a listed origin (src/http/publishable-keys.ts).
 */
export const binLookupEndpoint: Endpoint = {
  api: CARD_BIN_API,
  hasBody: true,
  publishable: true,
  handle({ merchant, body, rc }) {
    const request = validateBody(BIN_LOOKUP, body);
    rc.log.entity = request.merchant.entity;
    // Six digits at most in the log: the masking rule for card numbers, applied to prefixes too.
    rc.log.bin = request.bin.slice(0, 6);
    const answer = unwrap(lookupBin(rc.services.binIndex, merchant, request.merchant.entity, request.bin));
    return Promise.resolve({ status: 200, body: answer });
  },
};
