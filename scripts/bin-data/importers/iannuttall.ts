import type { Importer, RawRow } from '../source-row';
import { cellReader, optional, parseBinRange } from './bin-cells';

/**
 * iannuttall/binlist-data (CC BY 4.0): one row per 6-digit (sometimes 8-digit) BIN, with
 * `category` as the product level. Country from alpha_2, else alpha_3, else the English name.
 */
export const IANNUTTALL_IMPORTER: Importer = {
  name: 'iannuttall',
  requiredColumns: ['bin', 'brand', 'type', 'category', 'issuer', 'alpha_2'],
  mapRow(cells, line): RawRow | string {
    const cell = cellReader(cells);
    const range = parseBinRange(cell('bin'), '', 'bin', 'bin');
    if (typeof range === 'string') return range;
    return {
      line,
      ...range,
      brandLabels: cell('brand') === '' ? [] : [cell('brand')],
      fundingLabel: optional(cell('type')),
      productLabel: optional(cell('category')),
      issuerName: optional(cell('issuer')),
      countryLabel: optional(cell('alpha_2') || cell('alpha_3') || cell('country')),
    };
  },
};
