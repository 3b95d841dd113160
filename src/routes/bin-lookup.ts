import { BIN_INDEX } from '../bin/default-index';
import { lookupPrefix } from '../bin/prefix-lookup';
import { brandAllowed } from '../config/merchants';
import { fail } from '../http/errors';
import { CARD_BIN_API } from '../http/headers';
import type { Endpoint } from '../http/pipeline';
import { validateBody } from '../http/validation';
import { BIN_LOOKUP } from '../schemas/card-bin';
import { entityOf } from './context';

/**
 * `POST /api/cardBin/binLookup`, an extension of Worldpay's Card BIN API for the checkout page:
 * `{ merchant: {entity}, bin: "6 to 8 digits" }` in, panLookup's answer shape out, with only what
 * every card under the prefix shares (src/bin/prefix-lookup.ts). A prefix is not a card number,
 * so any entity may call it (no PCI compliance needed), and a publishable key may, from a page
 * of a listed origin (src/http/publishable.ts).
 */

export const binLookup: Endpoint = {
  api: CARD_BIN_API,
  hasBody: true,
  publishable: true,
  handle({ merchant, body, rc }) {
    const request = validateBody(BIN_LOOKUP, body);
    const entity = entityOf(merchant, request.merchant.entity, rc);
    // Six digits at most in the log: the masking rule for card numbers, applied to prefixes too.
    rc.log.bin = request.bin.slice(0, 6);
    const answer = lookupPrefix(BIN_INDEX, request.bin);
    if (!answer) fail({ kind: 'binNotFound' });
    if (answer.brand !== undefined && !brandAllowed(entity, answer.brand)) {
      fail({ kind: 'paymentInstrumentNotSupported' });
    }
    return Promise.resolve({ status: 200, body: answer });
  },
};
