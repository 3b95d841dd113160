import { createTransaction, type DirectoryServer } from '../../test/sdk/test-sdk';
import { startLocalWorker } from '../local-worker';
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

export async function runThreeDsChannels(o: ChannelsOptions): Promise<string> {
  o.log('bundling and serving this tree’s Worker');
  const worker = await startLocalWorker({ root: o.root, quiet: true });
  try {
    const dsAnswer = await fetch(new URL('/3ds/test/directory-server', worker.url));
    const ds = (await dsAnswer.json()) as DirectoryServer;
    const flows: { label: string; requests: string; flow: () => Promise<number> }[] = [
      { label: 'browser frictionless', requests: '3', flow: () => runFlow(worker.url, 'frictionless', false) },
      { label: 'browser challenged', requests: '6', flow: () => runFlow(worker.url, 'challenged', false) },
      { label: 'app frictionless (test SDK)', requests: '1', flow: () => appFlow(worker.url, ds, false) },
      {
        label: 'app challenged (test SDK, a wrong code then 1234)',
        requests: '5',
        flow: () => appFlow(worker.url, ds, true),
      },
      { label: 'decoupled (sandbox completeChallenge)', requests: '3', flow: () => decoupledFlow(worker.url) },
    ];
    const results = new Map<string, { flowsPerSecond: number; p50: number; cpu: number }[]>();
    o.log('warm-up');
    for (const f of flows) await timed(f.flow, Math.min(20, o.flows), o.concurrency);
    for (let run = 0; run < o.runs; run++) {
      for (const f of run % 2 === 0 ? flows : [...flows].reverse()) {
        o.log(`run ${run + 1}/${o.runs}: ${f.label}`);
        const before = worker.pid !== undefined ? processCpuSeconds(worker.pid) : NaN;
        const r = await timed(f.flow, o.flows, o.concurrency);
        const cpu = (((worker.pid !== undefined ? processCpuSeconds(worker.pid) : NaN) - before) * 1000) / o.flows;
        results.set(f.label, [...(results.get(f.label) ?? []), { flowsPerSecond: r.flowsPerSecond, p50: r.p50, cpu }]);
      }
    }
    const browser = stats(results.get('browser challenged')!.map((r) => r.flowsPerSecond)).median;
    return [
      `${o.flows} flows per run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max), one Worker serving every channel in turn; the last column is each flow's median flows/s over the browser challenged flow's.`,
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
    await worker.stop();
  }
}
