import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { hasWorldpayDocs, loadWorldpayDocs, worldpayDocsDir } from './test/compat/worldpay-docs.ts';

/** This service's OpenAPI document, which `npm test` builds first (`npm run build:openapi`). */
function openApiDocument(): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(new URL('./public/openapi.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
  } catch (e) {
    throw new Error(`public/openapi.json is missing or broken: run npm run build:openapi (${(e as Error).message})`, {
      cause: e,
    });
  }
}

/**
 * Worldpay's published OpenAPI documents (docs/compatibility.md): reference data kept outside the
 * repository, never copied into it. Without them the compatibility checks skip, and say so once;
 * CI has them and sets REQUIRE_WORLDPAY_DOCS, so that there they cannot silently skip.
 */
function worldpayDocs(): ReturnType<typeof loadWorldpayDocs> | null {
  const dir = worldpayDocsDir(fileURLToPath(new URL('.', import.meta.url)));
  if (hasWorldpayDocs(dir)) return loadWorldpayDocs(dir);
  const what =
    `Worldpay's OpenAPI documents are not in ${dir}: the Worldpay compatibility checks skip. ` +
    'To run them, set WORLDPAY_OPENAPI_DIR to the folder holding worldpay-3ds-openapi.yaml, ' +
    'worldpay-tokens-openapi.yaml and worldpay-card-bin-v1-openapi.transcribed.yaml.';
  if (process.env.REQUIRE_WORLDPAY_DOCS) throw new Error(`${what} (REQUIRE_WORLDPAY_DOCS is set)`);
  console.warn(`[skip] ${what}`);
  return null;
}

/** The origin the service calls the fake 3DS Server provider at, in the Worker tests. */
const FAKE_3DS_SERVER_URL = 'https://fake-3ds-server.test';

/** The fake 3DS Server provider as an auxiliary Worker of the Worker tests, from its bundle. */
function fake3dsServer() {
  const scriptPath = fileURLToPath(new URL('./dist/fake-3ds-server/index.js', import.meta.url));
  if (!existsSync(scriptPath)) throw new Error(`${scriptPath} is missing: run npm run build:fake`);
  return {
    name: 'fake-3ds-server',
    modules: true,
    scriptPath,
    compatibilityDate: '2026-04-20',
    bindings: { FAKE_API_KEY: devVars.THREEDS_SERVER_API_KEY! },
    durableObjects: {
      TRANSACTIONS: { className: 'FakeTransaction', useSQLite: true },
      CONTROL: { className: 'FakeControl', useSQLite: true },
    },
  };
}

/** Tests use the documented local secrets, never a developer's own .dev.vars. */
const devVars = parseEnv(readFileSync(new URL('./.dev.vars.example', import.meta.url), 'utf8'));

export default defineConfig({
  test: {
    // Request log lines are printed for failed tests only.
    silent: 'passed-only',
    // Files at once, across all projects. Vitest's default in `run` is one fewer than the cores:
    // one file at a time on a 2-core machine, while most files spend their time waiting on
    // deadlines, timers and workerd rather than on the CPU (docs/benchmarks.md "The test suite").
    // VITEST_MAX_WORKERS (or --maxWorkers) overrides it.
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS) || 4,
    // In CI, also write a machine-readable summary that .ci/run turns into its closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    projects: [
      {
        // The Worker and everything it imports, inside workerd.
        plugins: [
          cloudflareTest({
            main: './src/index.ts',
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                ...devVars,
                ENVIRONMENT: 'test',
                // Live tests (ENVIRONMENT=live per request) reach the fake 3DS Server provider
                // through the THREEDS_SERVER service binding; this is the origin its messages name.
                THREEDS_SERVER_URL: FAKE_3DS_SERVER_URL,
              },
              serviceBindings: { THREEDS_SERVER: 'fake-3ds-server' },
              // The fake 3DS Server provider (docs/fake-3ds-server.md), bundled by `npm run
              // build:fake` (pretest): a Worker beside the service, never part of it.
              workers: [fake3dsServer()],
              // A small lookup limit, so that the test of it needs a burst of 8, not of 130
              // (test/worker/bin-lookup.test.ts); deployments keep wrangler.toml's 120 a minute.
              ratelimits: { PREFIX_LOOKUPS_BY_KEY: { simple: { limit: 5, period: 60 } } },
            },
          }),
        ],
        // The compiled BIN index is a Data module (wrangler.toml's rule), loaded by workerd; this
        // only keeps Vite's import analysis off its bytes when `vitest --changed` or `related`
        // walks the module graph (npm run test:changed).
        assetsInclude: ['**/*.bin'],
        test: {
          name: 'worker',
          include: ['test/worker/**/*.test.ts'],
          // Generous, so that a busy machine slows the suite down without failing it; no test
          // measures time (the storage-deadline tests use 300 ms deadlines on calls that hang).
          testTimeout: 60_000,
          // Worldpay's published documents, read where they are kept (../shared), never copied.
          provide: {
            worldpay: worldpayDocs(),
            // Our own OpenAPI document, built from the schemas: every answer is checked against it.
            openapi: openApiDocument(),
            // PROFILE_REQUESTS=1 (with --silent=false): each file prints how its requests' time
            // moves from its first ten to its last ten (docs/benchmarks.md "The test suite").
            profileRequests: Boolean(process.env.PROFILE_REQUESTS),
          },
        },
      },
      {
        // The fake 3DS Server provider (docs/fake-3ds-server.md), its own Worker, inside workerd.
        plugins: [
          cloudflareTest({
            main: './src/fake-3ds-server/index.ts',
            wrangler: { configPath: './src/fake-3ds-server/wrangler.toml' },
          }),
        ],
        test: { name: 'fake', include: ['test/fake/**/*.test.ts'], testTimeout: 60_000 },
      },
      {
        // Pure modules of the Worker, each on its own: no runtime API beyond the web platform, so
        // they run on Node (type-checked with the Worker's types, tsconfig.json).
        // Timeouts as generous as the others': the files run side by side (maxWorkers), so a
        // CPU-bound test shares the cores, and a busy machine must slow it, never fail it.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 60_000 },
      },
      {
        // The build scripts run on Node at build time, so their tests run on Node too.
        test: { name: 'scripts', include: ['test/scripts/**/*.test.ts'], environment: 'node', testTimeout: 60_000 },
      },
      {
        // The Worker served on real ports (wrangler dev, and Miniflare alone), over real sockets.
        test: {
          name: 'served',
          include: ['test/served/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The 3DS pages in headless Chromium, against the bundled Worker served by Miniflare.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // What a page shows after a click (a token renamed, an event listed) comes after a
          // request through the Worker and its objects: on a busy machine that took more than
          // expect.poll's default second (a rename in demo.test.ts, beside another suite). A poll
          // ends when it succeeds, so only a failure waits this long.
          expect: { poll: { timeout: 20_000 } },
        },
      },
    ],
  },
});
