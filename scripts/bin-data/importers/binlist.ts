import type { Brand } from '../../../src/bin/model';
import type { Importer, RawRow } from '../source-row';
import { schemeBrandsOfLabel } from '../brand-labels';
import { cellReader, optional, parseBinRange } from './bin-cells';

/**
 * Schemes that binlist files under their owner's network: a Maestro card has scheme MASTERCARD
 * and brand "Maestro", yet it is a Maestro card, not a co-badged Mastercard.
 */
const OWNED_BY: Readonly<Partial<Record<Brand, Brand>>> = { maestro: 'mastercard' };

/**
 * Splits the `brand` cell into a brand label (when it names a scheme: "Visa/Dankort") or a
 * product label ("GOLD", "ELECTRON"). The scheme cell stays a brand label, except when the brand
 * cell names a scheme it owns ("Maestro" under MASTERCARD).
 */
function readBrandCells(scheme: string, brand: string): Pick<RawRow, 'brandLabels' | 'productLabel'> {
  const named = brand === '' ? [] : schemeBrandsOfLabel(brand);
  if (named.length === 0) {
    return { brandLabels: scheme === '' ? [] : [scheme], productLabel: optional(brand) };
  }
  const schemeBrands = scheme === '' ? [] : schemeBrandsOfLabel(scheme);
  const ownedByScheme = named.some((b) => {
    const owner = OWNED_BY[b];
    return owner !== undefined && schemeBrands.includes(owner);
  });
  return { brandLabels: ownedByScheme || scheme === '' ? [brand] : [scheme, brand] };
}

/**
 * binlist "ranges.csv" (github.com/binlist/data): one row per BIN or BIN range. `scheme` is the
 * network; `brand` is mostly a product name ("GOLD", "VISA BUSINESS") but sometimes names a
 * co-badged scheme ("Visa/Dankort").
 */
export const BINLIST_IMPORTER: Importer = {
  name: 'binlist',
  requiredColumns: ['iin_start', 'iin_end', 'scheme', 'brand', 'type', 'prepaid', 'country', 'bank_name'],
  mapRow(cells, line): RawRow | string {
    const cell = cellReader(cells);
    const range = parseBinRange(cell('iin_start'), cell('iin_end'), 'iin_start', 'iin_end');
    if (typeof range === 'string') return range;
    return {
      line,
      ...range,
      ...readBrandCells(cell('scheme'), cell('brand')),
      fundingLabel: optional(cell('type')),
      prepaidLabel: optional(cell('prepaid')),
      issuerName: optional(cell('bank_name')),
      countryLabel: optional(cell('country')),
    };
  },
};
