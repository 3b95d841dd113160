import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newLabelReport, normaliseRow } from '../../scripts/bin-data/normalise';
import { readRawRows } from '../../scripts/bin-data/read-csv';
import { SCHEME_RANGES, schemeBrandsFor } from '../../src/bin/scheme-ranges';
import type { LabelReport, RawRow, Rejection, SourceRow } from '../../scripts/bin-data/source-row';

function raw(overrides: Partial<RawRow>): RawRow {
  return { line: 2, startDigits: '411111', endDigits: '411111', brandLabels: ['VISA'], ...overrides };
}

function accepted(row: RawRow, report: LabelReport = newLabelReport()): SourceRow {
  const result = normaliseRow(row, report);
  if ('reason' in result) throw new Error(`rejected: ${result.reason}`);
  return result;
}

function rejected(row: RawRow): Rejection {
  const result = normaliseRow(row, newLabelReport());
  if (!('reason' in result)) throw new Error('accepted');
  return result;
}

function fixtureRows(name: string): RawRow[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
  return readRawRows(text).rows;
}

describe('keys and binLength', () => {
  it('covers xxxxxx00–xxxxxx99 for a 6-digit BIN, with binLength 6', () => {
    expect(accepted(raw({ startDigits: '457173', endDigits: '457173' }))).toMatchObject({
      start: 45717300,
      end: 45717399,
      record: { binLength: 6 },
    });
  });

  it('keeps binLength 6 for a range of whole 6-digit BINs', () => {
    expect(accepted(raw({ startDigits: '411773', endDigits: '411776' }))).toMatchObject({
      start: 41177300,
      end: 41177699,
      record: { binLength: 6 },
    });
  });

  it('gives binLength 8 to a row narrower than a 6-digit BIN', () => {
    expect(accepted(raw({ startDigits: '45717360', endDigits: '45717369' }))).toMatchObject({
      start: 45717360,
      end: 45717369,
      record: { binLength: 8 },
    });
  });

  it('gives binLength 7 to a 7-digit row, never claiming digits the row does not give', () => {
    expect(accepted(raw({ startDigits: '4571736', endDigits: '4571736' }))).toMatchObject({
      start: 45717360,
      end: 45717369,
      record: { binLength: 7 },
    });
  });

  it('rejects a range that ends before it starts, with its line', () => {
    expect(rejected(raw({ line: 7, startDigits: '411780', endDigits: '411779' }))).toEqual({
      line: 7,
      reason: 'BIN range 411780–411779 ends before it starts',
    });
  });
});

describe('brands', () => {
  it.each([
    [['AMERICAN EXPRESS'], ['amex']],
    [['amex'], ['amex']],
    [['nspk mir'], ['mir']],
    [['MASTER CARD'], ['mastercard']],
    [['MC'], ['mastercard']],
    [['DINERS CLUB INTERNATIONAL'], ['diners']],
    [['china union pay'], ['unionPay']],
    [['visa electron'], ['visa']],
    [['RuPay'], ['rupay']],
    [['Cartes Bancaires'], ['cartesBancaires']],
    [['eftpos'], ['eftposAU']],
    [['pagobancomat'], ['bancomat']],
    [['tarjeta naranja'], ['naranja']],
  ])('maps %j to %j', (labels, brands) => {
    expect(accepted(raw({ brandLabels: labels })).record.brands).toEqual(brands);
  });

  it('maps "Visa/Dankort" to co-badged visa and dankort, visa first', () => {
    expect(accepted(raw({ brandLabels: ['VISA', 'Visa/Dankort'] })).record.brands).toEqual(['visa', 'dankort']);
  });

  it('maps "jcb/rupay" to jcb and rupay, the international scheme first', () => {
    expect(
      accepted(raw({ startDigits: '356789', endDigits: '356789', brandLabels: ['rupay/jcb'] })).record.brands,
    ).toEqual(['jcb', 'rupay']);
  });

  it('counts a label that maps to nothing and lets the scheme table decide', () => {
    const report = newLabelReport();
    const row = accepted(raw({ startDigits: '810001', endDigits: '810001', brandLabels: ['local'] }), report);
    expect(row.record.brands).toEqual(['unionPay']);
    expect(report.unmappedBrandLabels).toEqual(new Map([['local', 1]]));
  });

  it('gives no brand when neither the labels nor the scheme table know the BIN', () => {
    const report = newLabelReport();
    expect(
      accepted(raw({ startDigits: '002102', endDigits: '002102', brandLabels: ['private label'] }), report).record
        .brands,
    ).toEqual([]);
    expect(report.unmappedBrandLabels.get('private label')).toBe(1);
  });

  it('reports the unknown half of "jcb/local" without asking the scheme table', () => {
    const report = newLabelReport();
    expect(
      accepted(raw({ startDigits: '356789', endDigits: '356789', brandLabels: ['jcb/local'] }), report).record.brands,
    ).toEqual(['jcb']);
    expect(report.unmappedBrandLabels.size).toBe(0);
    expect(report.unmappedLabels.get('brand:local')).toBe(1);
  });

  it('uses the scheme table without counting anything when a row has no brand label', () => {
    const report = newLabelReport();
    expect(accepted(raw({ brandLabels: [] }), report).record.brands).toEqual(['visa']);
    expect(report.unmappedBrandLabels.size).toBe(0);
  });
});

