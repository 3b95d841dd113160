import { parse } from 'csv-parse/sync';
import { detectImporter, hasRequiredColumns, IMPORTERS, mapRecord } from './importers/index';
import type { Importer, RawRow, Rejection } from './source-row';

/** What one source file holds once its rows are read: the format, the rows, the refused rows. */
export interface RawRows {
  importer: Importer;
  /** CSV records read after the header (one record may give several rows). */
  recordCount: number;
  rows: RawRow[];
  rejected: Rejection[];
}

interface ParsedRecord {
  record: string[];
  raw: string;
}

interface NumberedRecord {
  cells: string[];
  /** Line the record starts on (a quoted cell may span several lines). */
  line: number;
}

const LINE_BREAK = /\r\n|\r|\n/g;

function countLineBreaks(text: string): number {
  return text.match(LINE_BREAK)?.length ?? 0;
}

/**
 * Numbers records by the line they start on. csv-parse's `info.lines` is the line a record ends
 * on, so it is recomputed from the raw text, which csv-parse hands back piece by piece: blank
 * lines it skipped lead the next record's raw text.
 */
function numberRecords(parsed: readonly ParsedRecord[]): NumberedRecord[] {
  let line = 1;
  return parsed.map(({ record, raw }) => {
    const blankLines = /^(?:\r\n|\r|\n)*/.exec(raw)?.[0] ?? '';
    line += countLineBreaks(blankLines);
    const numbered = { cells: record, line };
    line += countLineBreaks(raw.slice(blankLines.length));
    return numbered;
  });
}

function parseRecords(text: string): NumberedRecord[] {
  try {
    const parsed = parse(text, {
      bom: true,
      raw: true,
      trim: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as unknown as ParsedRecord[];
    return numberRecords(parsed);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`Malformed CSV: ${detail}`, { cause: error });
  }
}

function chooseImporter(header: string[], importer: Importer | undefined): Importer {
  if (importer) {
    if (!hasRequiredColumns(importer, header)) {
      const missing = importer.requiredColumns.filter(
        (column) => !header.some((name) => name.toLowerCase() === column.toLowerCase()),
      );
      throw new Error(`CSV header lacks the ${importer.name} columns: ${missing.join(', ')}`);
    }
    return importer;
  }
  const detected = detectImporter(header);
  if (!detected) {
    const known = IMPORTERS.map((i) => `${i.name} (${i.requiredColumns.join(',')})`).join('; ');
    throw new Error(`Unrecognised CSV header "${header.join(',')}". Known formats: ${known}`);
  }
  return detected;
}

/**
 * Reads a whole BIN source: detects its format from the header (or checks the one given), maps
 * every record with its line number (header = line 1) and keeps the refused rows with reasons.
 *
 * @throws Error on malformed CSV, an empty file, or a header no importer recognises.
 * @example readRawRows('iin_start,iin_end,...\n457173,,...').importer.name // 'binlist'
 */
export function readRawRows(text: string, importer?: Importer): RawRows {
  const [headerRecord, ...records] = parseRecords(text);
  if (!headerRecord) throw new Error('CSV is empty: no header line');
  const header = headerRecord.cells;
  const chosen = chooseImporter(header, importer);
  const rows: RawRow[] = [];
  const rejected: Rejection[] = [];
  for (const { cells: record, line } of records) {
    if (record.length > header.length) {
      // Extra cells mean an unquoted comma somewhere; which cell it split is anyone's guess.
      rejected.push({ line, reason: `${record.length} cells, the header has ${header.length}` });
      continue;
    }
    const cells: Record<string, string> = {};
    header.forEach((name, i) => {
      cells[name] = record[i] ?? '';
    });
    const mapped = mapRecord(chosen, cells, line);
    if (typeof mapped === 'string') rejected.push({ line, reason: mapped });
    else rows.push(...mapped);
  }
  return { importer: chosen, recordCount: records.length, rows, rejected };
}
