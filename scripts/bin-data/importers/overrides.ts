import type { Importer, RawRow } from '../source-row';
import { CANONICAL_IMPORTER } from './canonical';
import { cellReader } from './bin-cells';

/**
 * data/overrides.csv: reviewed corrections in the canonical format plus a `reason` column that
 * says why the row is right and the sources are wrong (a citation, a ticket). A row without a
 * reason is refused, and a layer of this format fails the build on any refused row: a correction
 * nobody can justify is not a correction.
 */
export const OVERRIDES_IMPORTER: Importer = {
  name: 'overrides',
  requiredColumns: [...CANONICAL_IMPORTER.requiredColumns, 'reason'],
  mapRow(cells, line): RawRow | RawRow[] | string {
    const reason = cellReader(cells)('reason');
    if (reason === '') return 'an override needs a reason: say why this row is right and the sources are wrong';
    return CANONICAL_IMPORTER.mapRow(cells, line);
  },
};
