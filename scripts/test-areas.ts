/**
 * Which worker test files `npm run test:changed` runs for a change under src/ (scripts/test-changed.ts,
 * docs/README.md "Working on the code"). Vitest's related mode cannot choose them: every worker file
 * calls the Worker through test/worker/helpers.ts, which imports src/index.ts, which imports all of
 * src/, so any change there is related to all of them (about 48 files, two minutes or more). Here
 * instead each source file belongs to one area (the first whose patterns match it), and an area
 * names the worker files that exercise it. Before them come the worker files whose name holds the
 * changed file's base name (src/storage/schema-version.ts: threeds-schema-version), then those that
 * import the changed file themselves; all are taken in that order while their measured times fit
 * a budget that keeps the run within about a minute on a shared 2-core machine (docs/benchmarks.md
 * "The test suite"). What is left out is printed, and `--all` runs it.
 *
 * test/scripts/test-areas.test.ts holds the map to the tree: every file under src/ is in an area,
 * every worker test file is named by one, and every name and pattern here still matches something.
 */

/** The Worker's entry, which test/worker/helpers.ts imports (vitest.config.ts's `main`). */
export const ENTRY = 'src/index.ts';

/** Where the worker project's test files are (vitest.config.ts). */
export const WORKER_TESTS = 'test/worker';

export interface Area {
  name: string;
  /** Source files, as globs from the repository's root (`*`: within a name, `**`: any folders). */
  src: string[];
  /** The worker test files run for a change in the area, by name (`threeds-flow`: test/worker/threeds-flow.test.ts). */
  tests: string[];
  /** The area's other worker files, left out to stay within the minute: `--all` runs them. */
  more?: string[];
}

/**
 * Each worker file's own time in seconds (its tests, without starting it), from vitest's JSON report
 * of a run with four files at once on the shared 2-core machine (2026-11-28, load average 1 to 4;
 * `npm run test:profile` prints them again). A new file needs its line: the test says so.
 */
export const SECONDS: Record<string, number> = {
  'atomic-commits': 2,
  'bin-lookup': 1,
  'bursts-with-faults': 18,
  'card-numbers-in-text': 2,
  'challenge-reposts': 1,
  credentials: 1,
  'emv-secure-channel': 1,
  'event-log-schema-version': 1,
  'event-shards': 5,
  events: 12,
  'events-api': 17,
  inputs: 1,
  'media-types': 1,
  'merchant-config': 1,
  'object-alarms': 1,
  'pan-lookup-answers': 1,
  'pan-lookup-errors': 1,
  pipeline: 1,
  'pool-console-gate': 1,
  'projection-resets': 5,
  projections: 14,
  sandbox: 2,
  'service-routes': 1,
  settings: 1,
  'storage-freed': 2,
  'test-sdk': 2,
  'threeds-3ri': 17,
  'threeds-alarm-memory': 1,
  'threeds-app': 1,
  'threeds-concurrency': 3,
  'threeds-decoupled': 1,
  'threeds-errors': 1,
  'threeds-events': 19,
  'threeds-exemptions': 1,
  'threeds-faults': 3,
  'threeds-flow': 2,
  'threeds-live': 16,
  'threeds-live-3ri': 7,
  'threeds-live-app': 4,
  'threeds-live-decoupled': 2,
  'threeds-live-exemptions': 1,
  'threeds-live-faults': 44,
  'threeds-network-tokens': 1,
  'threeds-schema-version': 1,
  'threeds-state': 2,
  'threeds-step-costs': 2,
  'threeds-tokens': 1,
  'threeds-transaction': 4,
  'token-crypto': 1,
  'token-events': 2,
  'token-lifecycle': 9,
  'token-lifecycle-faults': 20,
  'token-schema-version': 1,
  tokens: 4,
  'tokens-faults': 28,
  'worldpay-compat': 2,
  'worldpay-v3': 2,
};

/** What starting a worker file costs besides its tests (vitest's "import": the Worker through Vite), in seconds. */
export const START_SECONDS = 5;

