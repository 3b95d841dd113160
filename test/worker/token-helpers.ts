import { call, luhnComplete, TEST_AUTH, type Fetch } from './helpers';

type Json = Record<string, any>;

export const TOKENS_MEDIA = 'application/vnd.worldpay.tokens-v1.hal+json';
export const TOKENS_HEADERS = { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, 'Content-Type': TOKENS_MEDIA };

export function tokenBody(
  o: { cardNumber?: string; name?: string; entity?: string; month?: number; year?: number; extra?: Json } = {},
): Json {
  return {
    paymentInstrument: {
      type: 'card/front',
      cardNumber: o.cardNumber ?? luhnComplete('45713684'),
      cardExpiryDate: { month: o.month ?? 12, year: o.year ?? 2035 },
      ...(o.name ? { cardHolderName: o.name } : {}),
    },
    merchant: { entity: o.entity ?? 'default' },
    ...o.extra,
  };
}

export function createToken(
  body: Json,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call('/tokens', { body, headers: { ...TOKENS_HEADERS, ...headers }, via });
}

/** GET or DELETE (or another method) on a token href. */
export function tokenCall(
  method: string,
  href: string,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call(new URL(href).pathname, {
    method,
    headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, ...headers },
    via,
  });
}

/** Creates a token for the test merchant and returns its href. */
export async function tokenHref(body: Json, headers: Record<string, string | undefined> = {}): Promise<string> {
  const response = await createToken(body, headers);
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`token not created: ${response.status} ${await response.text()}`);
  return (await response.json<Json>()).tokenPaymentInstrument.href;
}
