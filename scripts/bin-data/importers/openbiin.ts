import type { Importer, RawRow } from '../source-row';
import { fundingTypeFor } from '../label-rules';
import { cellReader, optional, type BinRange } from './bin-cells';

const SUB_RANGE = /^(\d{2})-(\d{2})$/;

/**
 * Reads the `Ranges` cell: "00-99" is the whole BIN6; "50-59" is the 8-digit range
 * BIN6+"50"–BIN6+"59"; several sub-ranges are separated by "|" ("40-45|51-53").
 */
function parseRanges(bin6: string, rangesCell: string): BinRange[] | string {
  if (!/^\d{6}$/.test(bin6)) return `BIN6 "${bin6}" is not 6 digits`;
  const parts = (rangesCell === '' ? '00-99' : rangesCell).split('|').map((p) => p.trim());
  const ranges: BinRange[] = [];
  for (const part of parts) {
    const match = SUB_RANGE.exec(part);
    if (!match) return `Ranges "${rangesCell}" is not NN-NN sub-ranges separated by "|"`;
    const [, from = '', to = ''] = match;
    if (to < from) return `Ranges "${part}" ends before it starts`;
    ranges.push(
      from === '00' && to === '99'
        ? { startDigits: bin6, endDigits: bin6 }
        : { startDigits: bin6 + from, endDigits: bin6 + to },
    );
  }
  return ranges;
}

/** Labels as the row means them, after undoing the column shift described in {@link readLabels}. */
interface OpenbiinLabels {
  issuer: string;
  country: string;
  brand: string;
  funding: string;
}

/**
 * The file quotes most issuer names that contain a comma, but not all: "BANK OF AMERICA, N.A."
 * unquoted pushes the tail of the name into Country, the country code into Brand and the brand
 * into Type (the funding type is lost). Such a row has an alpha-2 code in Brand and a Type that
 * is no funding word; it is read back into place.
 */
function readLabels(cell: (name: string) => string): OpenbiinLabels {
  const labels = {
    issuer: cell('Issuer'),
    country: cell('Country'),
    brand: cell('Brand'),
    funding: cell('Type'),
  };
  const shifted = /^[A-Z]{2}$/.test(labels.brand) && labels.funding !== '' && !fundingTypeFor(labels.funding);
  if (!shifted) return labels;
  return {
    issuer: [labels.issuer, labels.country].filter((p) => p !== '').join(', '),
    country: labels.brand,
    brand: labels.funding,
    funding: '',
  };
}

function mapRow(cells: Readonly<Record<string, string>>, line: number): RawRow[] | string {
  const cell = cellReader(cells);
  const ranges = parseRanges(cell('BIN6'), cell('Ranges'));
  if (typeof ranges === 'string') return ranges;
  const labels = readLabels(cell);
  return ranges.map((range) => ({
    line,
    ...range,
    brandLabels: labels.brand === '' ? [] : [labels.brand],
    fundingLabel: optional(labels.funding),
    issuerName: optional(labels.issuer),
    countryLabel: optional(labels.country),
  }));
}

/**
 * openbiin (`BIN6,Ranges,Issuer,Country,Brand,Type`): one row per 6-digit BIN, narrowed by the
 * 7th–8th digit sub-ranges of `Ranges`. Brand cells are dirty ("private label", "local",
 * "jcb/rupay"); the normaliser sorts them out.
 */
export const OPENBIIN_IMPORTER: Importer = {
  name: 'openbiin',
  requiredColumns: ['BIN6', 'Ranges', 'Issuer', 'Country', 'Brand', 'Type'],
  mapRow,
};
