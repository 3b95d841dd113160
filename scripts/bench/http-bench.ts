import { startScriptWorker, type LocalWorker } from '../local-worker';
import { isolateStepsTable } from './isolate-steps';
import { withLuhnCheckDigit } from './pans';
import { load, type LoadRequest, type LoadResult } from './load';
import { profileTable, profileWorker } from './path-profile';
import { startVersions, type Versions, type WorkerVersion } from './worker-versions';

/**
 * The request-path part of `npm run bench`: this tree's Worker against an earlier commit's and
 * against a bare worker that answers a constant JSON, all in workerd (Miniflare) in one run.
 *
 * 1. Logins: workerd CPU per request for a request without credentials, a failed login, a cold
 *    right login and a warm one; and a legitimate client's p50 while others flood wrong passwords.
 * 2. The path around the lookup: panLookup (warm login) against the bare worker, requests per
 *    second and workerd CPU per request, at 10 and 50 connections; connections the server reset
 *    or closed. Then panLookup by token beside panLookup by card number, on the same Worker.
 *
 * CPU is the workerd process's user + system time over the run (/proc), divided by requests.
 */

export interface HttpBenchOptions {
  root: string;
  baselineRef: string;
  runs: number;
  log: (m: string) => void;
  /** Only the path table (`--only path`): panLookup against the bare Worker. */
  pathOnly?: boolean;
}

const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const WRONG = (i: number): string => `Basic ${Buffer.from(`test-merchant:wrong-${i}`).toString('base64')}`;
const BIN = { 'Content-Type': 'application/json', 'WP-Api-Version': '1' };
const BODY = JSON.stringify({ merchant: { entity: 'default' }, cardNumber: '4571368400000008' });
const LOOKUP = '/api/cardBin/panLookup';

/** The bare baseline's answer: a constant JSON, as small as a Worker's answer gets. */
const BARE_ANSWER = '{"type":"pan","brand":["visa"],"bin":"457136","binLength":6}';
/** The bare baseline: a Worker that answers a constant JSON, as small as a Worker gets. */
const BARE_WORKER = `export default { async fetch(request) {
  await request.arrayBuffer(); // as any handler of a POST must, or the connection closes
  return new Response('${BARE_ANSWER}', { headers: { 'Content-Type': 'application/json' } });
} };`;

/** The floor's log line after its correlation id and time: the shape of this tree's line for the request. */
const FLOOR_LOG_REST = JSON.stringify({
  level: 'info',
  method: 'POST',
  path: LOOKUP,
  status: 200,
  durationMs: 0,
  api: 'cardBin',
  merchant: 'test-merchant',
  entity: 'default',
  card: '457136******0008',
  binSource: 'binlist',
}).slice(1);

/**
 * The floor under any panLookup, whatever its code: a constant Worker that sends the answer of
 * `worker` byte for byte (its body and every header but the date and length, with a fresh
 * correlation id) and writes one log line of the same shape, and does nothing else.
 */
async function startFloorWorker(worker: LocalWorker, o: { inspector?: boolean } = {}): Promise<LocalWorker> {
  const answer = await fetch(new URL(LOOKUP, worker.url), {
    method: 'POST',
    // As the load generator asks: without Accept-Encoding, so the answer comes as the Worker made it.
    headers: { ...BIN, Authorization: AUTH, 'Accept-Encoding': 'identity' },
    body: BODY,
  });
  const body = await answer.text();
  if (answer.status !== 200) throw new Error(`panLookup answered ${answer.status}: ${body}`);
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    const transport = ['date', 'content-length', 'transfer-encoding', 'content-encoding', 'wp-correlationid'];
    if (!transport.includes(name)) headers[name] = value;
  });
  const log = o.inspector
    ? ''
    : 'console.log(\'{"correlationId":"\' + id + \'","ts":"\' + new Date().toISOString() + \'",\' + REST);';
  return startScriptWorker(
    `const HEADERS = ${JSON.stringify(headers)};
const BODY = ${JSON.stringify(body)};
const REST = ${JSON.stringify(FLOOR_LOG_REST)};
export default { async fetch(request) {
  await request.arrayBuffer();
  const id = crypto.randomUUID();
  ${log}
  return new Response(BODY, { headers: { ...HEADERS, 'WP-CorrelationId': id } });
} };`,
    o,
  );
}

const lookup = (headers: Record<string, string>): LoadRequest => ({
  method: 'POST',
  path: LOOKUP,
  headers: { ...BIN, ...headers },
  body: BODY,
});

