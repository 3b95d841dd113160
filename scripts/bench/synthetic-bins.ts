/**
 * Generates a synthetic BIN dataset in the canonical CSV format (scripts/bin-data/importers/
 * canonical.ts): the bench's fixture, for measurements that must not depend on third-party data.
 *
 *   npx tsx scripts/bench/synthetic-bins.ts [--rows 400000] [--seed 1] [--out FILE]
 *
 * The same seed and row count always give byte-identical output (seeded PRNG, no clock, no
 * Math.random). The shape follows real BIN lists: 6-digit BINs dense inside the card schemes'
 * IIN ranges, brands matching those ranges, runs of consecutive BINs from one issuer, ~5% of
 * rows 8-digit sub-ranges inside a listed 6-digit BIN, a few multi-BIN ranges that overlap
 * listed BINs (so that most-specific-wins is exercised), and a few co-badged rows.
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Brand } from '../../src/bin/model';
import { SCHEME_RANGES, schemeBrandsFor } from '../../src/bin/scheme-ranges';

export const CANONICAL_HEADER =
  'bin_start,bin_end,brands,funding_type,issuer_name,country_code,' +
  'category,anonymous_prepaid,multiple_account_access,number_type';

/** Share of rows that are 8-digit sub-ranges of a listed 6-digit BIN. */
const SUB_RANGE_SHARE = 0.05;
/** Share of rows that are ranges of several 6-digit BINs. */
const MULTI_BIN_SHARE = 0.001;
const ISSUER_POOL_SIZE = 20_000;

/** mulberry32: a tiny, fast 32-bit PRNG; good enough for test data and fully deterministic. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A block of the BIN space owned by one scheme (blocks never overlap). */
interface Block {
  from: string;
  to: string;
  brands: string;
  /** Relative share of the rows, before capping at the block's size. */
  weight: number;
  /** Domestic schemes are issued in one country. */
  country?: string;
  /** Product mix of the scheme. */
  funding: 'general' | 'amex' | 'credit' | 'debit';
}

/** Roughly how dense each scheme is in real BIN lists (share of rows; others get the default). */
const BRAND_WEIGHT: Partial<Record<Brand, number>> = {
  visa: 55,
  mastercard: 32,
  amex: 11,
  maestro: 9,
  unionPay: 7,
  diners: 6,
  discover: 3,
  rupay: 4,
  uatp: 2,
  jcb: 1.5,
};
const DEFAULT_BRAND_WEIGHT = 0.3;

/** Where a domestic scheme's cards are issued. */
const DOMESTIC_COUNTRY: Partial<Record<Brand, string>> = {
  mir: 'RU',
  rupay: 'IN',
  unionPay: 'CN',
  troy: 'TR',
  elo: 'BR',
  hipercard: 'BR',
  dankort: 'DK',
  cabal: 'AR',
  carnet: 'MX',
  verve: 'NG',
  discover: 'US',
};

/** The product mix a scheme's cards have. */
function fundingOf(brand: Brand): Block['funding'] {
  if (brand === 'amex') return 'amex';
  if (['diners', 'jcb', 'discover', 'uatp', 'hipercard'].includes(brand)) return 'credit';
  if (['visa', 'mastercard', 'unionPay', 'elo'].includes(brand)) return 'general';
  return 'debit';
}

/**
 * The blocks of 6-digit BINs the card schemes claim, derived from the scheme table
 * (src/bin/scheme-ranges.ts): each 6-digit BIN gets the brands the table gives it (the
 * narrowest range wins), and runs of BINs with the same brands make one block. So every row's
 * brands are what the scheme table says about its digits, whatever the table becomes. Weights
 * split each scheme's share over its blocks by size.
 */
