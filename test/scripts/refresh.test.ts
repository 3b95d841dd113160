import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BinIndex } from '../../src/bin/bin-index';
import { readSourcesConfig, sha256Hex } from '../../scripts/bin-data/layers';
import { DataCommandError, refresh, type Io } from '../../scripts/bin-data/refresh';

/**
 * data:refresh end to end against a temporary data directory and an HTTP server started here
 * (no internet in tests): download with progress, NOTICE and SHA-256, the layer added or
 * replaced, the diff report, and nothing written when anything fails.
 */

const BINLIST = [
  'iin_start,iin_end,number_length,scheme,brand,type,prepaid,country,bank_name,bank_logo,bank_url,bank_phone,bank_city',
  '45717360,,16,VISA,Visa/Dankort,DEBIT,,DK,Example Danish Bank,,,,',
  '411773,411776,,VISA,VISA BUSINESS,CREDIT,,GB,Example Bank plc,,,,',
  '525320,,,MASTERCARD,ELECTRON,CREDIT,,BR,Example Banco,,,,',
].join('\n');
const CANONICAL = [
  'bin_start,bin_end,brands,funding_type,issuer_name,country_code,category,anonymous_prepaid,multiple_account_access,number_type',
  '411111,,visa,credit,Canonical Bank,GB,consumer,,,pan',
  '411112,,visa,debit,Canonical Bank,GB,consumer,,,pan',
].join('\n');
const VENELINKOCHEV_HEADER = 'BIN,Brand,Type,Category,Issuer,IssuerPhone,IssuerUrl,isoCode2,isoCode3,CountryName';
const venelinkochev = (rows: string[]): string => [VENELINKOCHEV_HEADER, ...rows].join('\n') + '\n';
const FIRST = venelinkochev([
  '400001,VISA,DEBIT,CLASSIC,Alpha Bank,,,GB,GBR,UNITED KINGDOM',
  '400002,VISA,CREDIT,GOLD,Alpha Bank,,,GB,GBR,UNITED KINGDOM',
  '510001,MASTERCARD,DEBIT,STANDARD,Beta Bank,,,FR,FRA,FRANCE',
  // In the binlist fixture too: binlist (the earlier layer) keeps it.
  '525320,MASTERCARD,DEBIT,STANDARD,Late Banco,,,PT,PRT,PORTUGAL',
]);

let server: Server;
let base: string;
const served = new Map<string, { status: number; body: string }>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const file = served.get(req.url ?? '');
    if (!file) {
      res.writeHead(404).end('not here');
      return;
    }
    const body = Buffer.from(file.body);
    res.writeHead(file.status, { 'Content-Length': body.length, 'Content-Type': 'text/csv' });
    // Two chunks, so the progress callback sees the download advance.
    res.write(body.subarray(0, body.length >> 1));
    setTimeout(() => res.end(body.subarray(body.length >> 1)), 5);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

let dataDir: string;
let out: string;
let output: string[];
const io: Io = { log: (m) => output.push(m), write: (s) => output.push(s), tty: false };

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'bin-refresh-'));
  out = join(dataDir, 'bin-index.bin');
  output = [];
  await mkdir(join(dataDir, 'binlist'));
  await writeFile(join(dataDir, 'binlist', 'ranges.csv'), BINLIST);
  await writeFile(
    join(dataDir, 'bin-source.json'),
    JSON.stringify({ layers: [{ name: 'binlist', source: 'binlist/ranges.csv', format: 'binlist' }] }),
  );
  served.clear();
  served.set('/bin-list-data.csv', { status: 200, body: FIRST });
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

async function snapshot(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else files[prefix + entry.name] = sha256Hex(await readFile(join(dir, entry.name)));
    }
  };
  await walk(dataDir, '');
  return files;
}

const index = async (): Promise<BinIndex> => BinIndex.fromArrayBuffer((await readFile(out)).buffer.slice(0));
const options = (extra: Partial<Parameters<typeof refresh>[0]> = {}): Parameters<typeof refresh>[0] => ({
  dataDir,
  source: 'venelinkochev',
  url: `${base}/bin-list-data.csv`,
  out,
  io,
  builtAt: new Date('2026-11-22T12:00:00Z'),
  ...extra,
});

