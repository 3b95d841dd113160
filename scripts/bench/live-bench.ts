import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { startFakeProvider, startLocalWorker, type LocalWorker } from '../local-worker';
import { timed, timedFlows, type FlowKind, type FlowRun, type FlowBenchOptions } from './threeds-flows';
import { fmt, stats, triple } from './summary';

/**
 * The live part of `npm run bench` (`--only live`): full live 3-D Secure flows of this tree's
 * live Worker (src/live.ts, bundled from wrangler.toml's `[env.live]`) in front of the fake 3DS
 * Server provider, beside the same tree's `test` flows, in the same run (rounds alternate which
 * goes first). Both Workers and the fake are
 * bundled as deployed and served by Miniflare on this machine, so the provider's own latency is
 * the fake's (no network, no Directory Server): the table measures the service's part of a live
 * flow and what it costs over `test`. A report, not a test.
 *
 * - live frictionless (card …2000): deviceDataInitialize (prepares the card) → DDC page → its
 *   facts → the 3DS Method at the ACS → the ACS's notification → authenticate → `authenticated`;
 * - live challenged (card …2072): the same to authenticate (`challenged`) → challenge page (relay)
 *   → the ACS's challenge page → its form with the code → the ACS's final page → the challenge
 *   notification (fetches the RReq) → verification → `authenticated`.
 * - live 3RI (Mastercard …2000): one merchantInitiated request (the 3RI's object asks the prior's
 *   object to count the use, prepares the card and sends the 3RI AReq) → `authenticated`, ECI 07;
 *   its priors are 10 subscriptions set up beforehand by live frictionless flows with `recurring`
 *   (untimed), each 3RI taking the next, as a merchant's renewals spread over its subscribers.
 */

export type LiveBenchOptions = FlowBenchOptions;

const MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const KINDS: FlowKind[] = ['frictionless', 'challenged'];
let sequence = 0;

type Json = Record<string, unknown> & {
  outcome?: string;
  deviceDataCollection?: { jwt: string };
  challenge?: { jwt: string; reference: string };
};

const hidden = (html: string, name: string): string | undefined =>
  new RegExp(`name="${name}" value="([^"]*)"`)
    .exec(html)?.[1]
    ?.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));
const formAction = (html: string): string | undefined =>
  /<form[^>]*action="([^"]+)"/.exec(html)?.[1]?.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));

/** What one live flow did: its requests, and the ids the fake knows it by. */
interface LiveFlow {
  requests: number;
  preparedId: string;
  authenticatedId: string;
}

/** The Mastercard of the 3RI rows (recurring 3RI is Mastercard's). */
const SUBSCRIPTION_CARD = scenarioCard('2000', '531265');
/** The 3RI rows' first payments: room for every 3RI of the bench, 1 minor unit each. */
const SUBSCRIPTION_AMOUNT = 99_999_999;

