/** A checked BIN range: two digit strings of equal length (6 to 8), start ≤ end. */
export interface BinRange {
  startDigits: string;
  endDigits: string;
}

const BIN_DIGITS = /^\d{6,8}$/;

/**
 * Checks the BIN cells of a row. An empty end cell means one BIN. An end of a different length
 * than the start is read as a prefix too: the shorter side is widened to the longer one (start
 * padded with 0, end with 9), so "45717360"–"457174" covers 45717360–45717499.
 *
 * @returns the range, or the reason the cells are broken (for the build's rejection list).
 * @example parseBinRange('411773', '411776', 'iin_start', 'iin_end')
 *   // { startDigits: '411773', endDigits: '411776' }
 */
export function parseBinRange(
  startCell: string,
  endCell: string,
  startName: string,
  endName: string,
): BinRange | string {
  const start = startCell.trim();
  const end = endCell.trim();
  if (!BIN_DIGITS.test(start)) return `${startName} "${start}" is not 6 to 8 digits`;
  if (end === '') return { startDigits: start, endDigits: start };
  if (!BIN_DIGITS.test(end)) return `${endName} "${end}" is not 6 to 8 digits`;
  const length = Math.max(start.length, end.length);
  const startDigits = start.padEnd(length, '0');
  const endDigits = end.padEnd(length, '9');
  if (endDigits < startDigits) return `${endName} ${end} is before ${startName} ${start}`;
  return { startDigits, endDigits };
}

/**
 * Cells of a record by lower-cased header name, so that importers read "BIN" and "bin" alike
 * (header names compare case-insensitively). Missing cells read as "".
 */
export function cellReader(cells: Readonly<Record<string, string>>): (name: string) => string {
  const byLowerName = new Map<string, string>();
  for (const [name, value] of Object.entries(cells)) {
    byLowerName.set(name.trim().toLowerCase(), (value ?? '').trim());
  }
  return (name) => byLowerName.get(name.toLowerCase()) ?? '';
}

/** Returns the value, or undefined for an empty cell (RawRow leaves unknown fields out). */
export function optional(value: string): string | undefined {
  return value === '' ? undefined : value;
}