describe('funding, anonymity and category', () => {
  it.each([
    ['CREDIT', 'credit'],
    ['debit', 'debit'],
    ['Charge Card', 'chargeCard'],
    ['deferred debit', 'deferredDebit'],
    ['DEBIT/CREDIT', 'unknown'],
    ['prepaid', 'prepaid'],
  ])('reads funding label %s as %s', (label, fundingType) => {
    expect(accepted(raw({ fundingLabel: label })).record.fundingType).toBe(fundingType);
  });

  it('makes a card prepaid when the prepaid flag says Y, whatever the funding label', () => {
    expect(accepted(raw({ fundingLabel: 'DEBIT', prepaidLabel: 'y' })).record).toMatchObject({
      fundingType: 'prepaid',
      anonymousPrepaid: 'unknown',
    });
  });

  it('marks credit, debit and charge cards notPrepaidOrNonAnonymous', () => {
    for (const label of ['CREDIT', 'DEBIT', 'CHARGE']) {
      expect(accepted(raw({ fundingLabel: label })).record.anonymousPrepaid).toBe('notPrepaidOrNonAnonymous');
    }
  });

  it('omits fundingType and anonymousPrepaid without a funding label, and counts an unknown one', () => {
    const report = newLabelReport();
    const record = accepted(raw({ fundingLabel: 'GIFT-ISH' }), report).record;
    expect(record).not.toHaveProperty('fundingType');
    expect(record).not.toHaveProperty('anonymousPrepaid');
    expect(report.unmappedLabels.get('funding:GIFT-ISH')).toBe(1);
  });

  it.each([
    ['VISA BUSINESS', 'commercial'],
    ['CORPORATE T&E', 'commercial'],
    ['PURCHASING', 'commercial'],
    ['FLEET', 'commercial'],
    ['Government', 'commercial'],
    ['PLATINUM', 'consumer'],
    ['CLASSIC', 'consumer'],
  ])('reads product %s as %s', (product, category) => {
    expect(accepted(raw({ productLabel: product })).record.category).toBe(category);
  });

  it('omits category when there is no product label', () => {
    expect(accepted(raw({})).record).not.toHaveProperty('category');
  });
});

describe('country, currency, issuer and type', () => {
  it('gives the currency of the issuer country', () => {
    expect(accepted(raw({ countryLabel: 'gb' })).record).toMatchObject({ countryCode: 'GB', currency: 'GBP' });
  });

  it('tolerates alpha-3 codes and English names', () => {
    expect(accepted(raw({ countryLabel: 'RUS' })).record.countryCode).toBe('RU');
    expect(accepted(raw({ countryLabel: 'United States' })).record.countryCode).toBe('US');
  });

  it('omits country and currency for an unknown country and counts it', () => {
    const report = newLabelReport();
    const record = accepted(raw({ countryLabel: 'N.A. (USA)' }), report).record;
    expect(record).not.toHaveProperty('countryCode');
    expect(record).not.toHaveProperty('currency');
    expect(report.unmappedLabels.get('country:N.A. (USA)')).toBe(1);
  });

  it('collapses whitespace in the issuer name and omits an empty one', () => {
    expect(accepted(raw({ issuerName: ' Example   Bank\n plc ' })).record.issuerName).toBe('Example Bank plc');
    expect(accepted(raw({ issuerName: '  ' })).record).not.toHaveProperty('issuerName');
  });

  it('calls every non-canonical row a pan', () => {
    expect(accepted(raw({})).record.type).toBe('pan');
  });
});

