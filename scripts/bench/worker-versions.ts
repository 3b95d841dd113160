import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalWorker, type LocalWorker } from '../local-worker';

/**
 * The Worker of this tree and of an earlier commit, served side by side for a same-run
 * comparison. The earlier commit is checked out as a detached git worktree that borrows this
 * tree's node_modules, has its own BIN data built, and is removed afterwards.
 */

/**
 * An entry module that counts the storage calls of requests sent with `x-bench-step: <label>`:
 * every KV call (reads: get/list; writes: put/delete) and every Durable Object call, per label.
 * `GET /__bench/counts` answers the counts so far and resets them. Requests without the header
 * reach the Worker untouched, so timed runs measure the Worker alone. A request with
 * `x-bench-cold` sees its credentials secret as a new one, so its login is checked cold.
 */
/** Source of \`namespace(binding, c)\`: a Durable Object namespace whose stubs count their calls in \`c.doCalls\`. */
export const COUNTED_NAMESPACE = `function namespace(binding, c) {
  return new Proxy(binding, { get(t, p) {
    const v = Reflect.get(t, p);
    if (p !== 'get') return typeof v === 'function' ? v.bind(t) : v;
    return (id) => { const stub = Reflect.apply(v, t, [id]); return new Proxy(stub, { get(s, m) {
      if (m === 'then') return undefined;
      const f = Reflect.get(s, m);
      if (typeof f !== 'function') return f;
      return (...a) => { c.doCalls++; return Reflect.apply(f, s, a); };
    } }); };
  } });
}`;

export const COUNTING_ENTRY = `
import worker from './index.js';
export * from './index.js';
const counts = {};
let cold = 0;
const isKv = (b) => b && typeof b.get === 'function' && typeof b.put === 'function' && typeof b.list === 'function';
const isNamespace = (b) => b && typeof b.idFromName === 'function';
function kv(binding, c) {
  return new Proxy(binding, { get(t, p) {
    const v = Reflect.get(t, p);
    if (typeof v !== 'function') return v;
    return (...a) => { if (p === 'get' || p === 'list' || p === 'getWithMetadata') c.kvReads++; else if (p === 'put' || p === 'delete') c.kvWrites++; return Reflect.apply(v, t, a); };
  } });
}
${COUNTED_NAMESPACE}
export default {
  async fetch(request, env, ctx) {
    if (new URL(request.url).pathname === '/__bench/counts') {
      const body = JSON.stringify(counts);
      for (const k of Object.keys(counts)) delete counts[k];
      return new Response(body);
    }
    if (request.headers.get('x-bench-cold') !== null) {
      // A cold login: the stored credentials read as a new secret (trailing spaces are still the
      // same JSON), so no cache of an earlier check applies.
      cold = (cold + 1) % 4096;
      return worker.fetch(request, { ...env, MERCHANT_PASSWORD_HASHES: env.MERCHANT_PASSWORD_HASHES + ' '.repeat(cold + 1) }, ctx);
    }
    const step = request.headers.get('x-bench-step');
    if (step === null) return worker.fetch(request, env, ctx);
    const c = (counts[step] ??= { requests: 0, kvReads: 0, kvWrites: 0, doCalls: 0 });
    c.requests++;
    const wrapped = {};
    for (const [name, b] of Object.entries(env)) wrapped[name] = isKv(b) ? kv(b, c) : isNamespace(b) ? namespace(b, c) : b;
    return worker.fetch(request, wrapped, ctx);
  },
};
`;

/**
 * An entry module that silences the console before the Worker runs: with the inspector attached,
 * every console call also goes to it, at ~0.2 ms a call, which would drown the profile.
 */
const MUTED_CONSOLE_ENTRY = `
import worker from './index.js';
export * from './index.js';
console.log = () => {};
console.error = () => {};
export default worker;
`;

export interface WorkerVersion {
  label: string;
  worker: LocalWorker;
}

export interface Versions {
  current: WorkerVersion;
  baseline: WorkerVersion;
  /**
   * Both Workers again, each as its bare bundle: no counting entry in front and no static assets
   * (Miniflare's asset chain), for a like-for-like comparison with a bare Worker. With
   * `inspector`, served for the profile: the inspector open and the console silenced. Stopped by `stop`.
   */
  plain: (o?: { inspector?: boolean }) => Promise<{ current: WorkerVersion; baseline: WorkerVersion }>;
  stop: () => Promise<void>;
}

/**
 * Serves this tree's Worker and `baselineRef`'s, both behind the counting entry (or `entry`, a
 * harness of the caller's), and quiet.
 */
export async function startVersions(
  root: string,
  baselineRef: string,
  log: (m: string) => void,
  o: { entry?: string } = {},
): Promise<Versions> {
  const entry = o.entry ?? COUNTING_ENTRY;
  const commit = execFileSync('git', ['rev-parse', '--short', baselineRef], { cwd: root, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), `card-edge-${commit}-`));
  const cleanup = (): void => {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'pipe' });
    rmSync(dir, { recursive: true, force: true });
  };
  log(`checking out ${baselineRef} (${commit}) as the baseline`);
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: root, stdio: 'pipe' });
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    execFileSync('npx', ['tsx', 'scripts/build-data.ts', '--quiet'], { cwd: dir, stdio: 'pipe' });
    if (!existsSync(join(dir, 'data', 'bin-index.bin'))) throw new Error(`the BIN data of ${commit} did not build`);
    log('bundling and serving both Workers');
    const current = {
      label: 'this tree',
      worker: await startLocalWorker({ root, entry, quiet: true }),
    };
    const baseline = {
      label: commit.startsWith(baselineRef) ? commit : `${baselineRef} (${commit})`,
      worker: await startLocalWorker({ root: dir, entry, quiet: true }),
    };
    const extra: LocalWorker[] = [];
    const plainOf = async (label: string, at: string, inspector: boolean): Promise<WorkerVersion> => {
      const worker = await startLocalWorker({
        root: at,
        quiet: true,
        assets: false,
        ...(inspector ? { inspector, entry: MUTED_CONSOLE_ENTRY } : {}),
      });
      extra.push(worker);
      return { label, worker };
    };
    return {
      current,
      baseline,
      plain: async (o = {}) => ({
        current: await plainOf(current.label, root, o.inspector ?? false),
        baseline: await plainOf(baseline.label, dir, o.inspector ?? false),
      }),
      stop: async () => {
        await Promise.all([current.worker.stop(), baseline.worker.stop(), ...extra.map((w) => w.stop())]);
        cleanup();
      },
    };
  } catch (e) {
    cleanup();
    throw e;
  }
}
