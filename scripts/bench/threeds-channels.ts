import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { createTransaction, type DirectoryServer } from '../../test/sdk/test-sdk';
import { startFakeProvider, startLocalWorker, type LocalWorker } from '../local-worker';
import { processCpuSeconds } from './load';
import { runFlow, timed, type FlowBenchOptions } from './threeds-flows';
import { fmt, stats, triple } from './summary';

/**
 * `npm run bench -- --only threeds-channels`: the 3DS flows of each channel in `test`, side by side
 * in the same run against this tree's Worker (bundled as deployed, served by Miniflare): the
 * browser's frictionless and challenged flows (scripts/bench/threeds-flows.ts), an app's
 * frictionless and challenged flows through the repository's test SDK (test/sdk/: its ephemeral
 * key, encData, the acsSignedContent check, the CReqs and CRes over the secure channel, a wrong
 * code then the right one), and a decoupled authentication ended by the sandbox control. Each run
 * gives flows/s, the flow's p50 and workerd's CPU per flow. A report, not a test.
 *
 * - app frictionless: authenticate (the SDK's data) → `authenticated` (1 request);
 * - app challenged: authenticate → 3 CReqs (the screen, a wrong code, 1234) → verification (5);
 * - decoupled: authenticate (`decoupled {maxMinutes}`) → sandbox completeChallenge → verification (3).
 *
 * Then the same channels in `live`, this tree's live Worker in front of the fake provider (both
 * bundled as deployed, served by Miniflare): app frictionless (card …2100), app challenged (…2172:
 * the test SDK's CReqs go to the fake's ACS, then verification, whose object fetches the RReq),
 * and decoupled (…2075, a browser with its fields and no DDC page: the fake's issuer answers 3 s
 * after the ARes, so the flow waits that long before verification; that row runs 5 times as many
 * flows at a time, and its flows/s says how many waits overlap rather than what the service costs:
 * read its CPU per flow).
 */

export type ChannelsOptions = FlowBenchOptions;

const MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const HEADERS = {
  Authorization: `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`,
  Accept: MEDIA,
  'Content-Type': MEDIA,
};
const CARD = { type: 'card/front', cardNumber: '4571736000000000', cardExpiryDate: { month: 12, year: 2035 } };
const merchant = { entity: 'default' };
let sequence = 0;

/** What the flows read of the answers. */
interface Json {
  outcome?: string;
  authentication?: { version: string };
  challenge?: { reference: string; payload?: string };
}

async function api(base: URL, step: string, body: unknown): Promise<Json> {
  const response = await fetch(new URL(`/verifications/customers/3ds/${step}`, base), {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${step} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Json;
}

function reference(): string {
  sequence += 1;
  return `bench-ch-${process.pid}-${Date.now()}-${sequence}`;
}

/** An app's flow through the test SDK; answers its request count. */
async function appFlow(base: URL, ds: DirectoryServer, challenged: boolean): Promise<number> {
  const sdk = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'CARD-EDGE-BENCH' });
  const transactionReference = reference();
  const name = challenged ? '3ds2-challenge-identified' : '3ds2-frictionless-identified';
  const auth = await api(base, 'authenticate', {
    transactionReference,
    merchant,
    instruction: { value: { amount: 1000, currency: 'GBP' }, paymentInstrument: { ...CARD, cardHolderName: name } },
    deviceData: { channel: 'app', sdk: sdk.authenticationParameters() },
    challenge: {},
  });
  if (!challenged) {
    if (auth.outcome !== 'authenticated') throw new Error(`app frictionless answered ${String(auth.outcome)}`);
    return 1;
  }
  let creqs = 0;
  const codes = ['0000', '1234'];
  const result = await sdk.doChallenge(auth.challenge!.payload!, {
    messageVersion: auth.authentication!.version,
    answer: () => Promise.resolve({ code: codes.shift() ?? '' }),
    fetch: (request) => {
      creqs++;
      return fetch(new URL(new URL(request.url).pathname, base), {
        method: 'POST',
        headers: { 'Content-Type': 'application/jose' },
        body: request.body,
        duplex: 'half',
      } as RequestInit);
    },
  });
  if (!result.ok || result.transStatus !== 'Y') throw new Error(`app challenge: ${JSON.stringify(result)}`);
  const verified = await api(base, 'verification', {
    transactionReference,
    merchant,
    challenge: { reference: auth.challenge!.reference },
  });
  if (verified.outcome !== 'authenticated') throw new Error(`app verification: ${String(verified.outcome)}`);
  return 2 + creqs;
}

