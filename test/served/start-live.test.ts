import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type LocalWorker } from '../../scripts/local-worker';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { freePort } from './served-worker';

/**
 * `npm run start:live` (scripts/start-live.mjs) as a developer runs it: the live Worker under
 * `wrangler dev --env live` with the demo, in front of the fake 3DS Server provider or of a
 * provider of one's choosing (THREEDS_SERVER_URL), on ports that are free even when another
 * `wrangler dev` holds the inspector's usual 9229 and 9230.
 */

const MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts scripts/start-live.mjs with these variables over the environment, in its own process group. */
function startLive(vars: Record<string, string>): Run {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), WRANGLER_SEND_METRICS: 'false' };
  for (const name of [
    'PORT',
    'FAKE_PORT',
    'INSPECTOR_PORT',
    'FAKE_INSPECTOR_PORT',
    'THREEDS_SERVER_URL',
    'THREEDS_SERVER_API_KEY',
    'PUBLIC_BASE_URL',
    // wrangler's own log level: below info, it would not say `Ready on`, which start:live waits for.
    'WRANGLER_LOG',
  ])
    delete env[name];
  const child = spawn(process.execPath, ['scripts/start-live.mjs'], {
    cwd: process.cwd(),
    detached: true,
    env: { ...env, ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Ctrl-C, as a developer stops it; both wranglers go with it. */
async function stopLive(run: Run | undefined): Promise<void> {
  if (!run || run.child.exitCode !== null) return;
  process.kill(run.child.pid!, 'SIGINT');
  await Promise.race([run.exited, new Promise((r) => setTimeout(r, 10_000))]);
}

/** The command lines of every process on this machine (Linux's /proc). */
function commandLines(): string[] {
  const lines: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '));
    } catch {
      // the process ended meanwhile
    }
  }
  return lines;
}

/** Listens on a port of 127.0.0.1 (0: any free one); undefined when another program has it. */
function hold(port = 0): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * Waits for start:live's own `[start:live] ready:` line, which it prints once each wrangler it
 * started has said it is ready on its own port (the Worker loaded behind it). Not "something
 * answers at the port": another program may hold the port for a moment before wrangler binds it,
 * and it answers too (wrangler's own helper servers answer 404 with an empty body).
 */
function ready(run: Run): Promise<void> {
  return new Promise((resolve, reject) => {
    const said = (): boolean => run.output().includes('[start:live] ready:');
    const done = (error?: Error): void => {
      clearTimeout(late);
      run.child.stdout!.off('data', check);
      run.child.off('exit', ended);
      if (error) reject(error);
      else resolve();
    };
    const check = (): void => {
      if (said()) done();
    };
    const ended = (): void => done(new Error(`start:live ended:\n${run.output()}`));
    const late = setTimeout(() => done(new Error(`start:live did not say it was ready:\n${run.output()}`)), 120_000);
    // Registered after the run's own listeners: by the time this one runs, the output has the chunk.
    run.child.stdout!.on('data', check);
    run.child.once('exit', ended);
    if (run.child.exitCode !== null) ended();
    else check();
  });
}

/** A frictionless live authenticate through the service's API, with the browser fields. */
async function authenticate(base: string, suffix: string): Promise<Record<string, any>> {
  const response = await fetch(`${base}/verifications/customers/3ds/authenticate`, {
    method: 'POST',
    headers: { Authorization: AUTH, Accept: MEDIA, 'Content-Type': MEDIA },
    body: JSON.stringify({
      transactionReference: `start-live-${crypto.randomUUID()}`,
      merchant: { entity: 'default' },
      instruction: {
        value: { amount: 250, currency: 'GBP' },
        paymentInstrument: {
          type: 'card/front',
          cardNumber: scenarioCard(suffix),
          cardExpiryDate: { month: 12, year: 2035 },
        },
      },
      deviceData: {
        acceptHeader: 'text/html',
        userAgentHeader: 'Mozilla/5.0 (test)',
        browserLanguage: 'en-GB',
        browserColorDepth: '24',
        browserScreenHeight: 1080,
        browserScreenWidth: 1920,
        timeZone: '-60',
        browserJavaEnabled: false,
        browserJavascriptEnabled: true,
        ipAddress: '192.0.2.10',
      },
      challenge: { returnUrl: 'https://shop.example/3ds/return' },
    }),
  });
  const body = (await response.json()) as Record<string, any>;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

describe('start:live refuses a port it cannot have, naming the variable', () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = (await hold())!;
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));
  // Should a refusal ever fail to happen, nothing is left running.
  const runs: Run[] = [];
  afterEach(async () => {
    for (const run of runs.splice(0)) await stopLive(run);
  });
  const started = (vars: Record<string, string>): Run => {
    const run = startLive(vars);
    runs.push(run);
    return run;
  };

  it.each(['PORT', 'FAKE_PORT', 'INSPECTOR_PORT'])('%s taken by another program', async (name) => {
    const run = started({ [name]: String(port) });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(`${name}=${port} is in use by another program: set ${name} to a free port`);
  });

  it('THREEDS_SERVER_URL without the provider’s key', async () => {
    const run = started({ THREEDS_SERVER_URL: 'https://sandbox.example', PORT: String(await freePort()) });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('give its API key as THREEDS_SERVER_API_KEY');
  });
});

