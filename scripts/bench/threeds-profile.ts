import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';
import { startLocalWorker } from '../local-worker';
import { session, userTarget, type Profile, type ProfileNode } from './path-profile';
import { timed, runFlow, type FlowBenchOptions, type FlowKind } from './threeds-flows';
import { fmt } from './summary';

/**
 * `npm run bench -- --only threeds-profile`: where the CPU of a 3DS flow goes, by source file. V8's
 * sampling profiler of the Worker's isolate (50 µs), read over workerd's inspector while the flows
 * run 10 at a time, each sample charged to the innermost frame of ours on its stack (a built-in
 * such as `sql.exec`, `setAlarm` or an RPC call to the code of ours that called it), named through
 * the bundle's source map. In Miniflare the Worker, the transaction's object and the merchant's
 * EventLog object run in that one isolate, so the table covers all three; KV and the alarms'
 * machinery run outside it (workerd's own C++ shows as "runtime"). The console is silenced: with
 * the inspector attached every console call also goes to it. The profiler's overhead inflates
 * every figure alike, so the shares say more than the absolute figures.
 */

/**
 * Where a sample's code lives, by the source file of its innermost frame of ours: the place in the
 * code, not who ran it (in Miniflare the Worker and its objects share one isolate, and code under
 * src/storage/ or src/log.ts runs in both).
 */