function schemeBlocks(): Block[] {
  const bounds = new Set<number>();
  for (const r of SCHEME_RANGES) {
    if (r.from.length > 6) continue; // narrower than one 6-digit BIN: no whole BIN to sample
    bounds.add(Number(r.from.padEnd(6, '0')));
    bounds.add(Number(r.to.padEnd(6, '9')) + 1);
  }
  const points = [...bounds].sort((a, b) => a - b);
  const runs: { first: number; last: number; brands: Brand[] }[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const first = points[i]!;
    const last = points[i + 1]! - 1;
    const brands = schemeBrandsFor(String(first).padStart(6, '0'));
    if (brands.length === 0) continue;
    const previous = runs.at(-1);
    if (previous && previous.last === first - 1 && previous.brands.join('|') === brands.join('|')) previous.last = last;
    else runs.push({ first, last, brands });
  }
  const sizeOf = new Map<Brand, number>();
  for (const run of runs) sizeOf.set(run.brands[0]!, (sizeOf.get(run.brands[0]!) ?? 0) + run.last - run.first + 1);
  return runs.map(({ first, last, brands }) => {
    const primary = brands[0]!;
    const domestic = brands.map((b) => DOMESTIC_COUNTRY[b]).find((c) => c !== undefined);
    return {
      from: String(first).padStart(6, '0'),
      to: String(last).padStart(6, '0'),
      brands: brands.join('|'),
      weight: ((BRAND_WEIGHT[primary] ?? DEFAULT_BRAND_WEIGHT) * (last - first + 1)) / sizeOf.get(primary)!,
      ...(domestic !== undefined ? { country: domestic } : {}),
      funding: fundingOf(brands.find((b) => b !== 'visa' && b !== 'mastercard') ?? primary),
    };
  });
}

const BLOCKS: readonly Block[] = schemeBlocks();

/** Real ISO 3166 alpha-2 codes with rough weights for where issuers are. */
const COUNTRIES: readonly (readonly [string, number])[] = [
  ['US', 30],
  ['GB', 5],
  ['DE', 4],
  ['FR', 4],
  ['CA', 3],
  ['BR', 4],
  ['MX', 2],
  ['IN', 3],
  ['CN', 3],
  ['JP', 2],
  ['RU', 2],
  ['TR', 2],
  ['DK', 1],
  ['AU', 2],
  ['IT', 2],
  ['ES', 2],
  ['NL', 1],
  ['SE', 1],
  ['PL', 1],
  ['KR', 1],
  ['SA', 1],
  ['AE', 1],
  ['ZA', 1],
  ['NG', 1],
  ['AR', 1],
  ['CL', 1],
  ['CO', 1],
  ['PE', 0.5],
  ['CH', 1],
  ['AT', 0.5],
  ['BE', 0.5],
  ['IE', 0.5],
  ['PT', 0.5],
  ['NO', 0.5],
  ['FI', 0.5],
  ['CZ', 0.5],
  ['HU', 0.5],
  ['RO', 0.5],
  ['GR', 0.5],
  ['IL', 0.5],
  ['EG', 0.5],
  ['PK', 0.5],
  ['BD', 0.3],
  ['ID', 0.5],
  ['MY', 0.5],
  ['TH', 0.5],
  ['VN', 0.5],
  ['PH', 0.5],
  ['SG', 0.5],
  ['HK', 0.5],
  ['TW', 0.5],
  ['NZ', 0.3],
  ['UA', 0.5],
  ['KZ', 0.3],
  ['KE', 0.3],
  ['MA', 0.3],
  ['EC', 0.3],
  ['GT', 0.3],
  ['DO', 0.3],
  ['PR', 0.3],
  ['LU', 0.3],
  ['BG', 0.3],
  ['HR', 0.3],
  ['RS', 0.3],
];

const SYLLABLES = [
  'al',
  'bar',
  'cor',
  'del',
  'en',
  'far',
  'gal',
  'hon',
  'ir',
  'jun',
  'kar',
  'lon',
  'mar',
  'nor',
  'os',
  'pel',
  'quin',
  'ros',
  'sal',
  'tor',
  'ul',
  'val',
  'wes',
  'xan',
  'yor',
  'zen',
  'ber',
  'dan',
  'fen',
  'lin',
  'mon',
  'ran',
  'sen',
  'tal',
  'vin',
  'ash',
  'brook',
  'ford',
  'ham',
  'ton',
];
const PREFIXES = ['First', 'National', 'United', 'Royal', 'Commercial', 'Citizens', 'Peoples'];
const SUFFIXES = [
  'Bank',
  'Savings Bank',
  'Credit Union',
  'Federal Credit Union',
  'Bank N.A.',
  'Bank PLC',
  'Bank AG',
  'Bank S.A.',
  'Cooperative Bank',
  'Bancorp',
  'Card Services',
  'Trust Company',
  'Financial Services',
  'Payments Ltd',
  'Banco',
  'Bank Ltd.',
  'Building Society',
  'Sparkasse',
];

