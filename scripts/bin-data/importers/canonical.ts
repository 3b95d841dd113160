import type { Importer, RawRow } from '../source-row';
import { cellReader, optional, parseBinRange } from './bin-cells';

/**
 * Our own documented format: cells already in the API vocabulary of src/bin/model.ts, so the
 * normaliser validates them instead of interpreting them. An empty cell means "not known".
 *
 * bin_start,bin_end,brands,funding_type,issuer_name,country_code,category,anonymous_prepaid,
 * multiple_account_access,number_type
 */
export const CANONICAL_IMPORTER: Importer = {
  name: 'canonical',
  requiredColumns: [
    'bin_start',
    'bin_end',
    'brands',
    'funding_type',
    'issuer_name',
    'country_code',
    'category',
    'anonymous_prepaid',
    'multiple_account_access',
    'number_type',
  ],
  mapRow(cells, line): RawRow | string {
    const cell = cellReader(cells);
    const range = parseBinRange(cell('bin_start'), cell('bin_end'), 'bin_start', 'bin_end');
    if (typeof range === 'string') return range;
    return {
      line,
      ...range,
      brandLabels: cell('brands')
        .split('|')
        .map((b) => b.trim())
        .filter((b) => b !== ''),
      issuerName: optional(cell('issuer_name')),
      canonical: {
        type: optional(cell('number_type')),
        fundingType: optional(cell('funding_type')),
        countryCode: optional(cell('country_code')),
        category: optional(cell('category')),
        anonymousPrepaid: optional(cell('anonymous_prepaid')),
        multipleAccountAccess: optional(cell('multiple_account_access')),
      },
    };
  },
};