/** Runs one live flow against the live Worker (`base`) and the fake provider (`fake`). */
async function runLiveFlow(
  base: URL,
  fake: URL,
  kind: FlowKind,
  subscription?: { transactionReference: string },
): Promise<LiveFlow> {
  sequence += 1;
  const transactionReference =
    subscription?.transactionReference ?? `bench-live-${process.pid}-${Date.now()}-${sequence}`;
  const cardNumber = subscription ? SUBSCRIPTION_CARD : scenarioCard(kind === 'challenged' ? '2072' : '2000', '457173');
  const card = { type: 'card/front', cardNumber, cardExpiryDate: { month: 12, year: 2035 } };
  let requests = 0;
  const post = async (url: URL | string, body: string, contentType: string, headers = {}): Promise<Response> => {
    requests++;
    const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': contentType, ...headers }, body });
    if (response.status >= 300) throw new Error(`${String(url)} answered ${response.status}: ${await response.text()}`);
    return response;
  };
  const api = async (step: string, body: unknown): Promise<Json> =>
    (await post(new URL(`/verifications/customers/3ds/${step}`, base), JSON.stringify(body), MEDIA, {
      Authorization: AUTH,
      Accept: MEDIA,
    }).then((r) => r.json())) as Json;
  const form = (url: URL | string, fields: Record<string, string>): Promise<string> =>
    post(url, new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded').then((r) => r.text());

  const merchant = { entity: 'default' };
  const init = await api('deviceDataInitialize', { transactionReference, merchant, paymentInstrument: card });
  const ddc = await form(new URL('/3ds/ddc', base), {
    JWT: init.deviceDataCollection!.jwt,
    Bin: cardNumber.slice(0, 6),
  });
  const config = JSON.parse(/var config = (\{.*?\});/.exec(ddc)![1]!) as Json;
  await post(
    config.factsUrl as string,
    JSON.stringify({
      javascriptEnabled: true,
      javaEnabled: false,
      language: 'en-GB',
      colorDepth: 24,
      screenHeight: 900,
      screenWidth: 1440,
      timeZone: 0,
    }),
    'application/json',
  );
  const methodUrl = /<form id="method" method="post" action="([^"]+)"/.exec(ddc)?.[1];
  const methodData = hidden(ddc, 'threeDSMethodData');
  if (!methodUrl || !methodData) throw new Error('the live DDC page ran no 3DS Method');
  const preparedId = (JSON.parse(Buffer.from(methodData, 'base64url').toString()) as Json)
    .threeDSServerTransID as string;
  const acsMethod = await form(methodUrl, { threeDSMethodData: methodData });
  await form(formAction(acsMethod)!, { threeDSMethodData: hidden(acsMethod, 'threeDSMethodData') ?? '' });
  const auth = await api('authenticate', {
    transactionReference,
    merchant,
    instruction: {
      value: { amount: subscription ? SUBSCRIPTION_AMOUNT : 1000, currency: 'GBP' },
      paymentInstrument: { ...card, cardHolderName: 'Jane Doe' },
    },
    ...(subscription
      ? { recurring: { type: 'recurring', expiry: `${new Date().getUTCFullYear() + 1}-12-31`, frequencyDays: 30 } }
      : {}),
    deviceData: {
      acceptHeader: 'text/html',
      userAgentHeader: 'bench',
      collectionReference: (JSON.parse(config.message as string) as Json).SessionId as string,
    },
    challenge: { returnUrl: 'https://shop.example/3ds/return' },
  });
  if (kind === 'frictionless') {
    if (auth.outcome !== 'authenticated') throw new Error(`live frictionless flow answered ${JSON.stringify(auth)}`);
    return { requests, preparedId, authenticatedId: preparedId };
  }
  if (auth.outcome !== 'challenged') throw new Error(`live challenged flow answered ${JSON.stringify(auth)}`);
  const relay = await form(new URL('/3ds/challenge', base), { JWT: auth.challenge!.jwt, MD: 'bench' });
  const creq = hidden(relay, 'creq')!;
  const authenticatedId = (JSON.parse(Buffer.from(creq, 'base64url').toString()) as Json)
    .threeDSServerTransID as string;
  const acsPage = await form(formAction(relay)!, { creq, threeDSSessionData: hidden(relay, 'threeDSSessionData')! });
  const fields: Record<string, string> = { code: '1234', action: 'submit' };
  for (const [, name, value] of acsPage.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
    fields[name!] = value!;
  const final = await form(new URL(formAction(acsPage)!, fake), fields);
  await form(formAction(final)!, {
    cres: hidden(final, 'cres')!,
    threeDSSessionData: hidden(final, 'threeDSSessionData') ?? '',
  });
  const verified = await api('verification', {
    transactionReference,
    merchant,
    challenge: { reference: auth.challenge!.reference },
  });
  if (verified.outcome !== 'authenticated') throw new Error(`live challenged flow verified as ${verified.outcome}`);
  return { requests, preparedId, authenticatedId };
}

/** One live 3RI of the subscription `prior` (1 minor unit): one request. */
async function runThreeRi(base: URL, prior: string): Promise<number> {
  sequence += 1;
  const response = await fetch(new URL('/verifications/customers/3ds/merchantInitiated', base), {
    method: 'POST',
    headers: { 'Content-Type': MEDIA, Accept: MEDIA, Authorization: AUTH },
    body: JSON.stringify({
      transactionReference: `bench-3ri-${process.pid}-${Date.now()}-${sequence}`,
      merchant: { entity: 'default' },
      priorTransactionReference: prior,
      type: 'recurring',
      instruction: {
        value: { amount: 1, currency: 'GBP' },
        paymentInstrument: {
          type: 'card/front',
          cardNumber: SUBSCRIPTION_CARD,
          cardExpiryDate: { month: 12, year: 2035 },
        },
      },
    }),
  });
  const answer = (await response.json()) as Json & { authentication?: { eci?: string } };
  if (response.status !== 200 || answer.outcome !== 'authenticated' || answer.authentication?.eci !== '07')
    throw new Error(`live 3RI answered ${response.status} ${JSON.stringify(answer)}`);
  return 1;
}

/** The provider calls of one flow of each kind, as the fake saw them. */
async function providerCalls(live: URL, fake: URL): Promise<Record<FlowKind, string>> {
  const out = {} as Record<FlowKind, string>;
  for (const kind of KINDS) {
    const flow = await runLiveFlow(live, fake, kind);
    const saw = (await (await fetch(new URL(`/_fake/transactions/${flow.authenticatedId}`, fake))).json()) as {
      authCalls: number;
      postauthCalls: number;
    };
    const preauth = flow.preparedId === flow.authenticatedId ? 1 : 2;
    out[kind] = `/preauth ${preauth}, /auth ${saw.authCalls}, /postauth ${saw.postauthCalls}`;
  }
  return out;
}