/**
 * The worker files' summed seconds (each file's SECONDS and START_SECONDS) a run may take: four files
 * run at once, so 120 is about 30 s of the minute; the builds and vitest's own start take 10 to 15 s
 * more, and a busy machine a third more again (docs/benchmarks.md "The test suite").
 */
export const BUDGET_SECONDS = 120;

/** A file longer than this is never chosen but by `--all` or a change to the file: alone, it would fill the minute. */
export const LONGEST_SECONDS = 30;

/** The smoke set: one or two quick files per domain, for what every request goes through. */
const SMOKE = [
  'pipeline',
  'service-routes',
  'inputs',
  'media-types',
  'bin-lookup',
  'pan-lookup-answers',
  'threeds-flow',
  'threeds-errors',
  'tokens',
  'events',
  'threeds-live',
  'credentials',
  'sandbox',
  'card-numbers-in-text',
  'pan-lookup-errors',
  'settings',
  'worldpay-v3',
  'worldpay-compat',
];

/**
 * The areas, the more specific first: a file belongs to the first area with a pattern matching it.
 * An area's tests come in the order they are chosen in, while the budget allows.
 */
export const AREAS: Area[] = [
  {
    name: 'threeds-live',
    src: [
      'src/threeds/live/**',
      'src/threeds/transaction/live-*.ts',
      'src/threeds/steps/live-parts.ts',
      'src/live.ts',
      'src/emv/**',
      // The live worker tests call the fake provider's bundle (npm run build:fake, before the run).
      'src/fake-3ds-server/**',
    ],
    tests: [
      'threeds-live',
      'threeds-live-decoupled',
      'threeds-live-app',
      'emv-secure-channel',
      'test-sdk',
      'threeds-app',
      'threeds-live-3ri',
      'threeds-live-exemptions',
      'threeds-network-tokens',
      'threeds-events',
      'media-types',
      'service-routes',
    ],
    more: ['threeds-live-faults'],
  },
  {
    name: 'threeds-app',
    src: [
      'src/threeds/app-*.ts',
      'src/threeds/transaction/app-challenge.ts',
      'src/routes/threeds/app-issuer-routes.ts',
      'src/app/test-app-issuer.ts',
    ],
    tests: [
      'threeds-app',
      'test-sdk',
      'threeds-flow',
      'threeds-schema-version',
      'threeds-step-costs',
      'threeds-errors',
    ],
    more: ['threeds-live', 'threeds-live-app'],
  },
  {
    name: 'threeds-series',
    src: [
      'src/threeds/series-rules.ts',
      'src/threeds/transaction/series*.ts',
      'src/threeds/transaction/three-ri-run.ts',
      'src/threeds/steps/merchant-initiated.ts',
      'src/routes/threeds/merchant-initiated.ts',
    ],
    tests: ['threeds-3ri', 'threeds-live-3ri', 'threeds-flow', 'threeds-errors', 'threeds-state'],
    more: ['threeds-live-faults'],
  },
  {
    name: 'threeds',
    src: ['src/threeds/**', 'src/routes/threeds/**', 'src/schemas/threeds-requests*.ts'],
    tests: [
      'threeds-flow',
      'threeds-app',
      'threeds-decoupled',
      'threeds-state',
      'threeds-transaction',
      'threeds-concurrency',
      'threeds-faults',
      'threeds-errors',
      'threeds-exemptions',
      'threeds-step-costs',
      'threeds-schema-version',
      'threeds-alarm-memory',
      'threeds-tokens',
      'challenge-reposts',
      'sandbox',
      'threeds-live',
    ],
    more: [
      'threeds-3ri',
      'projections',
      'threeds-events',
      'threeds-live-3ri',
      'threeds-live-exemptions',
      'threeds-network-tokens',
      'threeds-live-faults',
      'worldpay-v3',
      'worldpay-compat',
    ],
  },
  {
    name: 'tokens',
    src: [
      'src/tokens/**',
      'src/records/**',
      'src/cards/token-card.ts',
      'src/cards/card-crypto.ts',
      'src/routes/token-endpoints.ts',
      'src/schemas/token-requests.ts',
    ],
    tests: [
      'tokens',
      'token-lifecycle',
      'token-lifecycle-faults',
      'tokens-faults',
      'token-events',
      'token-crypto',
      'token-schema-version',
      'threeds-tokens',
      'card-numbers-in-text',
    ],
    more: ['bursts-with-faults', 'projection-resets', 'worldpay-compat', 'worldpay-v3'],
  },
  {
    name: 'events',
    src: ['src/events/**', 'src/routes/event-endpoints.ts', 'src/storage/event-outbox.ts'],
    tests: [
      'events',
      'events-api',
      'event-shards',
      'event-log-schema-version',
      'token-events',
      'threeds-events',
      'atomic-commits',
      'object-alarms',
    ],
  },
  {
    name: 'bin',
    src: [
      'src/bin/**',
      'src/cards/**',
      'src/reference-data/**',
      'src/routes/bin-lookup.ts',
      'src/routes/pan-lookup.ts',
      'src/schemas/card-bin-requests.ts',
    ],
    tests: [
      'bin-lookup',
      'pan-lookup-answers',
      'pan-lookup-errors',
      'card-numbers-in-text',
      'threeds-network-tokens',
      'threeds-flow',
      'tokens',
      'inputs',
    ],
  },
  {
    name: 'storage',
    src: ['src/storage/**', 'src/backoff.ts'],
    tests: [
      'atomic-commits',
      'object-alarms',
      'storage-freed',
      'threeds-alarm-memory',
      'threeds-schema-version',
      'threeds-faults',
      'threeds-flow',
      'threeds-step-costs',
      'tokens',
      'projection-resets',
      'token-lifecycle-faults',
      'events',
      'projections',
      'bursts-with-faults',
      'pool-console-gate',
    ],
    more: ['tokens-faults', 'threeds-live-faults', 'threeds-events', 'token-events'],
  },
  {
    name: 'access',
    src: [
      'src/merchants/**',
      'src/config/**',
      'src/credentials/**',
      'src/http/basic-auth.ts',
      'src/http/publishable-keys.ts',
    ],
    tests: [
      'credentials',
      'settings',
      'merchant-config',
      'token-crypto',
      'bin-lookup',
      'pipeline',
      'inputs',
      'service-routes',
    ],
  },
  {
    // What every request goes through: a smoke set across the domains.
    name: 'shared',
    src: [
      'src/index.ts',
      'src/env.d.ts',
      'src/*.ts',
      'src/app/**',
      'src/http/**',
      'src/schemas/**',
      'src/routes/**',
      'src/demo/**',
    ],
    tests: SMOKE,
  },
];

