import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { Miniflare } from 'miniflare';

/**
 * Serves the real Worker on a local port for the browser tests: bundled exactly as
 * `wrangler deploy` bundles it, run by Miniflare (the engine inside wrangler dev), with local
 * KV and Durable Objects, and the documented local secrets.
 */
export async function startWorker(): Promise<{ url: URL; stop: () => Promise<void> }> {
  const outdir = mkdtempSync(join(tmpdir(), 'card-edge-bundle-'));
  execFileSync('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', outdir], {
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  // The entry module comes first: Miniflare takes the first module as the main one.
  const modules = readdirSync(outdir)
    .filter((f) => f.endsWith('.bin'))
    .sort();
  modules.unshift('index.js');
  const secrets = parseEnv(readFileSync('.dev.vars.example', 'utf8')) as Record<string, string>;
  const mf = new Miniflare({
    modules: modules.map((name) => ({
      type: name.endsWith('.bin') ? 'Data' : 'ESModule',
      path: join(outdir, name),
      contents: readFileSync(join(outdir, name)),
    })),
    modulesRoot: outdir,
    compatibilityDate: '2026-04-20',
    kvNamespaces: ['SESSIONS'],
    durableObjects: {
      THREEDS_GUARD: { className: 'ThreeDsGuard', useSQLite: true },
      TOKEN_GUARD: { className: 'TokenGuard', useSQLite: true },
    },
    bindings: { ...secrets, ENVIRONMENT: 'test' },
    host: '127.0.0.1',
    port: 0,
  });
  const url = await mf.ready;
  return { url, stop: () => mf.dispose() };
}
