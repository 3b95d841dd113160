import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { parseEnv } from 'node:util';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';

/**
 * Serves a project's Worker on a local port: bundled exactly as `wrangler deploy` bundles it, run
 * by Miniflare (the engine inside wrangler dev) with the bindings its wrangler.toml declares
 * (local KV, Durable Objects...) and the documented local secrets of `.dev.vars.example`. Used by
 * the browser tests and by the benchmark, which also serves an earlier commit's Worker this way.
 */

export interface LocalWorker {
  url: URL;
  stop: () => Promise<void>;
}

export interface LocalWorkerOptions {
  /** The project directory (its wrangler.toml, .dev.vars.example and data must be built). */
  root: string;
  /**
   * Source of an entry module put in front of the bundle's `index.js` (which it may import), for
   * a harness around the Worker; the bundle itself is unchanged.
   */
  entry?: string;
  /** Drop the Worker's own output (its log lines), as a benchmark wants. */
  quiet?: boolean;
}

export async function startLocalWorker(options: LocalWorkerOptions): Promise<LocalWorker> {
  const { root } = options;
  const outdir = mkdtempSync(join(tmpdir(), 'card-edge-bundle-'));
  execFileSync('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: root,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  // Miniflare takes the first module as the main one: the harness entry if any, else the bundle's.
  const modules = readdirSync(outdir)
    .filter((f) => f.endsWith('.bin'))
    .sort();
  modules.unshift('index.js');
  if (options.entry !== undefined) {
    writeFileSync(join(outdir, 'harness-entry.js'), options.entry);
    modules.unshift('harness-entry.js');
  }
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(root, 'wrangler.toml'));
  const secrets = parseEnv(readFileSync(join(root, '.dev.vars.example'), 'utf8')) as Record<string, string>;
  const mf = new Miniflare({
    ...workerOptions,
    modules: modules.map((name) => ({
      type: name.endsWith('.bin') ? ('Data' as const) : ('ESModule' as const),
      path: join(outdir, name),
      contents: readFileSync(join(outdir, name)),
    })),
    modulesRoot: outdir,
    modulesRules: undefined,
    bindings: { ...workerOptions.bindings, ...secrets, ENVIRONMENT: 'test' },
    host: '127.0.0.1',
    port: 0,
    ...(options.quiet
      ? { handleRuntimeStdio: (stdout: Readable, stderr: Readable) => void [stdout, stderr].forEach((s) => s.resume()) }
      : {}),
  } as ConstructorParameters<typeof Miniflare>[0]);
  const url = await mf.ready;
  return { url, stop: () => mf.dispose() };
}
