import * as v from 'valibot';
import type { ApiVersion } from '../media-types';
import { asJsonObject, jsonObject } from './field-errors';
import { billingAddress, CARD_EXPIRY_DATE, CARD_HOLDER_NAME, cardNumberSchema } from './fields';
import {
  AUTHENTICATE,
  CARD_FRONT,
  CARD_TOKENIZED,
  DEVICE_DATA_INITIALIZE,
  withReturnUrlRule,
} from './threeds-requests';

/**
 * The request schemas of version 3 of the 3DS API (docs/threeds.md "Versions"): version 1's, with
 * the instrument Worldpay's v3 document adds and the service can honestly authenticate,
 * `card/networkToken`. 3-D Secure runs on a network token number as on a card number (the schemes'
 * Directory Servers take it as the account number), so it has a card number's rules: 10 to 19
 * digits, Luhn-valid. `card/wallet+googlepay` is still refused at `type` (it needs Google Pay's
 * decryption keys: docs/compatibility.md "Google Pay").
 */

/** Worldpay's v3 `card_networktoken`: the token number with its expiry, as a card's. */
export const CARD_NETWORK_TOKEN = v.object({
  type: v.literal('card/networkToken'),
  tokenNumber: cardNumberSchema(10, 'The token number'),
  cardExpiryDate: CARD_EXPIRY_DATE,
  cardHolderName: v.optional(CARD_HOLDER_NAME),
  billingAddress: v.optional(billingAddress(15)),
});

export const PAYMENT_INSTRUMENT_V3 = asJsonObject(v.variant('type', [CARD_FRONT, CARD_TOKENIZED, CARD_NETWORK_TOKEN]));

// Version 1's schemas with the v3 instrument in place of v1's; every other field (and its place in
// the order of field errors) stays version 1's.
const DDC = DEVICE_DATA_INITIALIZE.pipe[1].entries;
export const DEVICE_DATA_INITIALIZE_V3 = jsonObject({ ...DDC, paymentInstrument: v.optional(PAYMENT_INSTRUMENT_V3) });

const AUTH = AUTHENTICATE.pipe[1].entries;
export const AUTHENTICATE_V3 = jsonObject({
  ...AUTH,
  instruction: jsonObject({ ...AUTH.instruction.pipe[1].entries, paymentInstrument: PAYMENT_INSTRUMENT_V3 }),
});

/** Whether a version of the 3DS API takes `card/networkToken`: version 3 only. */
export function takesNetworkTokens(version: ApiVersion): boolean {
  return version >= 3;
}

/** deviceDataInitialize's schema for a version. */
export function deviceDataInitializeSchema(version: ApiVersion) {
  return takesNetworkTokens(version) ? DEVICE_DATA_INITIALIZE_V3 : DEVICE_DATA_INITIALIZE;
}

const AUTHENTICATE_RULED = withReturnUrlRule(AUTHENTICATE);
const AUTHENTICATE_V3_RULED = withReturnUrlRule(AUTHENTICATE_V3);

/** authenticate's schema for a version, with its rule across fields (the browser's return URL). */
export function authenticateSchema(version: ApiVersion) {
  return takesNetworkTokens(version) ? AUTHENTICATE_V3_RULED : AUTHENTICATE_RULED;
}

/** What the steps take: a request of any version (version 3's is the widest). */
export type DeviceDataInitializeRequest = v.InferOutput<typeof DEVICE_DATA_INITIALIZE_V3>;

/** What the steps take: a request of any version (version 3's is the widest). */
export type AuthenticateRequest = v.InferOutput<typeof AUTHENTICATE_V3>;