interface Issuer {
  name: string;
  country: string;
  /** The issuer's product lines per kind of scheme, made on first use (1–3, as in real lists). */
  products: Map<Block['funding'], Profile[]>;
}

/** Everything a row says besides its range and brands. */
interface Profile {
  issuer: Issuer | undefined;
  country: string;
  funding: string;
  category: string;
  anonymousPrepaid: string;
  multipleAccountAccess: string;
  numberType: string;
}

interface Row {
  start: string;
  end: string;
  brands: string;
  profile: Profile;
}

class Generator {
  private readonly issuers: Issuer[] = [];
  private readonly names = new Set<string>();
  private readonly byCountry = new Map<string, Issuer[]>();
  private readonly countryTotal = COUNTRIES.reduce((s, [, w]) => s + w, 0);

  constructor(readonly rand: () => number) {
    // Every country gets issuers before the weighted draw, so domestic schemes always find one.
    for (const [code] of COUNTRIES) for (let i = 0; i < 5; i++) this.addIssuer(code);
    while (this.issuers.length < ISSUER_POOL_SIZE) this.addIssuer(this.pickCountry());
  }

  int(n: number): number {
    return Math.floor(this.rand() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  private pickCountry(): string {
    let r = this.rand() * this.countryTotal;
    for (const [code, w] of COUNTRIES) if ((r -= w) < 0) return code;
    return 'US';
  }

  private addIssuer(country: string): void {
    for (;;) {
      const root = Array.from({ length: 2 + this.int(2) }, () => this.pick(SYLLABLES)).join('');
      const prefix = this.chance(0.3) ? `${this.pick(PREFIXES)} ` : '';
      const name = `${prefix}${root[0]!.toUpperCase()}${root.slice(1)} ${this.pick(SUFFIXES)}`;
      if (this.names.has(name)) continue;
      this.names.add(name);
      const issuer: Issuer = { name, country, products: new Map() };
      this.issuers.push(issuer);
      const list = this.byCountry.get(country) ?? [];
      list.push(issuer);
      this.byCountry.set(country, list);
      return;
    }
  }

  /**
   * A skewed draw (square of a uniform), so that big issuers own many BINs, as in real lists:
   * the first issuer of the pool gets ~0.7% of the runs, the first hundred ~7%.
   */
  issuer(country: string | undefined): Issuer {
    const pool = country === undefined ? this.issuers : this.byCountry.get(country)!;
    return pool[Math.floor(pool.length * this.rand() ** 2)]!;
  }

  /**
   * One of the issuer's few product lines for the block's scheme kind (the first ones more
   * often). Real issuers repeat a handful of answers over many BINs, which is what keeps the
   * record table of a real list small (openbiin: under two distinct answers per issuer).
   */
  product(block: Block, issuer: Issuer): Profile {
    let products = issuer.products.get(block.funding);
    if (!products) {
      const count = this.chance(0.6) ? 1 : this.chance(0.7) ? 2 : 3;
      products = Array.from({ length: count }, () => this.newProduct(block, issuer));
      issuer.products.set(block.funding, products);
    }
    const product = products[Math.floor(products.length * this.rand() ** 2)]!;
    // A few rows lack an issuer or a country, as real sources do.
    if (this.chance(0.03)) return { ...product, issuer: undefined };
    if (this.chance(0.01)) return { ...product, country: '' };
    return product;
  }

  private newProduct(block: Block, issuer: Issuer): Profile {
    const funding = this.funding(block);
    const prepaid = funding === 'prepaid';
    return {
      issuer,
      country: issuer.country,
      funding,
      category: this.chance(0.05) ? '' : this.chance(0.16) ? 'commercial' : 'consumer',
      anonymousPrepaid: prepaid
        ? this.pick(['anonymousCompliant', 'anonymousNonCompliant', 'notPrepaidOrNonAnonymous', 'unknown'])
        : this.chance(0.9)
          ? 'notPrepaidOrNonAnonymous'
          : '',
      multipleAccountAccess: this.chance(0.85) ? '' : this.pick(['managed', 'unmanaged', 'unknown']),
      numberType: this.chance(0.005) ? 'networkToken' : 'pan',
    };
  }

  private funding(block: Block): string {
    if (this.chance(0.02)) return '';
    const r = this.rand();
    switch (block.funding) {
      case 'amex':
        return r < 0.4 ? 'chargeCard' : r < 0.95 ? 'credit' : 'prepaid';
      case 'credit':
        return r < 0.85 ? 'credit' : r < 0.95 ? 'debit' : 'prepaid';
      case 'debit':
        return r < 0.8 ? 'debit' : r < 0.95 ? 'prepaid' : 'credit';
      case 'general':
        return r < 0.45 ? 'credit' : r < 0.85 ? 'debit' : r < 0.95 ? 'prepaid' : r < 0.97 ? 'deferredDebit' : 'unknown';
    }
  }

  /**
   * Brands of a row: the block's, sometimes co-badged with a domestic scheme that rides on the
   * international scheme's BINs (the scheme table cannot name those; only data rows do).
   */
  brands(block: Block, country: string): string {
    if (block.brands === 'visa' && country === 'FR' && this.chance(0.4)) return 'visa|cartesBancaires';
    if (block.brands === 'mastercard' && country === 'FR' && this.chance(0.4)) return 'mastercard|cartesBancaires';
    if (block.brands === 'maestro' && country === 'DE' && this.chance(0.5)) return 'maestro|girocard';
    return block.brands;
  }
}

function blockBounds(block: Block): { first: number; last: number } {
  return { first: Number(block.from.padEnd(6, '0')), last: Number(block.to.padEnd(6, '9')) };
}

/**
 * Rows per block: shares by weight, capped at each block's number of BINs (water-filling, the
 * excess going to the blocks with room left), summing to exactly `total`.
 */
function allocate(total: number): number[] {
  const sizes = BLOCKS.map((b) => blockBounds(b).last - blockBounds(b).first + 1);
  const capacity = sizes.reduce((a, b) => a + b, 0);
  if (total > capacity) throw new Error(`at most ${capacity} six-digit BINs fit in the scheme blocks`);
  const counts = BLOCKS.map(() => 0);
  const open = new Set(BLOCKS.map((_, i) => i));
  let left = total;
  while (left > 0) {
    const weight = [...open].reduce((s, i) => s + BLOCKS[i]!.weight, 0);
    let given = 0;
    for (const i of open) {
      const share = Math.max(1, Math.floor((left * BLOCKS[i]!.weight) / weight));
      const n = Math.min(share, sizes[i]! - counts[i]!, left - given);
      counts[i]! += n;
      given += n;
      if (counts[i] === sizes[i]) open.delete(i);
    }
    left -= given;
  }
  return counts;
}

/** Picks exactly k of the n BINs of a block, in increasing order (Knuth's selection sampling). */
function sampleBins(g: Generator, first: number, n: number, k: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n && out.length < k; i++) {
    if (g.rand() * (n - i) < k - out.length) out.push(first + i);
  }
  return out;
}

/** One 6-digit row per sampled BIN; consecutive BINs usually stay with the same issuer. */
function sixDigitRows(g: Generator, count: number): Row[] {
  const rows: Row[] = [];
  allocate(count).forEach((k, b) => {
    const block = BLOCKS[b]!;
    const { first, last } = blockBounds(block);
    let previous = -2;
    let profile: Profile | undefined;
    let issuer: Issuer | undefined;
    for (const bin of sampleBins(g, first, last - first + 1, k)) {
      const current = issuer !== undefined && bin === previous + 1 && !g.chance(0.2) ? issuer : g.issuer(block.country);
      // Runs keep their product too, so that the compiler can merge adjacent equal answers.
      if (!profile || current !== issuer || g.chance(0.3)) profile = g.product(block, current);
      const digits = String(bin).padStart(6, '0');
      rows.push({ start: digits, end: '', brands: g.brands(block, current.country), profile });
      issuer = current;
      previous = bin;
    }
  });
  return rows;
}

function blockOf(bin: number): Block {
  return BLOCKS.find((b) => {
    const { first, last } = blockBounds(b);
    return first <= bin && bin <= last;
  })!;
}

/**
 * 1–3 disjoint 8-digit sub-ranges (some of a single 8-digit BIN) inside listed 6-digit BINs,
 * each parent used once. A sub-range never spans 00–99, which would be the parent's own range.
 */
function subRangeRows(g: Generator, parents: readonly Row[], count: number): Row[] {
  const rows: Row[] = [];
  const used = new Set<number>();
  while (rows.length < count && used.size < parents.length) {
    const p = g.int(parents.length);
    if (used.has(p)) continue;
    used.add(p);
    const parent = parents[p]!;
    const block = blockOf(Number(parent.start));
    const cuts = [...new Set(Array.from({ length: 2 + 2 * g.int(3) }, () => g.int(100)))].sort((a, b) => a - b);
    for (let i = 0; i + 1 < cuts.length && rows.length < count; i += 2) {
      const from = `${parent.start}${String(cuts[i]).padStart(2, '0')}`;
      const to = `${parent.start}${String(cuts[i + 1]! - 1).padStart(2, '0')}`;
      // Sub-ranges are usually another product of the same issuer, sometimes a sponsored issuer.
      const issuer = parent.profile.issuer && g.chance(0.7) ? parent.profile.issuer : g.issuer(block.country);
      rows.push({
        start: from,
        end: from === to ? '' : to,
        brands: g.brands(block, issuer.country),
        profile: g.product(block, issuer),
      });
    }
  }
  return rows;
}

/** Ranges of 2–50 six-digit BINs inside one block; they overlap listed BINs on purpose. */
function multiBinRows(g: Generator, count: number): Row[] {
  const rows: Row[] = [];
  const seen = new Set<string>();
  while (rows.length < count) {
    const block = BLOCKS[g.int(BLOCKS.length)]!;
    const { first, last } = blockBounds(block);
    const start = first + g.int(last - first + 1);
    const end = Math.min(last, start + 1 + g.int(49));
    const key = `${start}-${end}`;
    if (end === start || seen.has(key)) continue;
    seen.add(key);
    const issuer = g.issuer(block.country);
    rows.push({
      start: String(start).padStart(6, '0'),
      end: String(end).padStart(6, '0'),
      brands: g.brands(block, issuer.country),
      profile: g.product(block, issuer),
    });
  }
  return rows;
}

function csvLine(row: Row): string {
  const p = row.profile;
  const cells = [
    row.start,
    row.end,
    row.brands,
    p.funding,
    p.issuer?.name ?? '',
    p.country,
    p.category,
    p.anonymousPrepaid,
    p.multipleAccountAccess,
    p.numberType,
  ];
  // Generated names hold no comma or quote, but quote anyway so the output is always valid CSV.
  return cells.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',');
}

