/**
 * The inner loop: the tests a change touches, in one vitest run (docs/README.md "Working on the code").
 *
 *   npm run test:changed                   the changes since HEAD: staged, unstaged, untracked
 *   npm run test:changed -- --base main    the changes since main (its merge base with HEAD)
 *   npm run test:changed -- HEAD~1         the same as --base HEAD~1
 *   npm run test:changed -- --all          every test file related to them (vitest's --changed)
 *   npm run test:changed -- --list         print the choice, run nothing
 *
 * The unit, scripts, fake, served and browser projects get vitest's related mode: the test files
 * whose imports reach a changed file. So does the worker project for changes outside src/ (a test
 * file, a helper). For a change under src/, the worker files come from scripts/test-areas.ts,
 * since every one of them imports the whole Worker: the changed file's area, the files named after
 * it, the files importing it. `--all` takes vitest's related mode for the worker project too (all
 * its files, for any change under src/). The choice is printed, with the reason for each file.
 * `npm run test:changed` builds the test inputs first (pretest:changed); it does not type-check.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { createVitest } from 'vitest/node';
import { chooseWorkerTests, importsIn, WORKER_TESTS } from './test-areas.ts';

/** The projects whose import graph says what a change touches (vitest.config.ts), by folder. */
const RELATED_FOLDERS = ['test/unit/', 'test/scripts/', 'test/fake/', 'test/served/', 'test/browser/'];

interface Options {
  base: string;
  all: boolean;
  list: boolean;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { base: 'HEAD', all: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--all') options.all = true;
    else if (arg === '--list') options.list = true;
    else if (arg === '--base') options.base = argv[++i] ?? 'HEAD';
    else if (!arg.startsWith('-')) options.base = arg;
    else throw new Error(`unknown option ${arg} (--base <ref>, --all, --list)`);
  }
  return options;
}

function git(...args: string[]): string[] {
  return execFileSync('git', args, { encoding: 'utf8' }).split('\n').filter(Boolean);
}

/** The files changed since `base`'s merge base with HEAD, in the work tree, and the untracked ones. */
function changedFiles(base: string): string[] {
  const since = git('merge-base', base, 'HEAD')[0]!;
  // Untracked files only (a symlinked node_modules is listed too, as a file git does not track).
  const untracked = git('ls-files', '--others', '--exclude-standard').filter((file) => lstatSync(file).isFile());
  const files = [...git('diff', '--name-only', since), ...untracked];
  return [...new Set(files)].sort();
}

const rel = (path: string) => relative(process.cwd(), path);

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const changed = changedFiles(options.base);
  console.log(`test:changed: ${changed.length} changed file(s) since ${options.base}`);
  for (const file of changed) console.log(`  ${file}`);
  if (!changed.length) return;

  const srcChanged = changed.filter((file) => file.startsWith('src/'));
  const otherChanged = changed.filter((file) => !file.startsWith('src/'));
  const absolute = (files: string[]) => files.map((file) => resolve(file));

  process.env.TEST ??= 'true';
  process.env.VITEST ??= 'true';
  process.env.NODE_ENV ??= 'test';
  const vitest = await createVitest('test', { watch: false, run: true });
  try {
    // Vitest's related mode runs every file for a change to package.json or its config (its
    // forceRerunTriggers); here only --all does, and the others count by their imports alone.
    const triggers = changed.filter((file) =>
      /(^|\/)(package\.json|vitest\.config\.[^/]+|vite\.config\.[^/]+)$/.test(file),
    );
    if (!options.all) vitest.config.forceRerunTriggers = [];
    // Vitest's related mode, one project group at a time (it reads the list from the config).
    const relatedTo = async (files: string[], folders: string[]) => {
      if (!files.length) return [];
      vitest.config.related = absolute(files);
      try {
        return (await vitest.getRelevantTestSpecifications(folders)).map((spec) => rel(spec.moduleId));
      } finally {
        vitest.config.related = undefined;
      }
    };
    const related = await relatedTo(changed, RELATED_FOLDERS);
    const workerRelated = await relatedTo(options.all ? changed : otherChanged, [`${WORKER_TESTS}/`]);

    const workerTests = git('ls-files', '--cached', '--others', '--exclude-standard', `${WORKER_TESTS}/*.test.ts`);
    const choice = options.all
      ? { chosen: new Map<string, string[]>(), leftOut: new Map<string, string>(), unmapped: [] }
      : chooseWorkerTests(srcChanged, workerTests, (test) => importsIn(test, readFileSync(test, 'utf8')));
    for (const test of workerRelated) {
      const why = changed.includes(test) ? 'changed' : 'related: imports a changed file';
      choice.chosen.set(test, [...(choice.chosen.get(test) ?? []), why]);
      choice.leftOut.delete(test);
    }

    console.log(`\nrelated (vitest's related mode: ${RELATED_FOLDERS.join(' ')}):`);
    for (const test of related) console.log(`  ${test}`);
    if (!related.length) console.log('  none');
    console.log(`\n${WORKER_TESTS} (${options.all ? 'related' : 'scripts/test-areas.ts, and related'}):`);
    for (const [test, why] of [...choice.chosen].sort()) console.log(`  ${test}  ← ${[...new Set(why)].join('; ')}`);
    if (!choice.chosen.size) console.log('  none');
    if (choice.leftOut.size) {
      console.log('\nleft out:');
      for (const [test, why] of [...choice.leftOut].sort()) console.log(`  ${test}  (${why})`);
    }
    if (triggers.length && !options.all) {
      console.log(`\n${triggers.join(', ')}: vitest's --changed would run every test file for it; --all does.`);
    }
    for (const file of choice.unmapped) {
      console.warn(`\n${file} is in no area of scripts/test-areas.ts: it got the shared area's files; add it there.`);
    }

    const files = [...related, ...choice.chosen.keys()];
    console.log(`\n${files.length} test file(s)`);
    if (options.list || !files.length) return;
    await vitest.start(files);
  } finally {
    await vitest.close();
  }
}

main().then(
  () => process.exit(),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