/** The file a test name stands for. */
export function testFile(name: string): string {
  return `${WORKER_TESTS}/${name}.test.ts`;
}

/** A test file's name as the map writes it (test/worker/threeds-flow.test.ts: threeds-flow). */
export function testName(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1).replace(/\.test\.ts$/, '');
}

/** Whether `path` (from the repository's root, `/`-separated) matches the glob `pattern`. */
export function matches(pattern: string, path: string): boolean {
  const parts = pattern.split('/');
  const source = parts
    .map((part, i) => {
      const last = i === parts.length - 1;
      if (part === '**') return last ? '.*' : '(?:[^/]+/)*';
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*') + (last ? '' : '/');
    })
    .join('');
  return new RegExp(`^${source}$`).test(path);
}

/** The area a source file belongs to: the first whose patterns match it, or undefined. */
export function areaOf(file: string, areas: Area[] = AREAS): Area | undefined {
  return areas.find((area) => area.src.some((pattern) => matches(pattern, file)));
}

/** Whether a test file's name holds the source file's base name, whole words between dashes. */
export function nameMatches(srcFile: string, test: string): boolean {
  const base = srcFile.slice(srcFile.lastIndexOf('/') + 1).replace(/(\.d)?\.ts$/, '');
  return `-${testName(test)}-`.includes(`-${base}-`);
}