/**
 * A synthetic BIN dataset of exactly `rows` data rows (plus the header) in the canonical CSV
 * format, sorted by BIN, with no two rows of the same (bin_start, bin_end).
 *
 * @param rows number of data rows (at most about 460,000: the BINs the scheme table claims)
 * @param seed PRNG seed: the same (rows, seed) gives byte-identical output
 * @example generateSyntheticCsv(3, 1).split('\n')[0] // 'bin_start,bin_end,brands,...'
 */
export function generateSyntheticCsv(rows: number, seed: number): string {
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`rows must be a positive integer, got ${rows}`);
  const g = new Generator(mulberry32(seed));
  const subCount = Math.round(rows * SUB_RANGE_SHARE);
  const multiCount = Math.round(rows * MULTI_BIN_SHARE);
  const six = sixDigitRows(g, rows - subCount - multiCount);
  const sub = subRangeRows(g, six, subCount);
  // Tiny sets can run out of parents for sub-ranges: multi-BIN ranges make up the count.
  const all = [...six, ...sub, ...multiBinRows(g, rows - six.length - sub.length)];
  // Sorted like real lists: by first key, then the wider row before the rows nested in it.
  const key = (r: Row): [number, number] => [Number(r.start.padEnd(8, '0')), Number((r.end || r.start).padEnd(8, '9'))];
  const sorted = all.map((r) => ({ r, k: key(r) })).sort((a, b) => a.k[0] - b.k[0] || b.k[1] - a.k[1]);
  return `${CANONICAL_HEADER}\n${sorted.map((s) => csvLine(s.r)).join('\n')}\n`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '400000' },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
    },
  });
  const csv = generateSyntheticCsv(Number(values.rows), Number(values.seed));
  if (values.out) writeFileSync(values.out, csv);
  else process.stdout.write(csv);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
