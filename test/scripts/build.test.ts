import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BinIndex } from '../../src/bin/bin-index';
import { fileURLToPath } from 'node:url';
import { BrokenSourceError, buildIndex } from '../../scripts/bin-data/build';
import { readSourcesConfig } from '../../scripts/bin-data/layers';
import { buildConfigured } from '../../scripts/bin-data/refresh';

const root = new URL('../../', import.meta.url);
const dataDir = fileURLToPath(new URL('data/', root));
const embedded = BinIndex.fromArrayBuffer(readFileSync(new URL('data/bin-index.bin', root)).buffer.slice(0));
// Rebuilt with the embedded artifact's own build time, the shipped layers must give it byte for byte.
const built = await buildConfigured(dataDir, await readSourcesConfig(dataDir), { builtAt: embedded.builtAt });
const result = built.result;

describe('the shipped layers (round trip)', () => {
  it('accepts every row of the overrides and of the embedded binlist source and answers each as precedence says', () => {
    expect(result.layers.map((l) => [l.name, l.format, l.rowsRead, l.accepted, l.rejected.length])).toEqual([
      ['overrides', 'overrides', 2, 2, 0],
      ['binlist', 'binlist', 5805, 5805, 0],
    ]);
    expect(result.verify.checkedRows).toBe(5807);
    expect(result.verify.failures).toEqual([]);
  });

  it('lets the overrides beat binlist where they correct it', () => {
    expect(result.layers[0]).toMatchObject({ used: 2, overridden: 0 });
    expect(result.layers[1]).toMatchObject({ overridden: 2 });
    const greenland = BinIndex.fromArrayBuffer(result.artifact).find('4571647100000000')!.record;
    expect(greenland).toMatchObject({ countryCode: 'GL', currency: 'DKK', issuerName: 'Grønlandsbanken A/S' });
  });

  it('is the artifact the Worker embeds (data/bin-index.bin), data version included', () => {
    const fresh = new Uint8Array(result.artifact);
    expect(Buffer.from(readFileSync(new URL('data/bin-index.bin', root))).equals(Buffer.from(fresh))).toBe(true);
    expect(embedded.dataVersion).toBe(built.dataVersion);
    expect(embedded.dataVersion).toMatch(
      /^overrides@[0-9a-f]{12},binlist@[0-9a-f]{12};built=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
  });

  it('answers a lookup for every accepted row from the compiled artifact', () => {
    const index = BinIndex.fromArrayBuffer(result.artifact);
    for (const row of result.rows) {
      const pan = String(row.start).padStart(8, '0') + '00000000';
      expect(index.find(pan)?.source, `line ${row.line}`).toBe('data');
    }
  });
});

describe('buildIndex on a broken source', () => {
  const header =
    'iin_start,iin_end,number_length,scheme,brand,type,prepaid,country,bank_name,bank_logo,bank_url,bank_phone,bank_city';
  const good = '457173,,,VISA,,DEBIT,,GB,Bank,,,,';

  it('fails with the line numbers of the rejected rows when too many are broken', () => {
    const csv = [header, good, '12AB56,,,VISA,,DEBIT,,GB,Bank,,,,', '457174,457170,,VISA,,DEBIT,,GB,Bank,,,,'].join(
      '\n',
    );
    expect(() => buildIndex(csv)).toThrow(BrokenSourceError);
    expect(() => buildIndex(csv)).toThrow(/line 3: .*line 4: /);
  });

  it('fails on a header no importer knows', () => {
    expect(() => buildIndex('a,b,c\n1,2,3')).toThrow(/Unrecognised CSV header/);
  });

  it('fails on a source with no rows', () => {
    expect(() => buildIndex(header)).toThrow(BrokenSourceError);
  });

  it('fails on malformed CSV', () => {
    expect(() => buildIndex(`${header}\n"457173,,,VISA`)).toThrow(/Malformed CSV/);
  });

  it('tolerates a few rejected rows and reports them with their lines', () => {
    const rows = Array.from({ length: 40 }, (_, i) => `4571${String(10 + i)},,,VISA,,DEBIT,,GB,Bank,,,,`);
    const result = buildIndex([header, ...rows, 'bad,,,VISA,,DEBIT,,GB,Bank,,,,'].join('\n'));
    expect(result.rejected).toEqual([{ line: 42, reason: expect.any(String) }]);
  });
});
