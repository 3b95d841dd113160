import type { BinIndex } from './bin-index';
import { toCardBinData, type CardBinData } from './card-bin-data';
import type { Brand } from './model';

/** What a BIN prefix proves: every field optional, since rows under a prefix may disagree. */
export type PrefixBinData = Partial<CardBinData> & Pick<CardBinData, 'bin' | 'binLength'>;

const KEY_DIGITS = 8;

/**
 * The lookup by BIN prefix (6–8 leading digits, no full card number): the answer every card
 * under the prefix shares, and nothing more.
 *
 * The prefix covers a run of 8-digit keys (100 of them for 6 digits). Each part of that run is
 * answered as panLookup would answer a card there: by its data row, else by its scheme range,
 * else by nothing. A field is answered only when every part gives it the same value; `brand`
 * lists the brands every part shares; `bin` is the prefix cut to the shortest BIN length of the
 * rows that answer it (a row says nothing about digits past its own length). No part answered
 * at all: undefined (404 binNotFound).
 *
 * @example lookupPrefix(BIN_INDEX, '444433') // { brand: ['visa'], bin: '444433', binLength: 6, ... }
 */
export function lookupPrefix(index: BinIndex, prefix: string): PrefixBinData | undefined {
  const from = Number(prefix.padEnd(KEY_DIGITS, '0'));
  const to = Number(prefix.padEnd(KEY_DIGITS, '9'));
  const answers = new Map<string, CardBinData | undefined>();
  const answer = (key: number, recordId: number, source: 'data' | 'scheme'): void => {
    const id = `${source}:${recordId}`;
    if (!answers.has(id)) {
      answers.set(id, toCardBinData(String(key).padStart(KEY_DIGITS, '0'), { record: index.record(recordId), source }));
    }
  };
  // Walk the data rows under the prefix; the gaps between them go to the scheme table, and its
  // own gaps are parts nothing answers.
  let next = from;
  const fillGap = (end: number): void => {
    let at = next;
    for (const s of index.segments('scheme', next, end)) {
      if (s.start > at) answers.set('none', undefined);
      answer(s.start, s.recordId, 'scheme');
      at = s.end + 1;
    }
    if (at <= end) answers.set('none', undefined);
  };
  for (const s of index.segments('data', from, to)) {
    if (s.start > next) fillGap(s.start - 1);
    answer(s.start, s.recordId, 'data');
    next = s.end + 1;
  }
  if (next <= to) fillGap(to);

  const parts = [...answers.values()];
  const known = parts.filter((p): p is CardBinData => p !== undefined);
  if (known.length === 0) return undefined;
  const binLength = Math.min(prefix.length, ...known.map((p) => p.binLength));
  const merged: PrefixBinData = { bin: prefix.slice(0, binLength), binLength };
  const everywhere = parts.length === known.length;
  if (!everywhere) return merged;

  const brand = known
    .map((p) => p.brand ?? [])
    .reduce<Brand[]>((shared, brands) => shared.filter((b) => brands.includes(b)), known[0]!.brand ?? []);
  const first = known[0]!;
  const same = <K extends keyof CardBinData>(field: K): CardBinData[K] | undefined =>
    known.every((p) => p[field] === first[field]) ? first[field] : undefined;
  // In panLookup's field order; JSON.stringify leaves out what is undefined.
  return {
    type: same('type'),
    brand: brand.length > 0 ? brand : undefined,
    bin: merged.bin,
    binLength,
    fundingType: same('fundingType'),
    issuerName: same('issuerName'),
    countryCode: same('countryCode'),
    currency: same('currency'),
    dccAllowed: same('dccAllowed'),
    anonymousPrepaid: same('anonymousPrepaid'),
    category: same('category'),
    multipleAccountAccess: same('multipleAccountAccess'),
  };
}
