import type { Importer, RawRow } from '../source-row';
import { BINLIST_IMPORTER } from './binlist';
import { CANONICAL_IMPORTER } from './canonical';
import { IANNUTTALL_IMPORTER } from './iannuttall';
import { OPENBIIN_IMPORTER } from './openbiin';
import { OVERRIDES_IMPORTER } from './overrides';
import { VENELINKOCHEV_IMPORTER } from './venelinkochev';

/**
 * Every source format, in detection order: our own formats first (overrides is canonical plus a
 * `reason` column, so it is tried before canonical), then the formats with the most distinctive
 * headers (venelinkochev and iannuttall differ only by their country columns).
 */
export const IMPORTERS: readonly Importer[] = [
  OVERRIDES_IMPORTER,
  CANONICAL_IMPORTER,
  BINLIST_IMPORTER,
  OPENBIIN_IMPORTER,
  VENELINKOCHEV_IMPORTER,
  IANNUTTALL_IMPORTER,
];

/**
 * Whether a header has every required column of an importer (names compare case-insensitively).
 *
 * @example hasRequiredColumns(BINLIST_IMPORTER, ['IIN_START', ...]) // true
 */
export function hasRequiredColumns(importer: Importer, header: readonly string[]): boolean {
  const names = new Set(header.map((name) => name.trim().toLowerCase()));
  return importer.requiredColumns.every((column) => names.has(column.toLowerCase()));
}

/**
 * The first importer whose required columns the header has, or undefined.
 *
 * @example detectImporter(['BIN6', 'Ranges', 'Issuer', 'Country', 'Brand', 'Type'])?.name // 'openbiin'
 */
export function detectImporter(header: string[]): Importer | undefined {
  return IMPORTERS.find((importer) => hasRequiredColumns(importer, header));
}

/** The importer called `name` (the CLI's `--format`), or undefined. */
export function importerNamed(name: string): Importer | undefined {
  return IMPORTERS.find((importer) => importer.name === name);
}

/**
 * Maps one CSV record to all the ranges it describes (an openbiin row may list several
 * sub-ranges, "40-45|51-53").
 *
 * @returns the rows, or the reason the record's BIN cells are broken.
 */
export function mapRecord(
  importer: Importer,
  cells: Readonly<Record<string, string>>,
  line: number,
): RawRow[] | string {
  const rows = importer.mapRow(cells, line);
  return typeof rows === 'string' || Array.isArray(rows) ? rows : [rows];
}