export interface WorkerChoice {
  /** Chosen test file → why, one reason per changed file that chose it. */
  chosen: Map<string, string[]>;
  /** Worker files of the changed files' areas (or matched by name or import) that were left out → why. */
  leftOut: Map<string, string>;
  /** Changed source files no area claims: they get the shared area's files, and the map needs them. */
  unmapped: string[];
}

/** A worker file's cost against BUDGET_SECONDS. */
export function costOf(test: string): number {
  return (SECONDS[testName(test)] ?? LONGEST_SECONDS) + START_SECONDS;
}

/**
 * The worker test files for the changed source files: first those named after a changed file, then
 * those importing one, then each area's files in the area's order (the areas of several changed
 * files in turn), each while BUDGET_SECONDS allows; none longer than LONGEST_SECONDS.
 *
 * @param changed changed files under src/, from the repository's root
 * @param workerTests the worker project's test files, from the repository's root
 * @param importsOf the source files a worker test file imports itself (not through its helpers)
 */
export function chooseWorkerTests(
  changed: string[],
  workerTests: string[],
  importsOf: (test: string) => string[],
  areas: Area[] = AREAS,
): WorkerChoice {
  const candidates: { test: string; why: string; rank: number }[] = [];
  const leftOut = new Map<string, string>();
  const unmapped: string[] = [];
  const existing = new Set(workerTests);
  const shared = areas.find((area) => area.name === 'shared');
  for (const file of changed) {
    for (const test of workerTests) {
      if (nameMatches(file, test)) candidates.push({ test, why: `${file}: its name`, rank: 0 });
      // Every worker file reaches the entry; one that imports it too (to call it) is not about it.
      if (file !== ENTRY && importsOf(test).includes(file))
        candidates.push({ test, why: `${file}: imports it`, rank: 1 });
    }
    let area = areaOf(file, areas);
    if (!area) {
      unmapped.push(file);
      area = shared;
    }
    if (!area) continue;
    area.tests.forEach((name, i) =>
      candidates.push({ test: testFile(name), why: `${file}: area ${area.name}`, rank: 2 + i }),
    );
    for (const name of area.more ?? []) leftOut.set(testFile(name), `area ${area.name}, not in its quick set`);
  }
  candidates.sort((x, y) => x.rank - y.rank);

  const chosen = new Map<string, string[]>();
  let spent = 0;
  for (const { test, why } of candidates) {
    if (!existing.has(test)) continue;
    const reasons = chosen.get(test);
    if (reasons) {
      reasons.push(why);
      continue;
    }
    if ((SECONDS[testName(test)] ?? 0) > LONGEST_SECONDS) {
      leftOut.set(test, `${SECONDS[testName(test)]} s on its own, longer than ${LONGEST_SECONDS}`);
    } else if (spent + costOf(test) > BUDGET_SECONDS) {
      if (!leftOut.has(test)) leftOut.set(test, `${why}, beyond the budget of ${BUDGET_SECONDS} s`);
    } else {
      spent += costOf(test);
      chosen.set(test, [why]);
      leftOut.delete(test);
    }
  }
  for (const test of [...leftOut.keys()]) if (chosen.has(test) || !existing.has(test)) leftOut.delete(test);
  return { chosen, leftOut, unmapped };
}

/**
 * The repository files a test file's source imports itself, as written (`'../../src/x'` from
 * test/worker/a.test.ts: src/x.ts), type-only imports included.
 */
export function importsIn(testPath: string, source: string): string[] {
  const dir = testPath.slice(0, testPath.lastIndexOf('/'));
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const parts = dir.split('/');
    for (const part of m[1]!.split('/')) {
      if (part === '..') parts.pop();
      else if (part !== '.') parts.push(part);
    }
    const path = parts.join('/');
    found.push(/\.[a-z]+$/.test(path) ? path : `${path}.ts`);
  }
  return found;
}
