import type { WorkerVersion } from './worker-versions';

/**
 * Full 3DS flows against a served Worker, as a merchant's server and a cardholder's browser would
 * drive them (without a browser: the pages' forms are posted directly):
 *
 * - frictionless: deviceDataInitialize → DDC page → authenticate (no challenge requested, a
 *   small amount, the collection's SessionId) → `authenticated`;
 * - challenged: deviceDataInitialize → DDC page → authenticate (test card that challenges) →
 *   challenge page → form post with the right code → verification → `authenticated`.
 */

export type FlowKind = 'frictionless' | 'challenged';

/** What a report of timed flows takes (the live, costs and channels reports). */
export interface FlowBenchOptions {
  root: string;
  runs: number;
  flows: number;
  concurrency: number;
  log: (m: string) => void;
}

const MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const CARD = { type: 'card/front', cardNumber: '4571736000000000', cardExpiryDate: { month: 12, year: 2035 } };
let sequence = 0;

type Json = Record<string, unknown> & {
  outcome?: string;
  deviceDataCollection?: { jwt: string };
  challenge?: { jwt: string; reference: string };
};

/** Runs one flow; `step` labels each request for the storage counts (undefined: not counted). */
export async function runFlow(base: URL, kind: FlowKind, counted: boolean): Promise<number> {
  sequence += 1;
  const transactionReference = `bench-${process.pid}-${Date.now()}-${sequence}`;
  let requests = 0;
  const headersFor = (step: string): Record<string, string> => (counted ? { 'x-bench-step': step } : {});
  const api = async (step: string, body: unknown): Promise<Json> => {
    requests++;
    const response = await fetch(new URL(`/verifications/customers/3ds/${step}`, base), {
      method: 'POST',
      headers: { Authorization: AUTH, Accept: MEDIA, 'Content-Type': MEDIA, ...headersFor(step) },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`${step} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Json;
  };
  const page = async (path: string, step: string, fields: Record<string, string>): Promise<string> => {
    requests++;
    const response = await fetch(new URL(path, base), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headersFor(step) },
      body: new URLSearchParams(fields).toString(),
    });
    const html = await response.text();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    return html;
  };

  const merchant = { entity: 'default' };
  const init = await api('deviceDataInitialize', { transactionReference, merchant, paymentInstrument: CARD });
  const ddc = await page('/3ds/ddc', 'DDC page', { JWT: init.deviceDataCollection!.jwt, Bin: '457173' });
  const sessionId = /"SessionId":"([^"]+)"/.exec(ddc)?.[1];
  if (!sessionId) throw new Error('the DDC page gave no SessionId');
  const challenged = kind === 'challenged';
  const auth = await api('authenticate', {
    transactionReference,
    merchant,
    instruction: {
      value: { amount: 1000, currency: 'GBP' },
      paymentInstrument: challenged ? { ...CARD, cardHolderName: '3ds2-challenge-identified' } : CARD,
    },
    deviceData: { acceptHeader: 'text/html', userAgentHeader: 'bench', collectionReference: sessionId },
    challenge: {
      returnUrl: 'https://shop.example/3ds/return',
      ...(challenged ? {} : { preference: 'noChallengeRequested' }),
    },
  });
  if (!challenged) {
    if (auth.outcome !== 'authenticated') throw new Error(`frictionless flow answered ${auth.outcome}`);
    return requests;
  }
  const form = await page('/3ds/challenge', 'challenge page', { JWT: auth.challenge!.jwt, MD: 'bench' });
  const state = /name="state" value="([^"]+)"/.exec(form)?.[1];
  if (!state) throw new Error('the challenge page showed no form');
  await page('/3ds/challenge/submit', 'challenge form post', { state, code: '1234', action: 'submit' });
  const verified = await api('verification', {
    transactionReference,
    merchant,
    challenge: { reference: auth.challenge!.reference },
  });
  if (verified.outcome !== 'authenticated') throw new Error(`challenged flow verified as ${verified.outcome}`);
  return requests;
}

export interface FlowRun {
  flowsPerSecond: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
}

/** `flows` flows of one kind, `concurrency` at a time; latency is each whole flow's. */
export function timedFlows(base: URL, kind: FlowKind, flows: number, concurrency: number): Promise<FlowRun> {
  return timed(() => runFlow(base, kind, false), flows, concurrency);
}

/**
 * Runs `flows` flows, `concurrency` at a time: flows/s, requests/s (each flow says how many
 * requests it made), and the p50 and p99 of each whole flow's latency.
 */
export async function timed(flow: () => Promise<number>, flows: number, concurrency: number): Promise<FlowRun> {
  const latencies: number[] = [];
  let requests = 0;
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < flows) {
        next++;
        const start = performance.now();
        // Awaited first: `requests += await …` would add to the count read before the await.
        const made = await flow();
        requests += made;
        latencies.push(performance.now() - start);
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { flowsPerSecond: flows / seconds, requestsPerSecond: requests / seconds, p50: at(0.5), p99: at(0.99) };
}

export interface StepCounts {
  requests: number;
  kvReads: number;
  kvWrites: number;
  doCalls: number;
}

/** Storage calls per step, from one counted flow of each kind. */
export async function storageCounts(version: WorkerVersion): Promise<Record<string, StepCounts>> {
  const base = version.worker.url;
  await fetch(new URL('/__bench/counts', base)); // reset
  await runFlow(base, 'frictionless', true);
  const frictionless = (await (await fetch(new URL('/__bench/counts', base))).json()) as Record<string, StepCounts>;
  await runFlow(base, 'challenged', true);
  const challenged = (await (await fetch(new URL('/__bench/counts', base))).json()) as Record<string, StepCounts>;
  const out: Record<string, StepCounts> = {};
  for (const [step, c] of Object.entries(frictionless)) out[`${step} (frictionless)`] = c;
  for (const [step, c] of Object.entries(challenged)) out[`${step} (challenged)`] = c;
  return out;
}
