import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { parseEnv } from 'node:util';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { treeIn, type MerchantFile } from '../../scripts/tree-copy';

/**
 * Helpers of test/served/renamed-classes.test.ts: a tree of an earlier commit (its sources from
 * git, this tree's built data and node_modules), and a tree's Worker bundled as `wrangler deploy`
 * bundles it and served by Miniflare with its state persisted in a folder that outlives the
 * instance, as a deployment's state outlives a deploy.
 */

/** What the Worker bundle needs of a tree (scripts/tree-copy.ts copies the same). */
const PARTS = ['src', 'data', 'public', 'wrangler.toml', 'tsconfig.json', 'package.json', '.dev.vars.example'];

/** Built files that are not in git (npm run build:data, build:openapi), taken from this tree. */
const BUILT = [
  'data/bin-index.bin',
  'public/openapi.json',
  'public/docs/swagger-ui-bundle.js',
  'public/docs/swagger-ui.css',
  'public/docs/img',
];

/**
 * For a tree of the first events design (b9d926c and before): gives `username` one endpoint for
 * every event type in data/merchants.json's `events` block (its events are replaced), signed
 * with its EVENT_SIGNING_SECRETS secret. This tree refuses that block (endpoints are made through
 * `POST /events/endpoints`): use it for an old tree only.
 */
export function withOldEndpoint(username: string, url: string): (config: MerchantFile) => void {
  return (config) => {
    const merchant = config.merchants.find((m) => m.username === username);
    if (!merchant) throw new Error(`data/merchants.json has no ${username}`);
    merchant.events = { endpoints: [{ url, events: 'all' }] };
  };
}

/** For this tree: data/merchants.json with no `events` block (it refuses one at load). */
export function withoutEvents(config: MerchantFile): void {
  for (const merchant of config.merchants) delete merchant.events;
}

/** Whether `commit` is in the repository's history at `root` (a shallow clone may lack it). */
export function hasCommit(root: string, commit: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface Tree {
  dir: string;
  remove: () => void;
}

/**
 * The Worker's tree at `commit` (git archive), with this tree's built data and node_modules, and
 * `edit` applied to its data/merchants.json. The repository and its working tree are not touched.
 */
export function treeAtCommit(root: string, commit: string, edit: (config: MerchantFile) => void): Tree {
  if (!existsSync(join(root, 'data', 'bin-index.bin')))
    throw new Error('data/bin-index.bin is missing: run npm run build:data first');
  return treeIn('card-edge-old-tree-', root, edit, (dir) => {
    const archive = execFileSync('git', ['archive', '--format=tar', commit, ...PARTS], {
      cwd: root,
      maxBuffer: 512 * 1024 * 1024,
    });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    for (const part of BUILT) {
      const from = join(root, part);
      if (!existsSync(from)) continue;
      mkdirSync(dirname(join(dir, part)), { recursive: true });
      cpSync(from, join(dir, part), { recursive: true });
    }
  });
}

export interface ServedTree {
  url: URL;
  /** The Worker's name as Miniflare has it (part of every default uniqueKey; empty when unnamed). */
  workerName: string;
  /** The Durable Object classes its wrangler.toml binds, by binding: what the test checks it serves. */
  classes: Record<string, string>;
  stop: () => Promise<void>;
}

export interface ServeOptions {
  /** The tree (its wrangler.toml, .dev.vars.example, built data, node_modules). */
  dir: string;
  /**
   * The folder the local state lives in (KV under `kv/`, Durable Objects under `do/`, as
   * `wrangler dev --persist-to` lays it out): the same folder for the old and the new Worker, as
   * a deployment keeps its state across a deploy.
   */
  state: string;
  /**
   * Storage keys of Durable Object bindings (binding → uniqueKey). Miniflare keys an object's
   * storage, and derives its ids, from `<worker name>-<class name>` and ignores `renamed_classes`:
   * this is how the test gives a renamed class the storage (and ids) of its old name, as
   * Cloudflare does.
   */
  uniqueKeys?: Record<string, string>;
  /** Output of workerd (the Worker's log lines), for a failure's message. */
  output?: string[];
}

/** The uniqueKey Miniflare gives a class of a Worker when nothing overrides it (its storage folder's name). */
export function defaultUniqueKey(workerName: string, className: string): string {
  return `${workerName}-${className}`;
}

/**
 * Bundles the tree's Worker as `wrangler deploy --dry-run` does and serves it with Miniflare on a
 * free port of 127.0.0.1, with the bindings of its wrangler.toml, the local secrets of its
 * .dev.vars.example and ENVIRONMENT=test, its state persisted in `state`.
 */
export async function serveTree(o: ServeOptions): Promise<ServedTree> {
  const config = join(o.dir, 'wrangler.toml');
  const secrets = parseEnv(readFileSync(join(o.dir, '.dev.vars.example'), 'utf8')) as Record<string, string>;
  const outdir = mkdtempSync(join(tmpdir(), 'card-edge-bundle-'));
  try {
    try {
      execFileSync(
        process.execPath,
        [join(o.dir, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir],
        { cwd: o.dir, stdio: 'pipe', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
      );
    } catch (e) {
      const err = e as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(
        `the bundle of ${o.dir} failed:\n${err.stdout?.toString() ?? ''}${err.stderr?.toString() ?? ''}`,
        {
          cause: e,
        },
      );
    }
    const files = readdirSync(outdir);
    const main = files.find((f) => f.endsWith('.js'))!;
    const modules = [main, ...files.filter((f) => f.endsWith('.bin')).sort()];
    const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
    const durableObjects = { ...(workerOptions.durableObjects ?? {}) } as Record<
      string,
      { className: string; unsafeUniqueKey?: string } & Record<string, unknown>
    >;
    const classes: Record<string, string> = {};
    for (const [binding, designator] of Object.entries(durableObjects)) {
      classes[binding] = designator.className;
      const key = o.uniqueKeys?.[binding];
      if (key !== undefined) durableObjects[binding] = { ...designator, unsafeUniqueKey: key };
    }
    for (const binding of Object.keys(o.uniqueKeys ?? {}))
      if (!(binding in durableObjects)) throw new Error(`${config} binds no Durable Object ${binding}`);
    const mf = new Miniflare({
      ...workerOptions,
      durableObjects,
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
      kvPersist: join(o.state, 'kv'),
      durableObjectsPersist: join(o.state, 'do'),
      cachePersist: join(o.state, 'cache'),
      handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
        for (const stream of [stdout, stderr]) {
          if (o.output) stream.on('data', (d: Buffer) => o.output!.push(d.toString()));
          else stream.resume();
        }
      },
    } as ConstructorParameters<typeof Miniflare>[0]);
    let url: URL;
    try {
      url = await mf.ready;
    } catch (e) {
      await mf.dispose().catch(() => {});
      throw e;
    }
    return { url, workerName: (workerOptions as { name?: string }).name ?? '', classes, stop: () => mf.dispose() };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The Durable Object storage folders (uniqueKeys) Miniflare has written in `state`. */
export function storedClasses(state: string): string[] {
  const dir = join(state, 'do');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}
