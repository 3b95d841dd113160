import { describe, expect, it } from 'vitest';
import { lookupPrefix } from '../../src/bin/prefix-lookup';
import { indexOf } from './bin-fixture';

/** The answer as JSON sends it (undefined fields left out). */
const wire = (answer: unknown): unknown => JSON.parse(JSON.stringify(answer ?? null));

describe('lookup by BIN prefix (pure)', () => {
  const index = indexOf(
    '457111,,visa,debit,Alpha Bank,DK,consumer,notPrepaidOrNonAnonymous,,pan',
    // Two 8-digit rows of different issuers under 457122; the rest of the BIN has no data row.
    '45712200,45712249,visa|dankort,debit,Alpha Bank,DK,consumer,notPrepaidOrNonAnonymous,,pan',
    '45712250,45712299,visa|dankort,debit,Beta Bank,GL,consumer,notPrepaidOrNonAnonymous,,pan',
    '45713300,45713349,visa,credit,Gamma Bank,DK,consumer,,,pan',
  );

  it('answers a prefix of one data row exactly as panLookup answers a card under it', () => {
    expect(lookupPrefix(index, '457111')).toEqual({
      type: 'pan',
      brand: ['visa'],
      bin: '457111',
      binLength: 6,
      fundingType: 'debit',
      issuerName: 'Alpha Bank',
      countryCode: 'DK',
      currency: 'DKK',
      dccAllowed: true,
      anonymousPrepaid: 'notPrepaidOrNonAnonymous',
      category: 'consumer',
    });
  });

  it('keeps only what every part shares: the brands and fields the rows agree on', () => {
    // As the answer goes on the wire: fields left undefined are not sent.
    expect(wire(lookupPrefix(index, '457122'))).toEqual({
      type: 'pan',
      brand: ['visa', 'dankort'],
      bin: '457122',
      binLength: 6,
      fundingType: 'debit',
      // Denmark and Greenland both use the Danish krone: that much the rows share.
      currency: 'DKK',
      dccAllowed: true,
      anonymousPrepaid: 'notPrepaidOrNonAnonymous',
      category: 'consumer',
    });
  });

  it('answers an 8-digit prefix from the one row that covers it', () => {
    expect(lookupPrefix(index, '45712260')).toMatchObject({ issuerName: 'Beta Bank', countryCode: 'GL' });
  });

  it('says nothing but the type, the shared brand and the BIN when part of the prefix has only the scheme table', () => {
    // 457133 is half Gamma Bank's Visa row, half the scheme table's Visa/Dankort range (4571).
    expect(wire(lookupPrefix(index, '457133'))).toEqual({ type: 'pan', brand: ['visa'], bin: '457133', binLength: 6 });
  });

  it('answers the scheme table alone for a prefix no data row touches, and nothing where no scheme is', () => {
    expect(lookupPrefix(index, '411111')).toMatchObject({ brand: ['visa'], bin: '411111', binLength: 6 });
    expect(lookupPrefix(index, '999999')).toBeUndefined();
  });
});
