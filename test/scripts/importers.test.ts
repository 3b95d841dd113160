import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectImporter, importerNamed, IMPORTERS, mapRecord } from '../../scripts/bin-data/importers/index';
import { OPENBIIN_IMPORTER } from '../../scripts/bin-data/importers/openbiin';
import { readRawRows } from '../../scripts/bin-data/read-csv';
import type { RawRow } from '../../scripts/bin-data/source-row';

function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

function rowAt(rows: RawRow[], startDigits: string): RawRow {
  const row = rows.find((r) => r.startDigits === startDigits);
  if (!row) throw new Error(`no row starting ${startDigits}`);
  return row;
}

describe('detectImporter', () => {
  it('recognises each documented header, whatever its case', () => {
    for (const name of ['binlist', 'venelinkochev', 'iannuttall', 'openbiin', 'canonical']) {
      const header = fixture(`${name}.csv`).split('\n')[0]!.split(',');
      expect(detectImporter(header)?.name).toBe(name);
      expect(detectImporter(header.map((h) => h.toUpperCase()))?.name).toBe(name);
    }
  });

  it('tells venelinkochev from iannuttall by their country columns', () => {
    expect(detectImporter(['BIN', 'Brand', 'Type', 'Category', 'Issuer', 'isoCode2'])?.name).toBe('venelinkochev');
    expect(detectImporter(['bin', 'brand', 'type', 'category', 'issuer', 'alpha_2'])?.name).toBe('iannuttall');
  });

  it('tries our own formats first: overrides (canonical plus reason), then canonical', () => {
    expect(IMPORTERS.slice(0, 2).map((i) => i.name)).toEqual(['overrides', 'canonical']);
  });

  it('returns undefined for an unknown header', () => {
    expect(detectImporter(['pan', 'bank'])).toBeUndefined();
  });
});

describe('readRawRows', () => {
  it('throws a clear error on an unrecognised header', () => {
    expect(() => readRawRows('pan,bank\n411111,Example\n')).toThrow(/Unrecognised CSV header "pan,bank"/);
  });

  it('throws a clear error on malformed CSV', () => {
    const text = 'BIN6,Ranges,Issuer,Country,Brand,Type\n411111,00-99,"Unclosed,US,visa,debit\n';
    expect(() => readRawRows(text)).toThrow(/^Malformed CSV/);
  });

  it('throws when a file lacks the columns of the format it was told', () => {
    expect(() => readRawRows(fixture('openbiin.csv'), importerNamed('binlist'))).toThrow(/lacks the binlist columns/);
  });

  it('throws on an empty file', () => {
    expect(() => readRawRows('')).toThrow(/empty/);
  });

  it('numbers rows by the line they start on, counting a quoted cell that spans two lines', () => {
    const { rows } = readRawRows(fixture('binlist.csv'));
    expect(rowAt(rows, '45717360').line).toBe(2);
    expect(rowAt(rows, '411773').line).toBe(3);
    expect(rowAt(rows, '525320').line).toBe(5);
  });

  it('rejects a row with more cells than the header instead of guessing which cell split', () => {
    const text = 'bin,brand,type,category,issuer,alpha_2\n411111,VISA,DEBIT,,A, B,US\n';
    expect(readRawRows(text).rejected).toEqual([{ line: 2, reason: '7 cells, the header has 6' }]);
  });
});

describe('binlist importer', () => {
  const { importer, rows, rejected } = readRawRows(fixture('binlist.csv'));

  it('is detected from the binlist header', () => {
    expect(importer.name).toBe('binlist');
  });

  it('keeps "Visa/Dankort" as a brand label beside the scheme', () => {
    const row = rowAt(rows, '45717360');
    expect(row).toMatchObject({ endDigits: '45717360', brandLabels: ['VISA', 'Visa/Dankort'] });
    expect(row.productLabel).toBeUndefined();
  });

  it('reads a product name in the brand cell as the product label', () => {
    expect(rowAt(rows, '411773')).toMatchObject({
      endDigits: '411776',
      brandLabels: ['VISA'],
      productLabel: 'VISA BUSINESS',
      fundingLabel: 'CREDIT',
      countryLabel: 'GB',
    });
    expect(rowAt(rows, '525320')).toMatchObject({ brandLabels: ['MASTERCARD'], productLabel: 'ELECTRON' });
  });

  it('lets "Maestro" replace the MASTERCARD scheme it belongs to', () => {
    expect(rowAt(rows, '670686').brandLabels).toEqual(['Maestro']);
  });

  it('passes the prepaid flag on', () => {
    expect(rowAt(rows, '453748').prepaidLabel).toBe('y');
  });

  it('widens a 6-digit iin_end to the 8-digit start as the last BIN it covers', () => {
    expect(rowAt(rows, '51234500').endDigits).toBe('51234699');
  });

  it('rejects a start that is not digits and a range that ends before it starts', () => {
    expect(rejected).toEqual([
      { line: 9, reason: 'iin_start "45717x" is not 6 to 8 digits' },
      { line: 10, reason: 'iin_end 411779 is before iin_start 411780' },
    ]);
  });
});

