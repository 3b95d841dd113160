import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { loadWorldpayDocs, worldpayDocsDir } from './test/compat/worldpay-docs.ts';

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

/** Tests use the documented local secrets, never a developer's own .dev.vars. */
const devVars = parseEnv(readFileSync(new URL('./.dev.vars.example', import.meta.url), 'utf8'));

export default defineConfig({
  test: {
    // Request log lines are printed for failed tests only.
    silent: 'passed-only',
    // In CI, also write a machine-readable summary that .ci/run turns into its closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    projects: [
      {
        // The Worker and everything it imports, inside workerd.
        plugins: [
          cloudflareTest({
            main: './src/index.ts',
            wrangler: { configPath: './wrangler.toml' },
            miniflare: { bindings: { ...devVars, ENVIRONMENT: 'test' } },
          }),
        ],
        test: {
          name: 'worker',
          include: ['test/worker/**/*.test.ts'],
          // Worldpay's published documents, read where they are kept (../shared), never copied.
          provide: {
            worldpay: loadWorldpayDocs(worldpayDocsDir(fileURLToPath(new URL('.', import.meta.url)))),
            // Our own OpenAPI document, built from the schemas: every answer is checked against it.
            openapi: openApiDocument(),
          },
        },
      },
      {
        // The build scripts run on Node at build time, so their tests run on Node too.
        test: { name: 'scripts', include: ['test/scripts/**/*.test.ts'], environment: 'node' },
      },
      {
        // The 3DS pages in headless Chromium, against the bundled Worker served by Miniflare.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