describe('data:refresh --source venelinkochev (from a local server)', () => {
  it('downloads with progress, keeps the file with its NOTICE and SHA-256, and adds the layer last', async () => {
    const outcome = await refresh(options());
    const sha = sha256Hex(new TextEncoder().encode(FIRST));

    const kept = await readFile(join(dataDir, 'sources', 'venelinkochev', 'bin-list-data.csv'), 'utf8');
    expect(kept).toBe(FIRST);
    const config = await readSourcesConfig(dataDir);
    expect(config.layers.map((l) => l.name)).toEqual(['binlist', 'venelinkochev']);
    expect(config.layers[1]).toEqual({
      name: 'venelinkochev',
      source: 'sources/venelinkochev/bin-list-data.csv',
      format: 'venelinkochev',
      sha256: sha,
      url: `${base}/bin-list-data.csv`,
      retrieved: '2026-11-22T12:00:00Z',
      licence: 'CC-BY-4.0',
    });

    const notice = await readFile(join(dataDir, 'sources', 'venelinkochev', 'NOTICE'), 'utf8');
    expect(notice).toContain('"BIN List Data" by Venelin Kochev');
    expect(notice).toContain('https://github.com/venelinkochev/bin-list-data');
    expect(notice).toContain('CC-BY-4.0 (https://creativecommons.org/licenses/by/4.0/)');
    expect(notice).toContain(`SHA-256 ${sha}`);
    expect(notice).toContain('Changes made by this project');

    // Progress: non-TTY output is one line per quarter, ending at 100%.
    const progress = output.filter((l) => l.startsWith('[data:refresh] venelinkochev'));
    expect(progress[0]).toMatch(/ 0% /);
    expect(progress.at(-1)).toMatch(/ 100% /);

    const idx = await index();
    expect(idx.find('4000010000000000')?.record).toMatchObject({ issuerName: 'Alpha Bank', countryCode: 'GB' });
    expect(idx.find('5253200000000000')?.record.issuerName).toBe('Example Banco');
    expect(idx.dataVersion).toBe(outcome.built.dataVersion);
    expect(idx.dataVersion).toMatch(new RegExp(`,venelinkochev@${sha.slice(0, 12)};built=2026-11-22T12:00:00Z$`));
    expect(outcome.built.result.layers[1]).toMatchObject({ rowsRead: 4, accepted: 4, used: 3, overridden: 1 });
  });

  it('writes a report of what the refresh changes, BIN by BIN', async () => {
    await refresh(options());
    served.set('/bin-list-data.csv', {
      status: 200,
      body: venelinkochev([
        '400001,VISA,DEBIT,CLASSIC,Alpha Bank,,,IE,IRL,IRELAND',
        '400002,VISA,DEBIT,GOLD,Alpha Bank,,,GB,GBR,UNITED KINGDOM',
        '510002,MASTERCARD,DEBIT,STANDARD,Gamma Bank,,,FR,FRA,FRANCE',
        '510003,MASTERCARD,DEBIT,STANDARD,Gamma Bank,,,FR,FRA,FRANCE',
        '525320,MASTERCARD,DEBIT,STANDARD,Late Banco,,,PT,PRT,PORTUGAL',
      ]),
    });
    const { diff, report } = await refresh(options({ force: true }));
    expect(diff).toMatchObject({ added: 2, removed: 1, changed: 2 });
    expect(diff.changedFields).toMatchObject({ countryCode: 1, currency: 1, fundingType: 1, issuerName: 0 });
    expect(diff.topIssuers).toEqual([
      { name: 'Alpha Bank', added: 0, removed: 0, changed: 2 },
      { name: 'Gamma Bank', added: 2, removed: 0, changed: 0 },
      { name: 'Beta Bank', added: 0, removed: 1, changed: 0 },
    ]);
    expect(diff.topCountries).toContainEqual({ name: 'GB → IE', added: 0, removed: 0, changed: 1 });
    expect(await readFile(join(dataDir, 'refresh-report.md'), 'utf8')).toBe(report);
    expect(report).toMatch(/\| added \| 2 \|/);
    expect(report).toMatch(/\| GB → IE \| 0 \| 0 \| 1 \|/);
    // The same layer was replaced, not added twice.
    expect((await readSourcesConfig(dataDir)).layers.map((l) => l.name)).toEqual(['binlist', 'venelinkochev']);
  });

  it('says the machine is offline and how to refresh anyway, writing nothing', async () => {
    const before = await snapshot();
    // A port nothing listens on: connection refused, as with no network.
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const attempt = refresh(options({ url: `http://127.0.0.1:${port}/bin-list-data.csv` }));
    await expect(attempt).rejects.toThrow(DataCommandError);
    await expect(refresh(options({ url: `http://127.0.0.1:${port}/x.csv` }))).rejects.toThrow(
      /127\.0\.0\.1:\d+ cannot be reached \(ECONNREFUSED\): this machine looks offline\. To refresh offline, download https:\/\/raw\.githubusercontent\.com\/venelinkochev\/bin-list-data\/master\/bin-list-data\.csv on a machine with internet, then run: npm run data:refresh -- --source venelinkochev --file <the file>/,
    );
    expect(await snapshot()).toEqual(before);
  });

  it('takes a file downloaded elsewhere with --file, with the same NOTICE and checks', async () => {
    const file = join(dataDir, '..', `${Date.now()}-bin-list-data.csv`);
    await writeFile(file, FIRST);
    try {
      await refresh(options({ url: undefined, file }));
      const config = await readSourcesConfig(dataDir);
      expect(config.layers[1]).toMatchObject({
        name: 'venelinkochev',
        sha256: sha256Hex(new TextEncoder().encode(FIRST)),
      });
      expect(config.layers[1]!.url).toBeUndefined();
      expect(await readFile(join(dataDir, 'sources', 'venelinkochev', 'NOTICE'), 'utf8')).toContain(
        `taken from ${file}`,
      );
    } finally {
      await rm(file, { force: true });
    }
  });

  it('writes nothing when the server answers an error or the file does not build', async () => {
    const before = await snapshot();
    served.set('/bin-list-data.csv', { status: 500, body: 'oops' });
    await expect(refresh(options())).rejects.toThrow(/answered 500/);
    served.set('/bin-list-data.csv', { status: 200, body: 'no,such,format\n1,2,3\n' });
    await expect(refresh(options())).rejects.toThrow(/CSV header lacks the venelinkochev columns/);
    served.set('/bin-list-data.csv', { status: 200, body: venelinkochev(['12,VISA,DEBIT,,Bad,,,GB,GBR,UK']) });
    await expect(refresh(options())).rejects.toThrow(/broken source: layer venelinkochev: no usable rows/);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses to shrink the index by more than half without --force', async () => {
    await refresh(options());
    await writeFile(
      join(dataDir, 'bin-source.json'),
      JSON.stringify({ layers: [{ name: 'venelinkochev', source: 'sources/venelinkochev/bin-list-data.csv' }] }),
    );
    served.set('/bin-list-data.csv', { status: 200, body: venelinkochev(['400001,VISA,DEBIT,,A,,,GB,GBR,UK']) });
    await expect(refresh(options())).rejects.toThrow(/refusing to shrink/);
    await refresh(options({ force: true }));
    expect((await index()).sourceRowCount).toBe(1);
  });
});