describe('venelinkochev importer', () => {
  const { rows, rejected } = readRawRows(fixture('venelinkochev.csv'));

  it('maps the columns to labels, Category to the product label', () => {
    expect(rowAt(rows, '371449')).toEqual({
      line: 2,
      startDigits: '371449',
      endDigits: '371449',
      brandLabels: ['AMERICAN EXPRESS'],
      fundingLabel: 'CHARGE CARD',
      productLabel: 'CORPORATE',
      issuerName: 'Example Express',
      countryLabel: 'US',
    });
  });

  it('falls back to the alpha-3 column when isoCode2 is empty', () => {
    expect(rowAt(rows, '220012').countryLabel).toBe('RUS');
  });

  it('accepts an 8-digit BIN and rejects a 5-digit one', () => {
    expect(rowAt(rows, '55660011').endDigits).toBe('55660011');
    expect(rejected).toEqual([{ line: 4, reason: 'BIN "12345" is not 6 to 8 digits' }]);
  });
});

describe('iannuttall importer', () => {
  const { rows, rejected } = readRawRows(fixture('iannuttall.csv'));

  it('falls back to the country name when both code columns are empty', () => {
    expect(rowAt(rows, '601100')).toMatchObject({ brandLabels: ['DISCOVER'], countryLabel: 'United States' });
  });

  it('keeps the labels as written for the normaliser', () => {
    expect(rowAt(rows, '356999')).toMatchObject({
      brandLabels: ['JCB'],
      fundingLabel: 'DEBIT/CREDIT',
      productLabel: 'PLATINUM',
      countryLabel: 'JP',
    });
  });

  it('rejects a BIN with letters', () => {
    expect(rejected).toEqual([{ line: 4, reason: 'bin "62abcd" is not 6 to 8 digits' }]);
  });
});

describe('openbiin importer', () => {
  const { rows, rejected } = readRawRows(fixture('openbiin.csv'));

  it('reads Ranges 00-99 as the whole 6-digit BIN', () => {
    expect(rowAt(rows, '356789')).toMatchObject({ endDigits: '356789', brandLabels: ['jcb/rupay'] });
  });

  it('reads a narrower Ranges as an 8-digit range', () => {
    expect(rowAt(rows, '52000050')).toMatchObject({ endDigits: '52000059', issuerName: 'Example Bank, Ltd.' });
  });

  it('expands several sub-ranges into one row each, all on the same line', () => {
    const nordic = rows.filter((r) => r.startDigits.startsWith('457100'));
    expect(nordic.map((r) => [r.startDigits, r.endDigits, r.line])).toEqual([
      ['45710040', '45710045', 4],
      ['45710051', '45710053', 4],
    ]);
  });

  it('puts back a row whose unquoted issuer comma shifted the country into Brand', () => {
    expect(rowAt(rows, '400001')).toEqual({
      line: 6,
      startDigits: '400001',
      endDigits: '400001',
      brandLabels: ['visa'],
      fundingLabel: undefined,
      issuerName: 'EXAMPLE BANK, N.A.',
      countryLabel: 'US',
    });
  });

  it('rejects a short BIN6 and a sub-range that ends before it starts', () => {
    expect(rejected).toEqual([
      { line: 8, reason: 'BIN6 "12345" is not 6 digits' },
      { line: 9, reason: 'Ranges "99-10" ends before it starts' },
    ]);
  });

  it('reads a row listing two sub-ranges as two 8-digit ranges', () => {
    const cells = { BIN6: '457100', Ranges: '40-45|51-53', Issuer: 'X', Country: 'DK', Brand: 'visa', Type: 'debit' };
    const ranges = mapRecord(OPENBIIN_IMPORTER, cells, 7);
    expect(Array.isArray(ranges) && ranges.map((r) => [r.startDigits, r.endDigits])).toEqual([
      ['45710040', '45710045'],
      ['45710051', '45710053'],
    ]);
  });
});

describe('canonical importer', () => {
  const { rows, rejected } = readRawRows(fixture('canonical.csv'));

  it('splits brands on "|" and keeps the other cells for validation', () => {
    expect(rowAt(rows, '497010')).toEqual({
      line: 3,
      startDigits: '497010',
      endDigits: '497012',
      brandLabels: ['cartesBancaires', 'visa'],
      issuerName: 'Example Banque',
      canonical: {
        type: 'pan',
        fundingType: 'credit',
        countryCode: 'FR',
        category: 'commercial',
        anonymousPrepaid: undefined,
        multipleAccountAccess: 'managed',
      },
    });
  });

  it('leaves empty cells out as not known', () => {
    expect(rowAt(rows, '601100')).toMatchObject({
      brandLabels: [],
      issuerName: undefined,
      canonical: { fundingType: 'prepaid', anonymousPrepaid: 'anonymousCompliant', type: undefined },
    });
  });

  it('rejects a bin_start shorter than 6 digits', () => {
    expect(rejected).toEqual([{ line: 7, reason: 'bin_start "5210" is not 6 to 8 digits' }]);
  });
});