/** A decoupled authentication, ended by the sandbox control (the issuer's answer, at once). */
async function decoupledFlow(base: URL): Promise<number> {
  const transactionReference = reference();
  const auth = await api(base, 'authenticate', {
    transactionReference,
    merchant,
    instruction: {
      value: { amount: 1000, currency: 'GBP' },
      paymentInstrument: { ...CARD, cardHolderName: '3ds2-decoupled-authenticated' },
    },
    deviceData: { acceptHeader: 'text/html', userAgentHeader: 'bench' },
    challenge: { returnUrl: 'https://shop.example/3ds/return' },
    decoupled: { maxMinutes: 30 },
  });
  if (auth.outcome !== 'decoupled') throw new Error(`decoupled answered ${String(auth.outcome)}`);
  const challenge = { reference: auth.challenge!.reference };
  await api(base, 'sandbox/completeChallenge', { transactionReference, merchant, challenge, result: 'passed' });
  const verified = await api(base, 'verification', { transactionReference, merchant, challenge });
  if (verified.outcome !== 'authenticated') throw new Error(`decoupled verification: ${String(verified.outcome)}`);
  return 3;
}

/** The browser fields a live AReq needs when no DDC page ran. */
const BROWSER_FIELDS = {
  acceptHeader: 'text/html',
  userAgentHeader: 'bench',
  browserLanguage: 'en-GB',
  browserColorDepth: '24',
  browserScreenHeight: 1080,
  browserScreenWidth: 1920,
  timeZone: '-60',
  browserJavaEnabled: false,
  browserJavascriptEnabled: true,
};

/** A live app flow against the fake provider (card …2100 frictionless, …2172 a code); answers its request count. */
async function liveAppFlow(live: URL, fakeDs: DirectoryServer, challenged: boolean): Promise<number> {
  const sdk = await createTransaction({ directoryServer: fakeDs, sdkReferenceNumber: 'CARD-EDGE-BENCH' });
  const transactionReference = reference();
  const cardNumber = scenarioCard(challenged ? '2172' : '2100');
  const auth = await api(live, 'authenticate', {
    transactionReference,
    merchant,
    instruction: { value: { amount: 1000, currency: 'GBP' }, paymentInstrument: { ...CARD, cardNumber } },
    deviceData: { channel: 'app', sdk: sdk.authenticationParameters() },
    challenge: {},
  });
  if (!challenged) {
    if (auth.outcome !== 'authenticated') throw new Error(`live app frictionless answered ${String(auth.outcome)}`);
    return 1;
  }
  let creqs = 0;
  const codes = ['0000', '1234'];
  const result = await sdk.doChallenge(auth.challenge!.payload!, {
    messageVersion: auth.authentication!.version,
    answer: () => Promise.resolve({ code: codes.shift() ?? '' }),
    // The fake's ACS, at the acsURL of its signed content (the fake's own origin).
    fetch: (request) => {
      creqs++;
      return fetch(request);
    },
  });
  if (!result.ok || result.transStatus !== 'Y') throw new Error(`live app challenge: ${JSON.stringify(result)}`);
  const verified = await api(live, 'verification', {
    transactionReference,
    merchant,
    challenge: { reference: auth.challenge!.reference },
  });
  if (verified.outcome !== 'authenticated') throw new Error(`live app verification: ${String(verified.outcome)}`);
  return 2 + creqs;
}

/** The fake issuer of a live decoupled authentication answers this long after the ARes (its …75 card). */
const LIVE_DECOUPLED_WAIT_MS = 3_100;

