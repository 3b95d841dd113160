import { describe, expect, it } from 'vitest';
import { toCardBinData } from '../../src/bin/card-bin-data';
import type { BinRecord } from '../../src/bin/model';
import { indexOf } from './bin-fixture';

const wire = (answer: unknown): unknown => JSON.parse(JSON.stringify(answer));

describe('the card BIN answer (pure)', () => {
  const record = (r: Partial<BinRecord>): BinRecord => ({ type: 'pan', brands: ['visa'], binLength: 6, ...r });

  it('gives bin and binLength of the row that matched: 8 digits for an 8-digit row, 6 for the scheme table', () => {
    const card = '4571368400000008';
    expect(toCardBinData(card, { record: record({ binLength: 8 }), source: 'data' })).toMatchObject({
      bin: '45713684',
      binLength: 8,
    });
    expect(toCardBinData(card, { record: record({ binLength: 8 }), source: 'scheme' })).toMatchObject({
      bin: '457136',
      binLength: 6,
    });
  });

  it.each<[string, Partial<BinRecord>, boolean]>([
    ['visa with a currency', { currency: 'GBP' }, true],
    ['mastercard with a currency', { brands: ['mastercard'], currency: 'EUR' }, true],
    ['a co-badged visa', { brands: ['visa', 'dankort'], currency: 'DKK' }, true],
    ['amex', { brands: ['amex'], currency: 'USD' }, false],
    ['no known currency', {}, false],
    ['anonymous prepaid', { currency: 'GBP', anonymousPrepaid: 'anonymousCompliant' }, false],
    ['prepaid, not anonymous', { currency: 'GBP', anonymousPrepaid: 'notPrepaidOrNonAnonymous' }, true],
  ])('allows DCC for %s: %s', (_name, fields, dcc) => {
    expect(toCardBinData('4444333322221111', { record: record(fields), source: 'data' }).dccAllowed).toBe(dcc);
  });

  it('leaves out every field the data cannot support, never inventing one', () => {
    expect(wire(toCardBinData('4444333322221111', { record: record({ brands: [] }), source: 'data' }))).toEqual({
      type: 'pan',
      bin: '444433',
      binLength: 6,
      dccAllowed: false,
    });
  });

  it('answers a network token range as type networkToken, from compiled data', () => {
    const index = indexOf('44443333,,visa,debit,Token Bank,GB,consumer,notPrepaidOrNonAnonymous,,networkToken');
    const match = index.find('4444333312345678')!;
    expect(wire(toCardBinData('4444333312345678', match))).toEqual({
      type: 'networkToken',
      brand: ['visa'],
      bin: '44443333',
      binLength: 8,
      fundingType: 'debit',
      issuerName: 'Token Bank',
      countryCode: 'GB',
      currency: 'GBP',
      dccAllowed: true,
      anonymousPrepaid: 'notPrepaidOrNonAnonymous',
      category: 'consumer',
    });
  });
});