export async function runLiveBench(o: LiveBenchOptions): Promise<string> {
  const workers: LocalWorker[] = [];
  try {
    o.log('bundling and starting the fake provider, the live Worker and the test Worker');
    const fake = await startFakeProvider({ root: o.root, quiet: true });
    workers.push(fake);
    // One after the other, each kept to be stopped as soon as it runs.
    const live = await startLocalWorker({
      root: o.root,
      quiet: process.env.BENCH_LOUD !== '1',
      env: 'live',
      vars: { THREEDS_SERVER_URL: fake.url.origin },
    });
    workers.push(live);
    const test = await startLocalWorker({ root: o.root, quiet: true });
    workers.push(test);
    o.log('counting the provider calls of one flow of each kind');
    const calls = await providerCalls(live.url, fake.url);
    const modes = [
      {
        label: 'test (built-in ACS)',
        run: (kind: FlowKind, n: number) => timedFlows(test.url, kind, n, o.concurrency),
      },
      {
        label: 'live (fake provider)',
        run: (kind: FlowKind, n: number) =>
          timed(async () => (await runLiveFlow(live.url, fake.url, kind)).requests, n, o.concurrency),
      },
    ];
    o.log('setting up 10 subscriptions (live frictionless flows with recurring), for the 3RI rows');
    const priors: string[] = [];
    for (let i = 0; i < 10; i++) {
      const transactionReference = `bench-sub-${process.pid}-${Date.now()}-${i}`;
      await runLiveFlow(live.url, fake.url, 'frictionless', { transactionReference });
      priors.push(transactionReference);
    }
    let renewal = 0;
    const threeRi = (n: number) =>
      timed(() => runThreeRi(live.url, priors[renewal++ % priors.length]!), n, o.concurrency);
    const results = new Map<string, FlowRun[]>();
    o.log(`3RI, warm-up (${Math.min(20, o.flows)})`);
    await threeRi(Math.min(20, o.flows));
    for (const kind of KINDS) {
      o.log(`${kind} flows, warm-up (${Math.min(20, o.flows)} flows each)`);
      for (const m of modes) await m.run(kind, Math.min(20, o.flows)); // warm-up
      for (let run = 0; run < o.runs; run++) {
        for (const m of run % 2 === 0 ? modes : [...modes].reverse()) {
          o.log(`${kind} flows, run ${run + 1}/${o.runs}, ${m.label}`);
          const key = `${kind}\u0000${m.label}`;
          results.set(key, [...(results.get(key) ?? []), await m.run(kind, o.flows)]);
          // The 3RI beside the browser frictionless flow, in the same rounds.
          if (kind === 'frictionless' && m === modes[1]) {
            o.log(`3RI, run ${run + 1}/${o.runs}`);
            results.set('3ri', [...(results.get('3ri') ?? []), await threeRi(o.flows)]);
          }
        }
      }
    }
    const lines = [
      `${o.flows} flows per run, ${o.concurrency} at a time, ${o.runs} runs (min / **median** / max); both Workers are this tree's`,
      '',
      '| flow | environment | flows/s | requests/s | flow p50 ms | flow p99 ms | flows/s ÷ test (medians) | provider calls per flow |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const kind of KINDS) {
      const base = median((results.get(`${kind}\u0000${modes[0]!.label}`) ?? []).map((r) => r.flowsPerSecond));
      for (const [i, m] of modes.entries()) {
        const runs = results.get(`${kind}\u0000${m.label}`) ?? [];
        lines.push(
          `| ${kind} | ${m.label} | ${triple(runs.map((r) => r.flowsPerSecond))} | ${triple(runs.map((r) => r.requestsPerSecond))} | ` +
            `${triple(runs.map((r) => r.p50))} | ${triple(runs.map((r) => r.p99))} | ` +
            `${i === 0 ? '1.00' : fmt(median(runs.map((r) => r.flowsPerSecond)) / base, 2)} | ${i === 0 ? '–' : calls[kind]} |`,
        );
      }
    }
    const browser = median((results.get(`frictionless\u0000${modes[1]!.label}`) ?? []).map((r) => r.flowsPerSecond));
    const renewals = results.get('3ri') ?? [];
    lines.push(
      `| 3RI (one request) | live (fake provider) | ${triple(renewals.map((r) => r.flowsPerSecond))} | ` +
        `${triple(renewals.map((r) => r.requestsPerSecond))} | ${triple(renewals.map((r) => r.p50))} | ` +
        `${triple(renewals.map((r) => r.p99))} | ${fmt(median(renewals.map((r) => r.flowsPerSecond)) / browser, 2)} ÷ live frictionless | /preauth 1, /auth 1 |`,
    );
    return lines.join('\n');
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

const median = (values: number[]): number => stats(values).median;
