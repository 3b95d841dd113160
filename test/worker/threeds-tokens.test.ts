import { describe, expect, it } from 'vitest';
import { luhnComplete, OTHER_AUTH } from './helpers';
import { completeChallenge, newReference, RETURN_URL, threeDs } from './threeds-helpers';
import { tokenBody, tokenHref } from './token-helpers';

type Json = Record<string, any>;

function authenticateWithToken(href: string, o: { reference?: string; entity?: string } = {}): Promise<Response> {
  return threeDs('authenticate', {
    transactionReference: o.reference ?? newReference(),
    merchant: { entity: o.entity ?? 'default' },
    instruction: { value: { amount: 500, currency: 'GBP' }, paymentInstrument: { type: 'card/tokenized', href } },
    deviceData: { acceptHeader: 'text/html', userAgentHeader: 'Mozilla/5.0 (test)' },
    challenge: { returnUrl: RETURN_URL },
  });
}

describe('3DS with a tokenized card', () => {
  it('uses the cardholder name stored with the token for the test scenario', async () => {
    const href = await tokenHref(
      tokenBody({ cardNumber: luhnComplete('432376', 16, '7'), name: '3ds2-frictionless-identified' }),
    );
    const auth: Json = await (await authenticateWithToken(href)).json();
    expect(auth.outcome).toBe('authenticated');
    expect(auth.authentication.eci).toBe('05');
  });

  it('behaves as the card behind the token: Mastercard ECIs', async () => {
    const href = await tokenHref(
      tokenBody({ cardNumber: luhnComplete('531265', 16, '7'), name: '3DS_V2_FRICTIONLESS_NOT_IDENTIFIED' }),
    );
    const auth: Json = await (await authenticateWithToken(href)).json();
    expect(auth.authentication.eci).toBe('01');
  });

  it('runs a whole challenge with a token and verifies it', async () => {
    const reference = newReference();
    const href = await tokenHref(tokenBody({ cardNumber: luhnComplete('432376', 16, '8'), name: 'Any Name' }));
    const auth: Json = await (await authenticateWithToken(href, { reference })).json();
    expect(auth.outcome).toBe('challenged');
    await completeChallenge(auth.challenge.jwt, ['1234']);
    const verified: Json = await (
      await threeDs('verification', {
        transactionReference: reference,
        merchant: { entity: 'default' },
        challenge: { reference: auth.challenge.reference },
      })
    ).json();
    expect(verified.outcome).toBe('authenticated');
  });

  it('gives the BIN of the card behind the token in deviceDataInitialize', async () => {
    const href = await tokenHref(tokenBody({ cardNumber: luhnComplete('45713684', 16, '3') }));
    const init: Json = await (
      await threeDs('deviceDataInitialize', {
        transactionReference: newReference(),
        merchant: { entity: 'default' },
        paymentInstrument: { type: 'card/tokenized', href },
      })
    ).json();
    expect(init.deviceDataCollection.bin).toBe('457136');
  });

  it("answers 404 tokenNotFound for another merchant's token", async () => {
    const href = await tokenHref(tokenBody({ cardNumber: luhnComplete('432376', 16, '9') }));
    const response = await threeDs(
      'authenticate',
      {
        transactionReference: newReference(),
        merchant: { entity: 'other' },
        instruction: { value: { amount: 500, currency: 'GBP' }, paymentInstrument: { type: 'card/tokenized', href } },
        deviceData: { acceptHeader: 'text/html', userAgentHeader: 'x' },
        challenge: { returnUrl: RETURN_URL },
      },
      { Authorization: OTHER_AUTH },
    );
    expect(response.status).toBe(404);
    expect((await response.json<Json>()).errorName).toBe('tokenNotFound');
  });

  it('applies the entity brand rule to the card behind the token', async () => {
    const href = await tokenHref(tokenBody({ cardNumber: luhnComplete('341142', 15, '2') }));
    const response = await authenticateWithToken(href, { entity: 'limited' });
    expect((await response.json<Json>()).errorName).toBe('paymentInstrumentIsNotSupported');
  });
});
