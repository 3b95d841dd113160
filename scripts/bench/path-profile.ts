import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';
import type { LocalWorker } from '../local-worker';
import { load, type LoadRequest } from './load';

/**
 * Where a Worker's CPU goes on one request: V8's sampling profiler of the Worker's own isolate,
 * read over workerd's inspector (the DevTools protocol) while the load generator sends requests;
 * each sample is charged to the stage of the innermost frame of ours on its stack (a built-in
 * such as `JSON.stringify` is charged to the code of ours that called it), named through the
 * bundle's source map. Samples with no frame of ours are the runtime's: the garbage collector, or
 * workerd itself (`(program)`: parsing the request, writing the answer...). Idle time is left out.
 * `PROFILE_LEAVES=1` also prints, to stderr, the heaviest frames with the source line of ours
 * under each: where to look next.
 */

/** A stage of the request path and how to tell its frames (by source file, then function). */
interface Stage {
  name: string;
  test: (source: string, fn: string) => boolean;
}

const file =
  (...parts: string[]) =>
  (source: string) =>
    parts.some((p) => source.includes(p));

/** First match wins: the most specific files first. */
const STAGES: Stage[] = [
  { name: 'Basic auth (warm login)', test: file('src/http/basic-auth', 'src/credentials/', 'src/merchants/') },
  { name: 'body (read, UTF-8, JSON.parse)', test: file('src/http/body') },
  { name: 'validation (valibot schema)', test: file('src/http/validation', 'src/schemas/', 'node_modules/valibot') },
  { name: 'lookup (Luhn, BIN index, answer object)', test: file('src/bin/', 'src/cards/', 'src/reference-data/') },
  {
    name: 'header checks (Accept, Content-Type, WP-Api-Version)',
    test: file('src/http/api-headers', 'src/media-types.ts', 'src/http/simulate-header'),
  },
  { name: 'log line (JSON, redaction; the console call silenced)', test: file('src/log.ts') },
  { name: 'routing (itty-router, route table)', test: file('node_modules/itty-router', 'src/app/') },
  { name: 'settings and request deps', test: file('src/config/', 'src/routes/deps-from-request', 'src/storage/') },
  { name: 'endpoint (panLookup handler)', test: file('src/routes/') },
  {
    name: 'answer (JSON.stringify, Response, headers)',
    test: (source, fn) =>
      source.includes('src/http/pipeline') && /jsonResponse|commonHeaders|withCommonHeaders|answerMediaType/.test(fn),
  },
  { name: 'pipeline (correlation id, URL, the rest)', test: file('src/http/', 'src/failures') },
];
/** A one-module script (the bare and floor Workers) has no source map: its frames are all its own. */
const CONSTANT_WORKER = 'the constant Worker’s own code (bare, floor)';
const OTHER_OURS = 'other code of ours';
const GC = 'runtime: garbage collector';
const PROGRAM = 'runtime: workerd outside JavaScript';
const RUNTIME_JS = 'runtime: JavaScript with no frame of ours';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A DevTools protocol session over the inspector's WebSocket (Node 20: `--experimental-websocket`). */
export async function session(
  url: string,
): Promise<{ send: (method: string, params?: object) => Promise<unknown>; close: () => void }> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)));
  });
  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const w = message.id !== undefined ? waiting.get(message.id) : undefined;
    if (!w) return;
    waiting.delete(message.id!);
    if (message.error) w.reject(new Error(message.error.message));
    else w.resolve(message.result);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** The inspector target of the Worker's own isolate (Miniflare puts workers of its own beside it). */
export async function userTarget(inspector: URL): Promise<string> {
  const targets = (await (await fetch(new URL('/json/list', inspector.href.replace(/^ws/, 'http')))).json()) as {
    id: string;
    webSocketDebuggerUrl: string;
  }[];
  const user = targets.find((t) => t.id.startsWith('core:user:'));
  if (!user) throw new Error(`no Worker of ours among the inspector's targets: ${targets.map((t) => t.id).join(', ')}`);
  return user.webSocketDebuggerUrl;
}

export interface StageProfile {
  /** ms of the isolate's CPU per request, by stage. */
  msPerRequest: Map<string, number>;
  requests: number;
}

/**
 * Profiles `requests` requests of `next` on `worker` (served with `inspector: true`), after a
 * warm-up; frames are named by the worker's source map when it has one, else it is a one-module
 * script whose frames count as the bare Worker's.
 */
