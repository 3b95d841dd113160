import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  AREAS,
  BUDGET_SECONDS,
  LONGEST_SECONDS,
  SECONDS,
  areaOf,
  chooseWorkerTests,
  costOf,
  importsIn,
  matches,
  nameMatches,
  testFile,
  testName,
  WORKER_TESTS,
} from '../../scripts/test-areas.ts';

/** The repository's files under a folder, as git sees them (tracked and untracked, not ignored). */
function filesUnder(folder: string): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', folder], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

const srcFiles = filesUnder('src/');
const workerTests = filesUnder(`${WORKER_TESTS}/`).filter((file) => file.endsWith('.test.ts'));
const importsOf = (test: string) => importsIn(test, readFileSync(test, 'utf8'));

describe('the map of npm run test:changed (scripts/test-areas.ts)', () => {
  it('puts every file under src/ in an area', () => {
    expect(srcFiles.length).toBeGreaterThan(100);
    expect(srcFiles.filter((file) => !areaOf(file))).toEqual([]);
  });

  it('names every worker test file in an area, and only files that exist', () => {
    const named = new Set(AREAS.flatMap((area) => [...area.tests, ...(area.more ?? [])]).map(testFile));
    expect(workerTests.filter((test) => !named.has(test))).toEqual([]);
    expect([...named].filter((test) => !workerTests.includes(test))).toEqual([]);
  });

  it('has no pattern that matches nothing, and no area that another one before it hides', () => {
    for (const area of AREAS) {
      for (const pattern of area.src) {
        expect(
          srcFiles.some((file) => matches(pattern, file)),
          `${area.name}: ${pattern}`,
        ).toBe(true);
      }
      expect(
        srcFiles.some((file) => areaOf(file) === area),
        area.name,
      ).toBe(true);
    }
  });

  it('knows each worker file’s time, and no area’s quick set holds a file longer than the longest chosen', () => {
    expect(workerTests.filter((test) => !(testName(test) in SECONDS))).toEqual([]);
    expect(Object.keys(SECONDS).filter((name) => !workerTests.includes(testFile(name)))).toEqual([]);
    for (const area of AREAS) {
      expect(
        area.tests.filter((name) => SECONDS[name]! > LONGEST_SECONDS),
        area.name,
      ).toEqual([]);
    }
  });

  it('matches globs by path segments', () => {
    expect(matches('src/threeds/**', 'src/threeds/transaction/session.ts')).toBe(true);
    expect(matches('src/*.ts', 'src/index.ts')).toBe(true);
    expect(matches('src/*.ts', 'src/http/body.ts')).toBe(false);
    expect(matches('src/threeds/transaction/live-*.ts', 'src/threeds/transaction/live-watch.ts')).toBe(true);
    expect(matches('src/threeds/transaction/live-*.ts', 'src/threeds/transaction/session.ts')).toBe(false);
  });

  it('gives a file the first area that matches it, the specific before the general', () => {
    expect(areaOf('src/threeds/transaction/session.ts')?.name).toBe('threeds');
    expect(areaOf('src/threeds/transaction/live-watch.ts')?.name).toBe('threeds-live');
    expect(areaOf('src/threeds/live/three-ds-server.ts')?.name).toBe('threeds-live');
    expect(areaOf('src/threeds/series-rules.ts')?.name).toBe('threeds-series');
    expect(areaOf('src/tokens/token-group.ts')?.name).toBe('tokens');
    expect(areaOf('src/cards/card-crypto.ts')?.name).toBe('tokens');
    expect(areaOf('src/cards/resolve-card.ts')?.name).toBe('bin');
    expect(areaOf('src/storage/object-storage.ts')?.name).toBe('storage');
    expect(areaOf('src/storage/event-outbox.ts')?.name).toBe('events');
    expect(areaOf('src/index.ts')?.name).toBe('shared');
    expect(areaOf('src/http/body.ts')?.name).toBe('shared');
    expect(areaOf('src/somewhere-new/x.ts')).toBe(undefined);
  });

  it('matches a test file by whole words of the changed file’s base name', () => {
    expect(nameMatches('src/storage/schema-version.ts', 'test/worker/threeds-schema-version.test.ts')).toBe(true);
    expect(nameMatches('src/threeds/exemptions.ts', 'test/worker/threeds-live-exemptions.test.ts')).toBe(true);
    expect(nameMatches('src/tokens/token-events.ts', 'test/worker/token-events.test.ts')).toBe(true);
    expect(nameMatches('src/tokens/token-events.ts', 'test/worker/events.test.ts')).toBe(false);
    expect(nameMatches('src/threeds/transaction/session.ts', 'test/worker/threeds-transaction.test.ts')).toBe(false);
  });

  it('reads the repository files a test file imports itself', () => {
    const source = [
      "import { x } from '../../src/threeds/transaction/session-end';",
      "import type { Y } from '../../src/events/event-types';",
      "import { h } from './helpers';",
      "import data from '../../data/merchants.json';",
      "import { it } from 'vitest';",
      "const m = await import('../../src/live');",
    ].join('\n');
    expect(importsIn('test/worker/a.test.ts', source)).toEqual([
      'src/threeds/transaction/session-end.ts',
      'src/events/event-types.ts',
      'test/worker/helpers.ts',
      'data/merchants.json',
      'src/live.ts',
    ]);
  });

  it('chooses a change’s area, the files named after it and those importing it, and says why', () => {
    const { chosen, leftOut, unmapped } = chooseWorkerTests(['src/storage/schema-version.ts'], workerTests, importsOf);
    expect(unmapped).toEqual([]);
    expect(chosen.get('test/worker/atomic-commits.test.ts')).toEqual(['src/storage/schema-version.ts: area storage']);
    expect(chosen.get('test/worker/threeds-schema-version.test.ts')).toContain(
      'src/storage/schema-version.ts: its name',
    );
    expect(leftOut.get('test/worker/tokens-faults.test.ts')).toMatch(/area storage/);
    expect(chosen.has('test/worker/threeds-live-faults.test.ts')).toBe(false);

    const imported = chooseWorkerTests(['src/storage/alarm-runner.ts'], workerTests, importsOf);
    expect(imported.chosen.get('test/worker/threeds-alarm-memory.test.ts')).toContain(
      'src/storage/alarm-runner.ts: imports it',
    );
  });

  it('never chooses a file longer than LONGEST_SECONDS, even by name or import', () => {
    const { chosen, leftOut } = chooseWorkerTests(
      ['src/live.ts', 'src/storage/object-client.ts'],
      workerTests,
      importsOf,
    );
    expect(chosen.has('test/worker/threeds-live.test.ts')).toBe(true);
    expect(chosen.has('test/worker/threeds-live-faults.test.ts')).toBe(false);
    expect(leftOut.get('test/worker/threeds-live-faults.test.ts')).toMatch(/s on its own, longer than/);
  });

  it('stays within the budget: the files named after the change and importing it first, then the area in order', () => {
    const { chosen, leftOut } = chooseWorkerTests(['src/storage/object-storage.ts'], workerTests, importsOf);
    const spent = [...chosen.keys()].reduce((sum, test) => sum + costOf(test), 0);
    expect(spent).toBeLessThanOrEqual(BUDGET_SECONDS);
    expect(chosen.get('test/worker/tokens-faults.test.ts')).toEqual(['src/storage/object-storage.ts: imports it']);
    expect(chosen.has('test/worker/atomic-commits.test.ts')).toBe(true);
    expect(leftOut.get('test/worker/bursts-with-faults.test.ts')).toMatch(/area storage, beyond the budget/);
  });

  it('gives the entry the shared smoke set, a file or two per domain, not the files calling the entry', () => {
    const { chosen } = chooseWorkerTests(['src/index.ts'], workerTests, importsOf);
    for (const test of ['pipeline', 'bin-lookup', 'threeds-flow', 'threeds-live', 'tokens', 'events']) {
      expect(chosen.get(testFile(test))).toEqual(['src/index.ts: area shared']);
    }
    expect([...chosen.keys()].reduce((sum, test) => sum + costOf(test), 0)).toBeLessThanOrEqual(BUDGET_SECONDS);
  });

  it('gives a source file in no area the shared area’s files, and names it', () => {
    const { chosen, unmapped } = chooseWorkerTests(['src/somewhere-new/x.ts'], workerTests, () => []);
    expect(unmapped).toEqual(['src/somewhere-new/x.ts']);
    expect(chosen.has('test/worker/pipeline.test.ts')).toBe(true);
  });
});