/** Login scenarios: a fresh client address per request unless the scenario is about one address. */
const LOGINS: { name: string; requests: number; next: (i: number) => LoadRequest }[] = [
  {
    name: 'no credentials (401)',
    requests: 600,
    next: (i) => lookup({ 'CF-Connecting-IP': `10.1.${i >> 8}.${i & 255}` }),
  },
  {
    name: 'failed login (401)',
    requests: 300,
    next: (i) => lookup({ Authorization: WRONG(i), 'CF-Connecting-IP': `10.2.${i >> 8}.${i & 255}` }),
  },
  {
    name: 'cold right login',
    requests: 300,
    // A new header spelling (the old cache key: spaces after "Basic", which HTTP keeps) and a new
    // secret text (the new key): no cache applies to either Worker.
    next: (i) =>
      lookup({
        Authorization: AUTH.replace('Basic ', `Basic${' '.repeat(1 + (i % 512))}`),
        'x-bench-cold': '1',
        'CF-Connecting-IP': `10.3.${i >> 8}.${i & 255}`,
      }),
  },
  {
    name: 'warm right login',
    requests: 600,
    next: () => lookup({ Authorization: AUTH, 'CF-Connecting-IP': '10.4.0.1' }),
  },
];

export async function runHttpBench(o: HttpBenchOptions): Promise<string> {
  const versions = await startVersions(o.root, o.baselineRef, o.log);
  // Each Worker is stopped at the end, whatever fails after it started.
  const stop: LocalWorker[] = [];
  try {
    o.log('starting the bare Worker and the floor Worker');
    const bare = await startScriptWorker(BARE_WORKER);
    stop.push(bare);
    const order: WorkerVersion[] = [versions.baseline, versions.current];
    const plain = await versions.plain();
    const floor = await startFloorWorker(plain.current.worker);
    stop.push(floor);
    const steps = (): Promise<string> =>
      isolateStepsTable({
        root: o.root,
        runs: o.runs,
        request: lookup({ Authorization: AUTH, 'CF-Connecting-IP': '10.5.0.1' }),
        bareAnswer: BARE_ANSWER,
        floorLogRest: FLOOR_LOG_REST,
        log: o.log,
      });
    const path = async (): Promise<string> =>
      [
        await pathTable(o, [plain.baseline, plain.current], bare, floor),
        await tokenTable(o, plain.current),
        await steps(),
        await profile(o, versions),
      ].join('\n\n');
    const sections = o.pathOnly
      ? [await path()]
      : [await loginTable(o, order), await floodTable(o, order), await path()];
    return sections.join('\n\n');
  } finally {
    await Promise.all([versions.stop(), ...stop.map((w) => w.stop())]);
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (n: number, digits = 2): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
const spread = (values: number[], digits = 2): string => {
  const s = [...values].sort((a, b) => a - b);
  return `${fmt(s[0]!, digits)} / **${fmt(median(s), digits)}** / ${fmt(s[s.length - 1]!, digits)}`;
};

async function repeat(o: HttpBenchOptions, what: string, run: () => Promise<LoadResult>): Promise<LoadResult[]> {
  const out: LoadResult[] = [];
  for (let i = 0; i < o.runs; i++) {
    o.log(`${what}, run ${i + 1}/${o.runs}`);
    out.push(await run());
  }
  return out;
}

async function loginTable(o: HttpBenchOptions, order: WorkerVersion[]): Promise<string> {
  const lines = [
    `Logins: workerd CPU per request (ms; min / **median** / max of ${o.runs} runs, 2 connections), and ÷ the same Worker's request without credentials. ` +
      "Both Workers as deployed (static assets) behind the bench's counting entry: the same chain for each.",
    '',
    `| scenario | ${order.map((v) => `${v.label} CPU ms | ÷ no credentials`).join(' | ')} |`,
    `|---|${order.map(() => '---|---').join('|')}|`,
  ];
  const results = new Map<string, LoadResult[]>();
  for (const login of LOGINS) {
    for (const v of order) {
      const run = () =>
        load(v.worker.url, { connections: 2, requests: login.requests, next: login.next, serverPid: v.worker.pid });
      await run(); // warm-up (and the warm login's cache)
      results.set(`${login.name}\u0000${v.label}`, await repeat(o, `${login.name}, ${v.label}`, run));
    }
  }
  for (const login of LOGINS) {
    const cells = order.map((v) => {
      const cpu = (results.get(`${login.name}\u0000${v.label}`) ?? []).map((r) => r.cpuMsPerRequest);
      const none = median((results.get(`${LOGINS[0]!.name}\u0000${v.label}`) ?? []).map((r) => r.cpuMsPerRequest));
      return `${spread(cpu, 3)} | ${fmt(median(cpu) / none)}`;
    });
    lines.push(`| ${login.name} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

async function floodTable(o: HttpBenchOptions, order: WorkerVersion[]): Promise<string> {
  const lines = [
    'A legitimate client (1 connection, warm login) while others send wrong passwords (4 connections): its latency, ms',
    '',
    '| Worker | idle p50 | flood from one address p50 | ÷ idle | flood from rotating addresses p50 | ÷ idle | floor: the same flood without credentials p50 | ÷ idle | flood answers |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const v of order) {
    const legit = (): Promise<LoadResult> =>
      load(v.worker.url, {
        connections: 1,
        requests: 300,
        next: () => lookup({ Authorization: AUTH, 'CF-Connecting-IP': '10.9.0.1' }),
      });
    await legit();
    const idle = await repeat(o, `idle, ${v.label}`, legit);
    type Flood = 'one' | 'rotating' | 'none';
    const flooded = async (kind: Flood): Promise<{ p50: number[]; statuses: Record<number, number> }> => {
      const p50: number[] = [];
      const statuses: Record<number, number> = {};
      for (let run = 0; run < o.runs; run++) {
        o.log(`flood (${kind}), run ${run + 1}/${o.runs}, ${v.label}`);
        let stop = false;
        const flood = (async () => {
          let i = 0;
          while (!stop) {
            const r = await load(v.worker.url, {
              connections: 4,
              requests: 40,
              next: () =>
                kind === 'none'
                  ? lookup({ 'CF-Connecting-IP': `10.10.${(i >> 8) & 255}.${i++ & 255}` })
                  : lookup({
                      Authorization: WRONG(i++),
                      'CF-Connecting-IP': kind === 'rotating' ? `10.8.${(i >> 8) & 255}.${i & 255}` : '10.7.0.1',
                    }),
            });
            for (const [status, n] of Object.entries(r.statuses))
              statuses[Number(status)] = (statuses[Number(status)] ?? 0) + n;
          }
        })();
        await new Promise((resolve) => setTimeout(resolve, 300));
        p50.push((await legit()).p50);
        stop = true;
        await flood;
      }
      return { p50, statuses };
    };
    const one = await flooded('one');
    const rotating = await flooded('rotating');
    // The floor: the same load of the cheapest requests there are (no credentials, 401).
    const floor = await flooded('none');
    const base = median(idle.map((r) => r.p50));
    const answers = (s: Record<number, number>): string =>
      Object.entries(s)
        .map(([status, n]) => `${n}× ${status}`)
        .join(', ');
    lines.push(
      `| ${v.label} | ${spread(idle.map((r) => r.p50))} | ${spread(one.p50)} | ${fmt(median(one.p50) / base)} | ${spread(rotating.p50)} | ${fmt(median(rotating.p50) / base)} | ` +
        `${spread(floor.p50)} | ${fmt(median(floor.p50) / base)} | one: ${answers(one.statuses)}; rotating: ${answers(rotating.statuses)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Where the CPU of the path goes: each Worker of the path table served again with its inspector
 * (apart, so that the timed runs carry no inspector), profiled over the same requests.
 */
async function profile(o: HttpBenchOptions, versions: Versions): Promise<string> {
  const requests = 6_000;
  const stop: LocalWorker[] = []; // the plain versions stop with `versions`
  try {
    const bare = await startScriptWorker(BARE_WORKER, { inspector: true });
    stop.push(bare);
    const plain = await versions.plain({ inspector: true });
    const floor = await startFloorWorker(plain.current.worker, { inspector: true });
    stop.push(floor);
    const columns = [];
    for (const [label, worker, next] of [
      ['bare', bare, () => lookup({})],
      ['floor', floor, () => lookup({})],
      [
        plain.baseline.label,
        plain.baseline.worker,
        () => lookup({ Authorization: AUTH, 'CF-Connecting-IP': '10.5.0.1' }),
      ],
      [
        plain.current.label,
        plain.current.worker,
        () => lookup({ Authorization: AUTH, 'CF-Connecting-IP': '10.5.0.1' }),
      ],
    ] as const) {
      o.log(`profiling panLookup, ${label}`);
      columns.push({ label, profile: await profileWorker(worker, next, { requests, connections: 10 }) });
    }
    return profileTable(
      columns,
      `Where each Worker's CPU goes on that path: V8's sampling profiler of the Worker's own isolate (50 µs interval) over ${requests.toLocaleString('en')} panLookups on 10 connections, ` +
        "each sample charged to the innermost frame of ours on its stack (built-ins to the code of ours that called them), named through the bundle's source map. " +
        "The console is silenced in the profiled Workers (with the inspector attached, every console call also goes to it, at ~0.2 ms a call): the log line's console call is the floor's, measured in the table above. " +
        "The profiler's own overhead inflates every figure alike; the isolate's time only (Miniflare's entry Worker is outside it).",
    );
  } finally {
    await Promise.all(stop.map((w) => w.stop()));
  }
}

async function pathTable(
  o: HttpBenchOptions,
  order: WorkerVersion[],
  bare: LocalWorker,
  floor: LocalWorker,
): Promise<string> {
  const lines = [
    `panLookup with a warm login against a bare Worker answering a constant JSON (min / **median** / max of ${o.runs} runs, 3,000 requests each), ` +
      "and against the floor: a constant Worker sending this tree's answer byte for byte (body and every header) and one log line of the same shape, and nothing else. " +
      'Like for like: every Worker here is its bare bundle served by Miniflare without static assets (so without the asset router and RPC proxy Miniflare puts in front when there are assets) and without the counting entry.',
    '',
    '| connections | Worker | requests/s | workerd CPU ms/request | p50 ms | p99 ms | req/s ÷ bare | CPU ÷ bare | CPU ÷ floor | resets | reconnects |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const targets: { label: string; worker: LocalWorker; next: () => LoadRequest }[] = [
    { label: 'bare', worker: bare, next: () => lookup({}) },
    { label: 'floor (same answer and log line)', worker: floor, next: () => lookup({}) },
    ...order.map((v) => ({
      label: v.label,
      worker: v.worker,
      next: () => lookup({ Authorization: AUTH, 'CF-Connecting-IP': '10.5.0.1' }),
    })),
  ];
  for (const connections of [10, 50]) {
    const results = new Map<string, LoadResult[]>();
    for (const t of targets) await load(t.worker.url, { connections, requests: 500, next: t.next });
    for (let run = 0; run < o.runs; run++) {
      // Each round visits the Workers in another order, so that no one always runs first.
      const round = run % 2 === 0 ? targets : [...targets].reverse();
      for (const t of round) {
        o.log(`panLookup, ${connections} connections, run ${run + 1}/${o.runs}, ${t.label}`);
        const r = await load(t.worker.url, { connections, requests: 3000, next: t.next, serverPid: t.worker.pid });
        results.set(t.label, [...(results.get(t.label) ?? []), r]);
      }
    }
    const bareRps = median((results.get('bare') ?? []).map((r) => r.requestsPerSecond));
    const bareCpu = median((results.get('bare') ?? []).map((r) => r.cpuMsPerRequest));
    const floorCpu = median((results.get(targets[1]!.label) ?? []).map((r) => r.cpuMsPerRequest));
    for (const t of targets) {
      const rs = results.get(t.label) ?? [];
      const sum = (f: (r: LoadResult) => number): number => rs.reduce((n, r) => n + f(r), 0);
      lines.push(
        `| ${connections} | ${t.label} | ${spread(
          rs.map((r) => r.requestsPerSecond),
          0,
        )} | ${spread(
          rs.map((r) => r.cpuMsPerRequest),
          3,
        )} | ` +
          `${fmt(median(rs.map((r) => r.p50)))} | ${fmt(median(rs.map((r) => r.p99)))} | ` +
          `${fmt(median(rs.map((r) => r.requestsPerSecond)) / bareRps)} | ${fmt(median(rs.map((r) => r.cpuMsPerRequest)) / bareCpu)} | ${fmt(median(rs.map((r) => r.cpuMsPerRequest)) / floorCpu)} | ${sum((r) => r.resets)} | ${sum((r) => r.reconnects)} |`,
      );
    }
  }
  // An error answer to a POST whose body the Worker did not read: does the connection survive?
  lines.push(
    '',
    'Keep-alive after error answers to a POST (401 without credentials, 1,000 requests on 10 connections): connections the server reset / closed',
  );
  lines.push('', '| Worker | resets | reconnects |', '|---|---|---|');
  for (const v of order) {
    const r = await load(v.worker.url, {
      connections: 10,
      requests: 1000,
      next: () => lookup({ 'CF-Connecting-IP': '10.6.0.1' }),
    });
    lines.push(`| ${v.label} | ${r.resets} | ${r.reconnects} |`);
  }
  return lines.join('\n');
}

const TOKENS = 'application/vnd.worldpay.tokens-v1.hal+json';
/** Tokens the by-token lookups rotate over: one TokenGroup object each (one per merchant card). */
const TOKEN_COUNT = 8;

/**
 * panLookup by token beside panLookup by card number, on this tree's bare bundle (the path table's
 * Worker), the same merchant, entity and headers: `TOKEN_COUNT` tokens of cards of the same BIN
 * range are created first, and the by-token requests rotate over them. Whatever a lookup by token
 * reads (KV's copy of the token, or the token's Durable Object), it is measured as the tree does it.
 */
async function tokenTable(o: HttpBenchOptions, current: WorkerVersion): Promise<string> {
  const base = current.worker.url;
  const hrefs: string[] = [];
  const stamp = String(Date.now() % 1e5).padStart(5, '0');
  for (let i = 0; i < TOKEN_COUNT; i++) {
    const created = await fetch(new URL('/tokens', base), {
      method: 'POST',
      headers: { Authorization: AUTH, Accept: TOKENS, 'Content-Type': TOKENS },
      body: JSON.stringify({
        paymentInstrument: {
          type: 'card/front',
          cardNumber: withLuhnCheckDigit(`45713684${stamp}${String(i).padStart(2, '0')}`),
          cardExpiryDate: { month: 12, year: 2035 },
        },
        merchant: { entity: 'default' },
      }),
    });
    const body = await created.text();
    if (created.status !== 201) throw new Error(`POST /tokens answered ${created.status}: ${body}`);
    hrefs.push((JSON.parse(body) as { tokenPaymentInstrument: { href: string } }).tokenPaymentInstrument.href);
  }
  const headers = { Authorization: AUTH, 'CF-Connecting-IP': '10.5.0.1' };
  const byToken = (i: number): LoadRequest => ({
    ...lookup(headers),
    body: JSON.stringify({ merchant: { entity: 'default' }, token: hrefs[i % hrefs.length] }),
  });
  const first = await fetch(new URL(LOOKUP, base), {
    method: 'POST',
    headers: { ...BIN, ...headers },
    body: byToken(0).body!,
  });
  if (first.status !== 200) throw new Error(`panLookup by token answered ${first.status}: ${await first.text()}`);
  await first.arrayBuffer();
  const targets = [
    { label: 'by card number', next: () => lookup(headers) },
    { label: `by token (${TOKEN_COUNT} tokens in turn)`, next: byToken },
  ];
  const lines = [
    `panLookup by token beside panLookup by card number: this tree's bare bundle (as in the table above), warm login, the same merchant and entity, cards of the same BIN range; ` +
      `min / **median** / max of ${o.runs} runs, 3,000 requests each, the two alternating which goes first. ÷ by card number: each run's requests/s over the by-card run of the same round.`,
    '',
    '| connections | panLookup | requests/s | workerd CPU ms/request | p50 ms | p99 ms | req/s ÷ by card number | answers |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const connections of [10, 50]) {
    const results = new Map<string, LoadResult[]>();
    for (const t of targets) await load(base, { connections, requests: 500, next: t.next });
    for (let run = 0; run < o.runs; run++) {
      for (const t of run % 2 === 0 ? targets : [...targets].reverse()) {
        o.log(`panLookup ${t.label}, ${connections} connections, run ${run + 1}/${o.runs}`);
        const r = await load(base, { connections, requests: 3000, next: t.next, serverPid: current.worker.pid });
        results.set(t.label, [...(results.get(t.label) ?? []), r]);
      }
    }
    const byCard = results.get(targets[0]!.label) ?? [];
    for (const t of targets) {
      const rs = results.get(t.label) ?? [];
      const statuses: Record<number, number> = {};
      for (const r of rs)
        for (const [status, n] of Object.entries(r.statuses))
          statuses[Number(status)] = (statuses[Number(status)] ?? 0) + n;
      const resets = rs.reduce((n, r) => n + r.resets, 0);
      const answers =
        Object.entries(statuses)
          .map(([status, n]) => `${n}× ${status}`)
          .join(', ') + (resets > 0 ? `, ${resets} resets` : '');
      const ratio =
        t === targets[0] ? '1.00' : spread(rs.map((r, i) => r.requestsPerSecond / byCard[i]!.requestsPerSecond));
      lines.push(
        `| ${connections} | ${t.label} | ${spread(
          rs.map((r) => r.requestsPerSecond),
          0,
        )} | ${spread(
          rs.map((r) => r.cpuMsPerRequest),
          3,
        )} | ${spread(rs.map((r) => r.p50))} | ${spread(rs.map((r) => r.p99))} | ${ratio} | ${answers} |`,
      );
    }
  }
  return lines.join('\n');
}