export async function profileWorker(
  worker: LocalWorker,
  next: () => LoadRequest,
  o: { requests: number; connections: number },
): Promise<StageProfile> {
  if (!worker.inspector) throw new Error('the Worker was served without its inspector');
  await load(worker.url, { connections: o.connections, requests: 1_000, next });
  const s = await session(await userTarget(worker.inspector));
  try {
    await s.send('Profiler.enable');
    await s.send('Profiler.setSamplingInterval', { interval: 50 });
    await s.send('Profiler.start');
    await load(worker.url, { connections: o.connections, requests: o.requests, next });
    const { profile } = (await s.send('Profiler.stop')) as { profile: Profile };
    return { msPerRequest: byStage(profile, worker.sourceMap, o.requests), requests: o.requests };
  } finally {
    s.close();
  }
}

function byStage(profile: Profile, sourceMap: string | undefined, requests: number): Map<string, number> {
  const map = sourceMap !== undefined ? new SourceMapConsumer(JSON.parse(sourceMap) as RawSourceMap) : undefined;
  const parent = new Map<number, number>();
  const nodes = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    nodes.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // The stage of each node: its own frame's if ours, else its nearest caller's of ours.
  const stageOf = new Map<number, string | null>();
  const ownStage = (n: ProfileNode): string | null => {
    const { url, functionName, lineNumber, columnNumber } = n.callFrame;
    if (url === '') return null;
    if (!map) return CONSTANT_WORKER;
    const original = map.originalPositionFor({ line: lineNumber + 1, column: columnNumber });
    if (original.source === null) return null;
    const source = original.source.replace(/\\/g, '/');
    const fn = original.name ?? functionName;
    return STAGES.find((st) => st.test(source, fn) || st.test(source, functionName))?.name ?? OTHER_OURS;
  };
  const resolve = (id: number): string | null => {
    if (stageOf.has(id)) return stageOf.get(id)!;
    const n = nodes.get(id)!;
    const up = parent.get(id);
    const stage = ownStage(n) ?? (up !== undefined ? resolve(up) : null);
    stageOf.set(id, stage);
    return stage;
  };
  const totals = new Map<string, number>();
  const leaves = new Map<string, number>();
  const ourName = (id: number | undefined): string => {
    while (id !== undefined) {
      const n = nodes.get(id)!;
      if (n.callFrame.url !== '' && map) {
        const o = map.originalPositionFor({ line: n.callFrame.lineNumber + 1, column: n.callFrame.columnNumber });
        if (o.source !== null) return `${o.source.replace(/.*\/(src|node_modules)\//, '$1/')}:${o.line}`;
      }
      id = parent.get(id);
    }
    return '-';
  };
  profile.samples.forEach((id, i) => {
    if (process.env.PROFILE_LEAVES && map) {
      const k = `${nodes.get(id)!.callFrame.functionName || '(anon)'} <- ${ourName(id)}`;
      leaves.set(k, (leaves.get(k) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000 / requests);
    }
    const n = nodes.get(id)!;
    const name = n.callFrame.functionName;
    if (name === '(idle)' || name === '(root)') return;
    const stage = name === '(garbage collector)' ? GC : name === '(program)' ? PROGRAM : (resolve(id) ?? RUNTIME_JS);
    // timeDeltas[i] is the time since the previous sample: the time this sample stands for is the next one's delta.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    totals.set(stage, (totals.get(stage) ?? 0) + delta / 1000);
  });
  for (const [k, v] of totals) totals.set(k, v / requests);
  if (process.env.PROFILE_LEAVES && map)
    console.error(
      [...leaves]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 60)
        .map(([k, v]) => `${v.toFixed(4)} ${k}`)
        .join('\n'),
    );
  return totals;
}

/** The profile table: a row per stage, a column per Worker, ms per request and the total. */
export function profileTable(columns: { label: string; profile: StageProfile }[], intro: string): string {
  const order = [...STAGES.map((s) => s.name), CONSTANT_WORKER, OTHER_OURS, RUNTIME_JS, GC, PROGRAM];
  const rows = order.filter((stage) => columns.some((c) => (c.profile.msPerRequest.get(stage) ?? 0) >= 0.0005));
  const ms = (v: number | undefined): string => (v === undefined || v < 0.0005 ? '–' : v.toFixed(3));
  const total = (c: { profile: StageProfile }): number =>
    [...c.profile.msPerRequest.values()].reduce((a, b) => a + b, 0);
  return [
    intro,
    '',
    `| stage | ${columns.map((c) => `${c.label} ms/request`).join(' | ')} |`,
    `|---|${columns.map(() => '---:').join('|')}|`,
    ...rows.map((stage) => `| ${stage} | ${columns.map((c) => ms(c.profile.msPerRequest.get(stage))).join(' | ')} |`),
    `| **total sampled** | ${columns.map((c) => `**${total(c).toFixed(3)}**`).join(' | ')} |`,
  ].join('\n');
}