/** A live decoupled authentication: authenticate, the issuer's 3 s, verification (again while `decoupled`). */
async function liveDecoupledFlow(live: URL): Promise<number> {
  const transactionReference = reference();
  const auth = await api(live, 'authenticate', {
    transactionReference,
    merchant,
    instruction: {
      value: { amount: 1000, currency: 'GBP' },
      paymentInstrument: { ...CARD, cardNumber: scenarioCard('2075') },
    },
    deviceData: BROWSER_FIELDS,
    challenge: { returnUrl: 'https://shop.example/3ds/return' },
    decoupled: { maxMinutes: 30 },
  });
  if (auth.outcome !== 'decoupled') throw new Error(`live decoupled answered ${String(auth.outcome)}`);
  const challenge = { reference: auth.challenge!.reference };
  await new Promise((resolve) => setTimeout(resolve, LIVE_DECOUPLED_WAIT_MS));
  for (let requests = 2; requests < 10; requests++) {
    const verified = await api(live, 'verification', { transactionReference, merchant, challenge });
    if (verified.outcome === 'authenticated') return requests;
    if (verified.outcome !== 'decoupled') throw new Error(`live decoupled verification: ${String(verified.outcome)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('live decoupled: no result after 8 verifications');
}

export async function runThreeDsChannels(o: ChannelsOptions): Promise<string> {
  o.log('bundling and serving this tree’s Worker, the fake provider and the live Worker');
  const servers: LocalWorker[] = [];
  try {
    const worker = await startLocalWorker({ root: o.root, quiet: true });
    servers.push(worker);
    const fake = await startFakeProvider({ root: o.root, quiet: true });
    servers.push(fake);
    const live = await startLocalWorker({
      root: o.root,
      quiet: true,
      env: 'live',
      vars: { THREEDS_SERVER_URL: fake.url.origin },
    });
    servers.push(live);
    const dsAnswer = await fetch(new URL('/3ds/test/directory-server', worker.url));
    const ds = (await dsAnswer.json()) as DirectoryServer;
    const fakeDs = (await (await fetch(new URL('/_fake/directory-server', fake.url))).json()) as DirectoryServer;
    const flows: {
      label: string;
      requests: string;
      flow: () => Promise<number>;
      server: LocalWorker;
      concurrency?: number;
    }[] = [
      {
        label: 'browser frictionless',
        requests: '3',
        flow: () => runFlow(worker.url, 'frictionless', false),
        server: worker,
      },
      {
        label: 'browser challenged',
        requests: '6',
        flow: () => runFlow(worker.url, 'challenged', false),
        server: worker,
      },
      {
        label: 'app frictionless (test SDK)',
        requests: '1',
        flow: () => appFlow(worker.url, ds, false),
        server: worker,
      },
      {
        label: 'app challenged (test SDK, a wrong code then 1234)',
        requests: '5',
        flow: () => appFlow(worker.url, ds, true),
        server: worker,
      },
      {
        label: 'decoupled (sandbox completeChallenge)',
        requests: '3',
        flow: () => decoupledFlow(worker.url),
        server: worker,
      },
      {
        label: 'live: app frictionless (fake provider)',
        requests: '1',
        flow: () => liveAppFlow(live.url, fakeDs, false),
        server: live,
      },
      {
        label: 'live: app challenged (fake ACS, a wrong code then 1234)',
        requests: '2 + 3 CReqs at the fake',
        flow: () => liveAppFlow(live.url, fakeDs, true),
        server: live,
      },
      {
        label: 'live: decoupled (the fake issuer answers after 3 s)',
        requests: '2+',
        flow: () => liveDecoupledFlow(live.url),
        server: live,
        concurrency: o.concurrency * 5,
      },
    ];
    const results = new Map<string, { flowsPerSecond: number; p50: number; cpu: number }[]>();
    o.log('warm-up');
    for (const f of flows) await timed(f.flow, Math.min(20, o.flows), f.concurrency ?? o.concurrency);
    for (let run = 0; run < o.runs; run++) {
      for (const f of run % 2 === 0 ? flows : [...flows].reverse()) {
        o.log(`run ${run + 1}/${o.runs}: ${f.label}`);
        // The CPU of the Worker serving the flow (a live flow's: the live Worker's, not the fake's).
        const pid = f.server.pid;
        const before = pid !== undefined ? processCpuSeconds(pid) : NaN;
        const r = await timed(f.flow, o.flows, f.concurrency ?? o.concurrency);
        const cpu = (((pid !== undefined ? processCpuSeconds(pid) : NaN) - before) * 1000) / o.flows;
        results.set(f.label, [...(results.get(f.label) ?? []), { flowsPerSecond: r.flowsPerSecond, p50: r.p50, cpu }]);
      }
    }
    const browser = stats(results.get('browser challenged')!.map((r) => r.flowsPerSecond)).median;
    return [
      `${o.flows} flows per run, ${o.concurrency} at a time (live decoupled: ${o.concurrency * 5}), ${o.runs} runs (min / **median** / max); the test Worker serves the first five rows, the live Worker in front of the fake provider the last three (its CPU column is the live Worker's alone); the last column is each flow's median flows/s over the browser challenged flow's in test.`,
      '',
      '| flow | requests | flows/s | flow p50 ms | workerd CPU ms/flow | ÷ browser challenged |',
      '|---|---|---|---|---|---|',
      ...flows.map((f) => {
        const rs = results.get(f.label)!;
        const median = stats(rs.map((r) => r.flowsPerSecond)).median;
        return `| ${f.label} | ${f.requests} | ${triple(rs.map((r) => r.flowsPerSecond))} | ${triple(rs.map((r) => r.p50))} | ${triple(rs.map((r) => r.cpu))} | ${fmt(median / browser, 2)} |`;
      }),
    ].join('\n');
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}
