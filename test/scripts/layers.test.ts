import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BinIndex } from '../../src/bin/bin-index';
import { BrokenSourceError, buildLayers } from '../../scripts/bin-data/build';
import { dataVersion, readSourcesConfig, sha256Hex } from '../../scripts/bin-data/layers';
import { buildConfigured, DataCommandError } from '../../scripts/bin-data/refresh';

const CANONICAL =
  'bin_start,bin_end,brands,funding_type,issuer_name,country_code,category,anonymous_prepaid,multiple_account_access,number_type';
const OVERRIDES = `${CANONICAL},reason`;

/** A canonical-format source: rows of [start, end, brands, issuer, country]. */
function canonical(rows: [string, string, string, string, string][], header = CANONICAL, reason?: string): string {
  const lines = rows.map(
    ([start, end, brands, issuer, country]) =>
      `${start},${end},${brands},debit,${issuer},${country},,,,pan${reason === undefined ? '' : `,${reason}`}`,
  );
  return [header, ...lines].join('\n');
}

function lookup(text: ReturnType<typeof buildLayers>, pan: string): ReturnType<BinIndex['find']> {
  return BinIndex.fromArrayBuffer(text.artifact).find(pan);
}

describe('layered build: precedence across layers', () => {
  const first = canonical([
    ['411111', '', 'visa', 'First six', 'GB'],
    ['420000', '429999', 'visa', 'First wide range', 'GB'],
    ['430000', '', 'visa', 'First co-badged', 'DK'],
  ]);
  const second = canonical([
    ['41111155', '', 'visa', 'Second eight', 'FR'],
    ['411111', '', 'visa', 'Second six', 'FR'],
    ['421234', '', 'visa', 'Second six in a range', 'FR'],
    ['430000', '', 'dankort', 'First co-badged', 'DK'],
    ['440000', '', 'visa', 'Second only', 'FR'],
  ]);
  const result = buildLayers([
    { name: 'first', text: first },
    { name: 'second', text: second },
  ]);

  it('lets a more specific row of a later layer win (8 digits beat 6)', () => {
    expect(lookup(result, '4111115500000000')?.record.issuerName).toBe('Second eight');
    expect(lookup(result, '4111115600000000')?.record.issuerName).toBe('First six');
  });

  it('at equal specificity lets the earlier layer win, even over a narrower row', () => {
    expect(lookup(result, '4212340000000000')?.record.issuerName).toBe('First wide range');
  });

  it('merges co-badged brands only within one layer', () => {
    expect(lookup(result, '4300000000000000')?.record.brands).toEqual(['visa']);
  });

  it('answers rows only a later layer has', () => {
    expect(lookup(result, '4400000000000000')?.record.issuerName).toBe('Second only');
  });

  it('reports per layer rows read, used and overridden, and verifies every layer', () => {
    expect(result.layers.map((l) => [l.name, l.rowsRead, l.accepted, l.used, l.overridden])).toEqual([
      ['first', 3, 3, 3, 0],
      ['second', 5, 5, 2, 3],
    ]);
    expect(result.verify.checkedRows).toBe(8);
    expect(result.verify.failures).toEqual([]);
  });
});

describe('overrides', () => {
  const source = canonical([
    ['45711601', '', 'visa|dankort', 'Source eight', 'DK'],
    ['457116', '', 'visa', 'Source six', 'DK'],
  ]);

  it('beat every source at their keys, more specific source rows included', () => {
    const overrides = canonical([['457116', '', 'visa|dankort', 'Corrected', 'GL']], OVERRIDES, 'reviewed');
    const result = buildLayers([
      { name: 'overrides', text: overrides },
      { name: 'source', text: source },
    ]);
    expect(result.layers[0]!.format).toBe('overrides');
    expect(lookup(result, '4571160100000000')?.record).toMatchObject({ issuerName: 'Corrected', countryCode: 'GL' });
    expect(lookup(result, '4571169900000000')?.record.issuerName).toBe('Corrected');
    expect(result.layers[1]).toMatchObject({ used: 0, overridden: 2 });
  });

  it('refuse a row without a reason, failing the build with its line', () => {
    const overrides = [
      OVERRIDES,
      '457116,,visa,debit,Fine,GL,,,,pan,checked against the issuer',
      '457117,,visa,debit,Unjustified,GL,,,,pan,',
    ].join('\n');
    const build = (): unknown =>
      buildLayers([
        { name: 'overrides', text: overrides },
        { name: 'source', text: source },
      ]);
    expect(build).toThrow(BrokenSourceError);
    expect(build).toThrow(/layer overrides: 1 of 2 rows rejected .*line 3: an override needs a reason/);
  });

  it('may be empty (a header only)', () => {
    const result = buildLayers([
      { name: 'overrides', text: OVERRIDES },
      { name: 'source', text: source },
    ]);
    expect(result.layers[0]).toMatchObject({ rowsRead: 0, accepted: 0 });
  });
});

describe('data/bin-source.json', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bin-layers-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a layer whose file no longer has its recorded SHA-256', async () => {
    const text = canonical([['411111', '', 'visa', 'Bank', 'GB']]);
    await writeFile(join(dir, 'a.csv'), text);
    const config = { layers: [{ name: 'a', source: 'a.csv', sha256: sha256Hex(new TextEncoder().encode(text)) }] };
    const built = await buildConfigured(dir, config);
    expect(built.result.rows).toHaveLength(1);
    await writeFile(join(dir, 'a.csv'), `${text}\n411112,,visa,debit,Slipped in,GB,,,,pan`);
    await expect(buildConfigured(dir, config)).rejects.toThrow(DataCommandError);
    await expect(buildConfigured(dir, config)).rejects.toThrow(/layer a: .* has SHA-256 .* not the .* recorded/);
  });

  it('still reads the one-source form, its path relative to the project root', async () => {
    await mkdir(join(dir, 'data', 'x'), { recursive: true });
    await writeFile(join(dir, 'data', 'bin-source.json'), '{ "source": "data/x/r.csv", "format": "canonical" }');
    expect(await readSourcesConfig(join(dir, 'data'))).toEqual({
      layers: [{ name: 'canonical', source: 'x/r.csv', format: 'canonical' }],
    });
  });

  it('refuses duplicate or malformed layer names', async () => {
    const write = (layers: unknown): Promise<void> =>
      writeFile(join(dir, 'bin-source.json'), JSON.stringify({ layers }));
    await write([
      { name: 'a', source: 'a.csv' },
      { name: 'a', source: 'b.csv' },
    ]);
    await expect(readSourcesConfig(dir)).rejects.toThrow(/listed twice/);
    await write([{ name: 'Bad Name', source: 'a.csv' }]);
    await expect(readSourcesConfig(dir)).rejects.toThrow(/layer name/);
    await write([]);
    await expect(readSourcesConfig(dir)).rejects.toThrow(/at least one source/);
    expect(await readFile(join(dir, 'bin-source.json'), 'utf8')).toBe('{"layers":[]}');
  });

  it('names the data version: each layer with a SHA-256 prefix, then the build time', () => {
    expect(
      dataVersion(
        [
          { name: 'overrides', sha256: 'ab'.repeat(32) },
          { name: 'binlist', sha256: 'cd'.repeat(32) },
        ],
        new Date('2026-11-22T10:11:12.345Z'),
      ),
    ).toBe('overrides@abababababab,binlist@cdcdcdcdcdcd;built=2026-11-22T10:11:12Z');
  });
});
