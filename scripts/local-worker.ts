import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  /** The workerd process serving it (for the benchmark's CPU readings), when it could be told. */
  pid?: number;
  /** workerd's inspector (DevTools protocol), when asked for with `inspector: true`. */
  inspector?: URL;
  /** The bundle's source map (JSON), when the inspector was asked for: to name profiled frames. */
  sourceMap?: string;
}

/** The workerd processes this Node process has started (the bench's floor finds its own with it too). */
export function workerdChildren(): Set<number> {
  const out = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && name.startsWith('workerd')) out.add(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** Starts Miniflare and tells which workerd process it started. */
async function started(options: ConstructorParameters<typeof Miniflare>[0]): Promise<LocalWorker> {
  const before = workerdChildren();
  const mf = new Miniflare(options);
  const url = await mf.ready;
  const pid = [...workerdChildren()].find((p) => !before.has(p));
  const inspector = options.inspectorPort !== undefined ? await mf.getInspectorURL() : undefined;
  return {
    url,
    stop: () => mf.dispose(),
    ...(pid !== undefined ? { pid } : {}),
    ...(inspector !== undefined ? { inspector } : {}),
  };
}

/** A worker from one module's source (the benchmark's bare baseline), served the same way. */
export function startScriptWorker(script: string, o: { inspector?: boolean } = {}): Promise<LocalWorker> {
  return started({
    ...(o.inspector ? { inspectorPort: 0 } : {}),
    modules: true,
    script,
    compatibilityDate: '2026-04-20',
    host: '127.0.0.1',
    port: 0,
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => void [stdout, stderr].forEach((s) => s.resume()),
  });
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
  /** Vars over the defaults (the environment's own, and the local secrets), e.g. `{ THREEDS_SERVER_URL }`. */
  vars?: Record<string, string>;
  /**
   * The wrangler.toml environment to bundle and serve: the top level (`test`, with the demo) by
   * default, or `live` (src/live.ts, its own bindings and vars) as `npm run deploy:live` deploys it.
   */
  env?: 'live';
  /**
   * With `env: 'live'`: build src/live.ts with the demo checkout at /demo (`--define LIVE_DEMO:true`),
   * as `npm run start:live` does. The deployed live bundle never has it.
   */
  demo?: boolean;
  /**
   * Serve without the static assets (default: with them, as wrangler.toml declares). With them,
   * Miniflare puts two Workers of its own (an RPC proxy and the asset router) in front of every
   * request; on Cloudflare the router is the platform's. A benchmark that compares the Worker's
   * own request path with a bare Worker serves both without.
   */
  assets?: boolean;
  /** Opens workerd's inspector and keeps the bundle's source map (the request-path profile of the benchmark). */
  inspector?: boolean;
}

export function startLocalWorker(options: LocalWorkerOptions): Promise<LocalWorker> {
  const secrets = parseEnv(readFileSync(join(options.root, '.dev.vars.example'), 'utf8')) as Record<string, string>;
  return serveBundle({
    root: options.root,
    config: join(options.root, 'wrangler.toml'),
    deployArgs: [
      '--env',
      options.env ?? '',
      ...(options.env === 'live' && options.demo ? ['--define', 'LIVE_DEMO:true'] : []),
    ],
    ...(options.env !== undefined ? { env: options.env } : {}),
    bindings: { ...secrets, ...(options.env === undefined ? { ENVIRONMENT: 'test' } : {}), ...options.vars },
    ...(options.entry !== undefined ? { entry: options.entry } : {}),
    ...(options.assets === false ? { assets: false } : {}),
    ...(options.inspector ? { inspector: true } : {}),
    ...(options.quiet ? { quiet: true } : {}),
  });
}

/**
 * Serves the fake 3DS Server provider (docs/fake-3ds-server.md) on a local port, bundled from its
 * own wrangler.toml: the provider a live Worker started with `THREEDS_SERVER_URL` at its URL
 * calls, and whose ACS pages a browser loads (the fake names the origin it is called at).
 */
export function startFakeProvider(options: { root: string; quiet?: boolean }): Promise<LocalWorker> {
  const config = join(options.root, 'src', 'fake-3ds-server', 'wrangler.toml');
  return serveBundle({
    root: options.root,
    config,
    deployArgs: ['-c', config],
    ...(options.quiet ? { quiet: true } : {}),
  });
}

/**
 * Bundles a Worker as `wrangler deploy` does (`deployArgs` pick its configuration and
 * environment) and serves the bundle with the bindings its configuration declares, plus
 * `bindings`.
 */
async function serveBundle(o: {
  root: string;
  config: string;
  deployArgs: string[];
  bindings?: Record<string, string>;
  entry?: string;
  quiet?: boolean;
  assets?: false;
  inspector?: boolean;
  env?: string;
}): Promise<LocalWorker> {
  const outdir = mkdtempSync(join(tmpdir(), 'card-edge-bundle-'));
  execFileSync('npx', ['wrangler', 'deploy', '--dry-run', ...o.deployArgs, '--outdir', outdir], {
    cwd: o.root,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  // Miniflare takes the first module as the main one: the harness entry if any, else the bundle's.
  const files = readdirSync(outdir);
  // The bundle's one module, named after its entry (index.js; live.js for the live Worker).
  const main = files.find((f) => f.endsWith('.js'))!;
  const modules = files.filter((f) => f.endsWith('.bin')).sort();
  modules.unshift(main);
  if (o.entry !== undefined) {
    writeFileSync(join(outdir, 'harness-entry.js'), o.entry);
    modules.unshift('harness-entry.js');
  }
  const { workerOptions } = unstable_getMiniflareWorkerOptions(o.config, o.env);
  if (o.assets === false) delete (workerOptions as { assets?: unknown }).assets;
  const sourceMap = o.inspector ? readFileSync(join(outdir, `${main}.map`), 'utf8') : undefined;
  // The modules are read into memory below: the bundle folder can go once Miniflare has them.
  try {
    const worker = await started({
      ...workerOptions,
      modules: modules.map((name) => ({
        type: name.endsWith('.bin') ? ('Data' as const) : ('ESModule' as const),
        path: join(outdir, name),
        contents: readFileSync(join(outdir, name)),
      })),
      modulesRoot: outdir,
      modulesRules: undefined,
      bindings: { ...workerOptions.bindings, ...o.bindings },
      host: '127.0.0.1',
      port: 0,
      ...(o.inspector ? { inspectorPort: 0 } : {}),
      ...(o.quiet
        ? {
            handleRuntimeStdio: (stdout: Readable, stderr: Readable) =>
              void [stdout, stderr].forEach((s) => s.resume()),
          }
        : {}),
    } as ConstructorParameters<typeof Miniflare>[0]);
    return sourceMap !== undefined ? { ...worker, sourceMap } : worker;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
