import type { Importer, RawRow } from '../source-row';
import { cellReader, optional, parseBinRange } from './bin-cells';

/**
 * venelinkochev/bin-list-data (CC BY 4.0): one row per 6-digit (sometimes 8-digit) BIN.
 * `Category` is the product level ("CLASSIC", "BUSINESS"); the country is read from the alpha-2
 * column, falling back to alpha-3 and then the English name when a row leaves it empty.
 */
export const VENELINKOCHEV_IMPORTER: Importer = {
  name: 'venelinkochev',
  requiredColumns: ['BIN', 'Brand', 'Type', 'Category', 'Issuer', 'isoCode2'],
  mapRow(cells, line): RawRow | string {
    const cell = cellReader(cells);
    const range = parseBinRange(cell('BIN'), '', 'BIN', 'BIN');
    if (typeof range === 'string') return range;
    return {
      line,
      ...range,
      brandLabels: cell('Brand') === '' ? [] : [cell('Brand')],
      fundingLabel: optional(cell('Type')),
      productLabel: optional(cell('Category')),
      issuerName: optional(cell('Issuer')),
      countryLabel: optional(cell('isoCode2') || cell('isoCode3') || cell('CountryName')),
    };
  },
};