describe('start:live with the fake, while another program holds 9229 and 9230', () => {
  let run: Run | undefined;
  const held: Server[] = [];
  let base: string;
  let fakePort: number;

  beforeAll(async () => {
    // Another wrangler dev's inspectors (when they are free here; otherwise someone already has them).
    for (const p of [9229, 9230]) {
      const server = await hold(p);
      if (server) held.push(server);
    }
    const port = await freePort();
    fakePort = await freePort();
    base = `http://localhost:${port}`;
    run = startLive({ PORT: String(port), FAKE_PORT: String(fakePort) });
    await ready(run);
  }, 180_000);

  afterAll(async () => {
    await stopLive(run);
    for (const server of held) await new Promise((r) => server.close(r));
  });

  it('gives each wrangler an inspector port of its own, neither of the taken ones', () => {
    const line = /inspector (\d+)\).*inspector (\d+)\)/.exec(run!.output());
    expect(line, run!.output()).not.toBeNull();
    const [service, fake] = [Number(line![1]), Number(line![2])];
    expect(service).not.toBe(fake);
    for (const p of [service, fake]) expect([9229, 9230]).not.toContain(p);
  });

  it('says it is ready once both wranglers are ready on their own ports', () => {
    const output = stripVTControlCharacters(run!.output());
    const line = `[start:live] ready: the live Worker at ${base}/demo, the fake 3DS Server provider at http://localhost:${fakePort}`;
    expect(output, output).toContain(line);
    for (const url of [base, `http://localhost:${fakePort}`]) {
      const wrangler = output.indexOf(`Ready on ${url}`);
      expect(wrangler, output).toBeGreaterThanOrEqual(0);
      expect(wrangler, output).toBeLessThan(output.indexOf(line));
    }
  });

  it('serves the live Worker with the demo checkout, pointed at the fake', async () => {
    const response = await fetch(`${base}/demo/config`);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const config = JSON.parse(text) as Record<string, any>;
    expect(config.environment).toBe('live');
    expect(config.liveCards.length).toBeGreaterThan(0);
    expect(await authenticate(base, '2000')).toMatchObject({ outcome: 'authenticated', status: 'Y' });
    expect(await authenticate(base, '2010')).toMatchObject({ outcome: 'authenticationFailed', status: 'N' });
  });
});

describe('start:live with a provider of one’s choosing (THREEDS_SERVER_URL)', () => {
  let run: Run | undefined;
  let provider: LocalWorker;
  let base: string;
  let fakePort: number;

  beforeAll(async () => {
    provider = await startFakeProvider({ root: process.cwd(), quiet: true });
    const port = await freePort();
    fakePort = await freePort();
    base = `http://localhost:${port}`;
    run = startLive({
      PORT: String(port),
      FAKE_PORT: String(fakePort),
      THREEDS_SERVER_URL: provider.url.origin,
      THREEDS_SERVER_API_KEY: 'fake-3ds-api-key',
    });
    await ready(run);
  }, 180_000);

  afterAll(async () => {
    await stopLive(run);
    await provider?.stop();
  });

  it('starts no fake of its own, and authenticates at that provider', async () => {
    expect(run!.output()).toContain(`the 3DS Server provider: ${provider.url.origin} (no fake started)`);
    expect(run!.output()).toContain(
      `[start:live] ready: the live Worker at ${base}/demo, in front of ${provider.url.origin}`,
    );
    expect(
      await fetch(`http://localhost:${fakePort}/`).then(
        () => 'answered',
        () => 'nothing there',
      ),
    ).toBe('nothing there');
    expect(await authenticate(base, '2000')).toMatchObject({ outcome: 'authenticated', status: 'Y' });
    // The key never went on a command line: no process of this machine shows it, while the
    // live Worker's wrangler shows its own.
    const lines = commandLines();
    expect(lines.some((line) => line.includes('wrangler') && line.includes('--env live'))).toBe(true);
    expect(lines.filter((line) => line.includes('fake-3ds-api-key'))).toEqual([]);
  });
});
