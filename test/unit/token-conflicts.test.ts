import { describe, expect, it } from 'vitest';
import { conflictsOf, type ConflictingDetails } from '../../src/tokens/token-resource';

describe("a token's conflicts (pure)", () => {
  const stored: ConflictingDetails = {
    cardHolderName: 'Ada Lovelace',
    cardExpiryDate: { month: 12, year: 2035 },
    billingAddress: { address1: '1 Main St', postalCode: 'W1', city: 'London', countryCode: 'GB' },
    schemeTransactionReference: 'abc123',
  };

  it('finds none when the request sends the same details, or leaves them out', () => {
    expect(conflictsOf(stored, stored)).toBeUndefined();
    expect(conflictsOf(stored, { cardExpiryDate: { month: 12, year: 2035 } })).toBeUndefined();
  });

  it('lists what the request sent that differs, where Worldpay puts it', () => {
    expect(
      conflictsOf(stored, {
        ...stored,
        cardHolderName: 'A. Lovelace',
        cardExpiryDate: { month: 1, year: 2036 },
        schemeTransactionReference: 'xyz',
      }),
    ).toEqual({
      paymentInstrument: { cardHolderName: 'A. Lovelace', cardExpiryDate: { month: 1, year: 2036 } },
      schemeTransactionReference: 'xyz',
    });
  });

  it('compares a billing address as a whole, and one sent where none is stored is a conflict', () => {
    const moved = { ...stored.billingAddress!, city: 'Bath' };
    expect(conflictsOf(stored, { ...stored, billingAddress: moved })).toEqual({
      paymentInstrument: { billingAddress: moved },
    });
    const { billingAddress: _none, ...without } = stored;
    expect(conflictsOf(without, stored)).toEqual({ paymentInstrument: { billingAddress: stored.billingAddress } });
  });
});
