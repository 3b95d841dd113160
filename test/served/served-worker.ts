import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalWorker, type LocalWorker } from '../../scripts/local-worker';

/**
 * The Worker served on a real port, the two ways a developer meets it: `wrangler dev` (what
 * `npm start` runs, with wrangler's local proxy in front of workerd) and Miniflare alone on the
 * bundle (what the browser tests and the bench use).
 */

export interface Served {
  name: string;
  url: URL;
  stop: () => Promise<void>;
}

/** A port of 127.0.0.1 that no program listens on (a moment ago). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** `wrangler dev` as `npm start` runs it, with the local secrets and its own local storage. */
export async function startWranglerDev(root: string): Promise<Served> {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), 'card-edge-dev-'));
  // wrangler itself (not npx, which would not pass a signal on), in a process group of its own,
  // so that stopping it stops the workerd it starts as well.
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'),
      'dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--inspector-port',
      String(await freePort()),
      '--env-file',
      '.dev.vars.example',
      '--persist-to',
      state,
      '--show-interactive-dev-session=false',
      '--log-level',
      'error',
    ],
    {
      cwd: root,
      detached: true,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = new URL(`http://127.0.0.1:${port}/`);
  // Ready once the Worker itself answers: its health route, which reads no storage.
  const health = new URL('/health', url);
  const deadline = Date.now() + 90_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`wrangler dev did not start:\n${output}`);
      const ready = await fetch(health).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } catch (e) {
    await stopGroup(child);
    throw e;
  }
  return {
    name: 'wrangler dev',
    url,
    stop: async () => {
      await stopGroup(child);
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** Stops a process started `detached` and everything in its group; SIGKILL after 5 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is gone already
    }
  };
  signal('SIGTERM');
  const late = setTimeout(() => signal('SIGKILL'), 5_000);
  await exited;
  clearTimeout(late);
  // workerd may outlive wrangler for a moment: make sure nothing of the group is left.
  signal('SIGKILL');
}

/** Miniflare alone on the bundle (scripts/local-worker.ts). */
export async function startMiniflare(root: string): Promise<Served> {
  const worker: LocalWorker = await startLocalWorker({ root, quiet: true });
  return { name: 'Miniflare', url: worker.url, stop: worker.stop };
}

export interface Answer {
  status: number | string;
  body: string;
  /** Whether the request went over a connection an earlier request had used. */
  reusedSocket: boolean;
}

/** HTTP/1.1 requests over one keep-alive connection at a time, as a merchant's client sends them. */
export class Client {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(private readonly base: URL) {}

  send(
    method: string,
    path: string,
    headers: Record<string, string | number> = {},
    body?: Buffer | string,
    options: { chunked?: boolean } = {},
  ): Promise<Answer> {
    return new Promise((resolve) => {
      const request = http.request(
        { host: this.base.hostname, port: this.base.port, method, path, headers, agent: this.agent },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: text, reusedSocket: request.reusedSocket }),
          );
        },
      );
      request.on('error', (e: NodeJS.ErrnoException) =>
        resolve({ status: `error ${e.code ?? e.message}`, body: '', reusedSocket: request.reusedSocket }),
      );
      request.setTimeout(20_000, () => request.destroy(new Error('timed out')));
      if (body !== undefined && options.chunked) {
        // Several writes without Content-Length: Node sends them chunked.
        const step = 16 * 1024;
        for (let at = 0; at < body.length; at += step) request.write(body.slice(at, at + step));
      } else if (body !== undefined) {
        request.write(body);
      }
      request.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Polls `probe` every `everyMs` until it gives a value, for at most `seconds`; then fails naming
 * `what` and what `context` says of the state (what a receiver got, a process's output).
 */
export async function pollUntil<T>(
  what: string,
  seconds: number,
  probe: () => Promise<T | undefined> | T | undefined,
  context: () => string,
  everyMs = 50,
): Promise<T> {
  const giveUp = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > giveUp) throw new Error(`no ${what} after ${seconds} s; ${context()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** An `authenticate` body for a served Worker: the card and the cardholder name (which picks the scenario in `test`). */
export function authenticateBody(transactionReference: string, cardNumber: string, cardHolderName: string) {
  return {
    transactionReference,
    merchant: { entity: 'default' },
    instruction: {
      value: { amount: 1999, currency: 'GBP' },
      paymentInstrument: { type: 'card/front', cardNumber, cardExpiryDate: { month: 12, year: 2035 }, cardHolderName },
    },
    deviceData: { acceptHeader: 'text/html', userAgentHeader: 'Mozilla/5.0' },
    challenge: { returnUrl: 'https://shop.example/3ds/return', windowSize: '390x400' },
  };
}