describe('data:refresh --source <path or URL>', () => {
  it('takes any URL, naming the layer after the detected format', async () => {
    served.set('/any/export.csv', { status: 200, body: FIRST });
    await refresh(options({ source: `${base}/any/export.csv`, url: undefined }));
    const config = await readSourcesConfig(dataDir);
    expect(config.layers[1]).toMatchObject({ name: 'venelinkochev', source: 'sources/venelinkochev/export.csv' });
    expect(config.layers[1]!.licence).toBeUndefined();
  });

  it('takes a path, replacing the layer of the same name in place', async () => {
    const path = join(dataDir, '..', `${Date.now()}-canonical.csv`);
    await writeFile(path, CANONICAL);
    try {
      await refresh(options({ source: path, url: undefined, layer: 'binlist', force: true }));
    } finally {
      await rm(path, { force: true });
    }
    const config = await readSourcesConfig(dataDir);
    expect(config.layers).toEqual([
      expect.objectContaining({ name: 'binlist', source: 'binlist/ranges.csv', format: 'canonical' }),
    ]);
    expect(await readFile(join(dataDir, 'binlist', 'ranges.csv'), 'utf8')).toBe(CANONICAL);
    expect((await index()).find('4111120000000000')?.record.issuerName).toBe('Canonical Bank');
  });
});
