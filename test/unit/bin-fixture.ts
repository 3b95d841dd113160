import { BinIndex } from '../../src/bin/bin-index';
import { buildIndex } from '../../scripts/bin-data/build';
import { CANONICAL_IMPORTER } from '../../scripts/bin-data/importers/canonical';

/**
 * A BIN index compiled from canonical CSV rows written in the test, with the real scheme table
 * behind them: the unit tests know every row that answers.
 */
export function indexOf(...rows: string[]): BinIndex {
  const header =
    'bin_start,bin_end,brands,funding_type,issuer_name,country_code,category,anonymous_prepaid,multiple_account_access,number_type';
  const built = buildIndex(`${header}\n${rows.join('\n')}\n`, { importer: CANONICAL_IMPORTER, maxRejectedRatio: 0 });
  if (built.verify.failures.length > 0) throw new Error('fixture rows did not verify');
  return BinIndex.fromArrayBuffer(built.artifact);
}
