import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HEADER } from '../../src/bin/artifact-format';
import { BinIndex } from '../../src/bin/bin-index';
import { BrokenSourceError, buildIndex } from '../../scripts/bin-data/build';

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const config = JSON.parse(read('data/bin-source.json')) as { source: string };

describe('buildIndex on the shipped data (round trip)', () => {
  const result = buildIndex(read(config.source), { builtAt: new Date(0) });

  it('accepts every row of the embedded binlist source and answers each as written', () => {
    expect(result.format).toBe('binlist');
    expect(result.rejected).toEqual([]);
    expect(result.rows).toHaveLength(5805);
    expect(result.verify.checkedRows).toBe(5805);
    expect(result.verify.failures).toEqual([]);
  });

  it('is the artifact the Worker embeds (data/bin-index.bin), but for the build time', () => {
    const embedded = new Uint32Array(readFileSync(new URL('data/bin-index.bin', root)).buffer.slice(0));
    const fresh = new Uint32Array(result.artifact);
    expect(embedded.length).toBe(fresh.length);
    embedded[HEADER.builtAtSeconds] = 0;
    expect(Buffer.from(embedded.buffer).equals(Buffer.from(fresh.buffer))).toBe(true);
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