const WHERE: { name: string; test: RegExp }[] = [
  { name: 'creating tables (`createTables` on the stack: a new object’s first call)', test: /^createTables$/ },
  { name: 'src/events/ (the event log, its shards, the append’s API)', test: /^src\/events\// },
  { name: 'src/threeds/transaction/ (the transaction’s object and its parts)', test: /^src\/threeds\/transaction\// },
  { name: 'src/storage/ (outboxes, alarm, claims, schema version, the RPC client)', test: /^src\/storage\// },
  {
    name: 'the rest of src/ and the libraries (the request path, and shared code wherever it runs)',
    test: /^(src|node_modules)\//,
  },
];
const NO_FRAME_OF_OURS = 'JavaScript with no frame of ours (the runtime’s own)';
const RUNTIME = 'workerd outside JavaScript, and the garbage collector';

interface Sampled {
  /** ms per flow, by source file of the innermost frame of ours. */
  byFile: Map<string, number>;
  /** ms per flow, by the part of the service ({@link WHERE}) of the innermost frame of ours. */
  byPart: Map<string, number>;
  total: number;
}

function sampled(profile: Profile, sourceMap: string, flows: number): Sampled {
  const map = new SourceMapConsumer(JSON.parse(sourceMap) as RawSourceMap);
  const nodes = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    nodes.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const ours = new Map<number, { file: string; fn: string } | null>();
  const own = (id: number): { file: string; fn: string } | null => {
    if (ours.has(id)) return ours.get(id)!;
    const { url, lineNumber, columnNumber, functionName } = nodes.get(id)!.callFrame;
    let found: { file: string; fn: string } | null = null;
    // Only the bundle's frames are named through its source map (not the harness entry's).
    if (url !== '' && !url.endsWith('harness-entry.js')) {
      const o = map.originalPositionFor({ line: lineNumber + 1, column: columnNumber });
      // The bundle is minified: the function's own name is the source map's.
      if (o.source !== null)
        found = {
          file: o.source.replace(/\\/g, '/').replace(/.*\/(src|node_modules)\//, '$1/'),
          fn: o.name ?? functionName,
        };
    }
    if (found === null) {
      const up = parent.get(id);
      found = up !== undefined ? own(up) : null;
    }
    ours.set(id, found);
    return found;
  };
  const byFile = new Map<string, number>();
  const byPart = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const name = nodes.get(id)!.callFrame.functionName;
    if (name === '(idle)' || name === '(root)') return;
    // timeDeltas[i] is the time since the previous sample: the time this sample stands for is the next one's delta.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000 / flows;
    total += ms;
    const runtime = name === '(garbage collector)' || name === '(program)';
    const frame = runtime ? null : own(id);
    // createTables anywhere on the stack: the tables' creation.
    let creating = false;
    for (let up: number | undefined = id; up !== undefined && !creating; up = parent.get(up))
      creating = own(up)?.fn === 'createTables';
    const file = runtime ? RUNTIME : frame === null ? NO_FRAME_OF_OURS : frame.file;
    const part = runtime
      ? RUNTIME
      : frame === null
        ? NO_FRAME_OF_OURS
        : WHERE.find((w) => w.test.test(creating ? 'createTables' : frame.file))!.name;
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
    byPart.set(part, (byPart.get(part) ?? 0) + ms);
  });
  return { byFile, byPart, total };
}

async function profileFlows(o: FlowBenchOptions, kind: FlowKind): Promise<Sampled> {
  const worker = await startLocalWorker({
    root: o.root,
    quiet: true,
    inspector: true,
    entry: `import worker from './index.js';\nexport * from './index.js';\nconsole.log = () => {};\nconsole.error = () => {};\nexport default worker;\n`,
  });
  try {
    await timed(() => runFlow(worker.url, kind, false), Math.min(50, o.flows), o.concurrency);
    const s = await session(await userTarget(worker.inspector!));
    try {
      await s.send('Profiler.enable');
      await s.send('Profiler.setSamplingInterval', { interval: 50 });
      await s.send('Profiler.start');
      await timed(() => runFlow(worker.url, kind, false), o.flows, o.concurrency);
      const { profile } = (await s.send('Profiler.stop')) as { profile: Profile };
      return sampled(profile, worker.sourceMap!, o.flows);
    } finally {
      s.close();
    }
  } finally {
    await worker.stop();
  }
}

export async function runThreeDsProfile(o: FlowBenchOptions): Promise<string> {
  const lines: string[] = [
    `Where a flow's CPU goes, sampled in the Worker's isolate (the Worker, the transaction's object and the merchant's EventLog object; KV and the alarms' machinery are outside it): ${o.flows} flows of each kind, ${o.concurrency} at a time, V8's sampling profiler at 50 µs, each sample charged to the source file of its innermost frame of ours (a built-in such as \`sql.exec\`, \`setAlarm\` or an RPC call to the code that called it): where the code lives, not which of the three ran it. ms per flow; the profiler inflates every figure alike.`,
    '',
  ];
  const results: [FlowKind, Sampled][] = [];
  for (const kind of ['frictionless', 'challenged'] as const) {
    o.log(`profiling ${kind} flows`);
    results.push([kind, await profileFlows(o, kind)]);
  }
  const share = (v: number, total: number): string => `${fmt((100 * v) / total, 0)} %`;
  lines.push('| part | ' + results.map(([k]) => `${k} ms/flow | share`).join(' | ') + ' |');
  lines.push('|---|' + results.map(() => '---:|---:').join('|') + '|');
  const parts = [...WHERE.map((w) => w.name), NO_FRAME_OF_OURS, RUNTIME];
  for (const part of parts)
    lines.push(
      `| ${part} | ${results.map(([, r]) => `${fmt(r.byPart.get(part) ?? 0, 2)} | ${share(r.byPart.get(part) ?? 0, r.total)}`).join(' | ')} |`,
    );
  lines.push(`| **sampled in all** | ${results.map(([, r]) => `**${fmt(r.total, 2)}** | 100 %`).join(' | ')} |`);
  lines.push('', 'The heaviest files (the innermost frame of ours), ms per flow:', '');
  lines.push('| file | ' + results.map(([k]) => k).join(' | ') + ' |');
  lines.push('|---|' + results.map(() => '---:').join('|') + '|');
  const files = new Map<string, number>();
  for (const [, r] of results) for (const [f, v] of r.byFile) files.set(f, (files.get(f) ?? 0) + v);
  for (const [file] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 20))
    lines.push(`| ${file} | ${results.map(([, r]) => fmt(r.byFile.get(file) ?? 0, 2)).join(' | ')} |`);
  return lines.join('\n');
}