describe('canonical rows', () => {
  const rows = fixtureRows('canonical.csv');
  const byLine = (line: number): RawRow => rows.find((r) => r.line === line)!;

  it('takes the cells as they are, network token included', () => {
    expect(accepted(byLine(2))).toEqual({
      line: 2,
      start: 44443333,
      end: 44443333,
      record: {
        type: 'networkToken',
        brands: ['visa'],
        binLength: 8,
        fundingType: 'debit',
        issuerName: 'Example Token Bank',
        countryCode: 'GB',
        currency: 'GBP',
        category: 'consumer',
        anonymousPrepaid: 'notPrepaidOrNonAnonymous',
      },
    });
  });

  it('orders co-badged brands, keeps multipleAccountAccess and infers nothing left empty', () => {
    expect(accepted(byLine(3)).record).toEqual({
      type: 'pan',
      brands: ['visa', 'cartesBancaires'],
      binLength: 6,
      fundingType: 'credit',
      issuerName: 'Example Banque',
      countryCode: 'FR',
      currency: 'EUR',
      category: 'commercial',
      multipleAccountAccess: 'managed',
    });
  });

  it('lets the scheme table decide when brands is empty', () => {
    expect(accepted(byLine(4)).record).toEqual({
      type: 'pan',
      brands: ['discover'],
      binLength: 6,
      fundingType: 'prepaid',
      anonymousPrepaid: 'anonymousCompliant',
    });
  });

  it('rejects values outside the API vocabulary', () => {
    expect(rejected(byLine(5))).toEqual({
      line: 5,
      reason: expect.stringMatching(/^funding_type "bogus" is not one of credit, debit/),
    });
    expect(rejected(byLine(6))).toEqual({ line: 6, reason: 'brand "MasterCard" is not a brand name of the API' });
    expect(rejected(raw({ canonical: { countryCode: 'ZZ' } })).reason).toMatch(/country_code "ZZ"/);
  });
});

describe('fixtures end to end', () => {
  it('normalises every fixture row the importers accepted, with the labels reported', () => {
    const report = newLabelReport();
    const results = ['binlist.csv', 'venelinkochev.csv', 'iannuttall.csv', 'openbiin.csv']
      .flatMap(fixtureRows)
      .map((row) => normaliseRow(row, report));
    expect(results.filter((r) => 'reason' in r)).toEqual([]);
    expect([...report.unmappedBrandLabels]).toEqual([['local', 1]]);
  });

  it('reads the openbiin row with a shifted issuer as visa in the US', () => {
    const row = fixtureRows('openbiin.csv').find((r) => r.startDigits === '400001')!;
    expect(accepted(row).record).toEqual({
      type: 'pan',
      brands: ['visa'],
      binLength: 6,
      issuerName: 'EXAMPLE BANK, N.A.',
      countryCode: 'US',
      currency: 'USD',
    });
  });
});

describe('scheme ranges', () => {
  it.each([
    ['411111', ['visa']],
    ['457100', ['visa', 'dankort']],
    ['222100', ['mastercard']],
    ['220012', ['mir']],
    ['371449', ['amex']],
    ['305693', ['diners']],
    ['353011', ['jcb']],
    ['358999', ['jcb']],
    ['622126', ['unionPay']],
    ['621483', ['unionPay']],
    ['601100', ['discover']],
    ['601110', []],
    ['650031', ['elo']],
    ['650002', ['discover']],
    ['606282', ['hipercard']],
    ['504175', ['elo']],
    ['501900', ['dankort']],
    ['500000', ['maestro']],
    ['979200', ['troy']],
    ['150000', ['uatp']],
    ['12345678', ['uatp']],
    ['700000', []],
    // JCB's legacy ranges, 404 before
    ['308800', ['jcb']],
    ['309499', ['jcb']],
    ['309500', ['diners']],
    ['309600', ['jcb']],
    ['310299', ['jcb']],
    ['311200', ['jcb']],
    ['312099', ['jcb']],
    ['315800', ['jcb']],
    ['333700', ['jcb']],
    ['334999', ['jcb']],
    ['308799', []],
    ['310300', []],
    ['335000', []],
    // UnionPay and RuPay share 81
    ['810000', ['unionPay']],
    ['817199', ['unionPay']],
    ['817200', ['rupay']],
    ['819999', ['rupay']],
    ['820199', ['rupay']],
    ['820200', []],
    // RuPay no longer claims all of 508 and 60
    ['508499', ['maestro']],
    ['508500', ['rupay']],
    ['508999', ['rupay']],
    ['606100', ['rupay']],
    ['608999', ['rupay']],
    ['606126', ['maestro']],
    ['606333', ['carnet']],
    ['609000', []],
    ['600000', []],
    ['652149', ['discover']],
    ['652150', ['rupay']],
    ['653149', ['rupay']],
    ['653150', ['discover']],
    // Cabal
    ['604201', ['cabal']],
    ['604399', ['cabal']],
    ['604400', ['cabal']],
    ['604200', []],
    ['65008700', ['cabal']],
    ['65008701', ['discover']],
    ['590000', ['maestro']],
    ['637570', []],
  ])('gives %s the brands %j (narrowest range wins)', (digits, brands) => {
    expect(schemeBrandsFor(digits)).toEqual(brands);
  });

  it('lists every range as equal-length digit prefixes, from ≤ to', () => {
    for (const range of SCHEME_RANGES) {
      expect(range.from).toMatch(/^\d{1,8}$/);
      expect(range.to.length).toBe(range.from.length);
      expect(range.from <= range.to).toBe(true);
      expect(range.brands.length).toBeGreaterThan(0);
    }
  });
});
