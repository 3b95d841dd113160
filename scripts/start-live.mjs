// `npm run start:live`: the live Worker on this machine, as `wrangler deploy --env live` ships it
// (src/live.ts, wrangler.toml's [env.live]) with the demo checkout built in, in front of a 3DS
// Server provider (docs/configuration.md "Local development"):
//
//   the fake provider    wrangler dev -c src/fake-3ds-server/wrangler.toml   http://localhost:8788
//   the service (live)   wrangler dev --env live --define LIVE_DEMO:true      http://localhost:8787
//                        THREEDS_SERVER_URL pointing at the provider, the demo checkout at /demo
//
// The environment chooses (docs/configuration.md):
//   PORT                 the service's port (default 8787; a free one when 8787 is taken)
//   FAKE_PORT            the fake provider's port (default 8788; a free one when 8788 is taken)
//   INSPECTOR_PORT       the service's DevTools inspector port (default: a free port)
//   THREEDS_SERVER_URL   another provider (a sandbox, another fake): no fake is started then
//   THREEDS_SERVER_API_KEY  that provider's key (else THREEDS_SERVER_API_KEY in .dev.vars.live)
//   PUBLIC_BASE_URL      the service's public base (e.g. an https tunnel), else the request's origin
//
// Each wrangler runs in a process group of its own, and Ctrl-C (or either one ending) stops both
// groups whole, so that no workerd outlives them.
//
// Ready: once every wrangler it started has said `Ready on` its own port, start:live prints one
// line, `[start:live] ready: …`. Wrangler says so only when its workerd holds that port and the
// Worker behind it has loaded, so what answers there from then on is that Worker; something else
// answering at the port earlier proves nothing (another program may have taken the port between
// the choice of it and wrangler's bind: then that wrangler fails, and start:live stops).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv, stripVTControlCharacters } from 'node:util';

const WRANGLER = join('node_modules', 'wrangler', 'bin', 'wrangler.js');

/** Fails start-up with one line that names the setting to change. */
function refuse(message) {
  console.error(`[start:live] ${message}`);
  process.exit(1);
}

/** Listens on the port (0: any) of the loopback address; resolves the server, or undefined when taken. */
function hold(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** Whether the port is free on both loopback names wrangler may use (127.0.0.1 and localhost's ::1). */
async function isFree(port) {
  const server = await hold(port);
  if (!server) return false;
  const v6 = await new Promise((resolve) => {
    const s = createServer();
    s.once('error', (e) => resolve(e.code === 'EADDRNOTAVAIL' || e.code === 'EAFNOSUPPORT' ? 'none' : undefined));
    s.listen(port, '::1', () => resolve(s));
  });
  await new Promise((r) => server.close(r));
  if (v6 && v6 !== 'none') await new Promise((r) => v6.close(r));
  return v6 !== undefined;
}

/** A port of the variable's value (which must be free), else its default when free, else any free port. */
async function choosePort(name, fallback, taken) {
  const given = process.env[name];
  if (given !== undefined && given !== '') {
    const port = Number(given);
    if (!Number.isInteger(port) || port < 1 || port > 65535) refuse(`${name}=${given} is not a port (1 to 65535)`);
    if (taken.has(port)) refuse(`${name}=${port} is already used by another of start:live's ports; choose another`);
    if (!(await isFree(port))) refuse(`${name}=${port} is in use by another program: set ${name} to a free port`);
    taken.add(port);
    return port;
  }
  if (fallback !== undefined && !taken.has(fallback) && (await isFree(fallback))) {
    taken.add(fallback);
    return fallback;
  }
  for (;;) {
    const server = await hold(0);
    const port = server.address().port;
    await new Promise((r) => server.close(r));
    if (!taken.has(port) && (await isFree(port))) {
      taken.add(port);
      if (fallback !== undefined) console.log(`[start:live] port ${fallback} is in use: ${name} is ${port}`);
      return port;
    }
  }
}

const taken = new Set();
const provider = process.env.THREEDS_SERVER_URL?.trim() || undefined;
const servicePort = await choosePort('PORT', 8787, taken);
const fakePort = provider ? undefined : await choosePort('FAKE_PORT', 8788, taken);
// wrangler always opens an inspector (9229, or the next free port it finds); two wranglers started
// together may find the same one. Each gets a port of its own, chosen here.
const inspectorPort = await choosePort('INSPECTOR_PORT', undefined, taken);
const fakeInspectorPort = provider ? undefined : await choosePort('FAKE_INSPECTOR_PORT', undefined, taken);

if (provider) {
  try {
    const url = new URL(provider);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
  } catch {
    refuse(`THREEDS_SERVER_URL=${provider} is not an absolute http(s) URL`);
  }
}
const publicBase = process.env.PUBLIC_BASE_URL?.trim() || undefined;

// The service's secrets: the local ones (.dev.vars, made by `npm start`'s first step, else the
// example), which hold the fake's key. With a provider of one's choosing, then .dev.vars.live
// (git-ignored: that provider's key) and THREEDS_SERVER_API_KEY from the environment, written to a
// private file so that it is never on a command line; never with the fake, which takes its own key.
const envFiles = [existsSync('.dev.vars') ? '.dev.vars' : '.dev.vars.example'];
if (provider && existsSync('.dev.vars.live')) envFiles.push('.dev.vars.live');
let keyDir;
const keyFromEnv = process.env.THREEDS_SERVER_API_KEY;
if (provider && keyFromEnv) {
  keyDir = mkdtempSync(join(tmpdir(), 'card-edge-live-'));
  const file = join(keyDir, 'provider.env');
  writeFileSync(file, `THREEDS_SERVER_API_KEY=${JSON.stringify(keyFromEnv)}\n`, { mode: 0o600 });
  envFiles.push(file);
}
if (provider && !keyFromEnv) {
  const live = existsSync('.dev.vars.live') ? parseEnv(readFileSync('.dev.vars.live', 'utf8')) : {};
  if (!live.THREEDS_SERVER_API_KEY)
    refuse(
      `THREEDS_SERVER_URL=${provider} is set: give its API key as THREEDS_SERVER_API_KEY ` +
        `(in the environment, or in .dev.vars.live)`,
    );
}

const providerUrl = provider ?? `http://localhost:${fakePort}`;

/**
 * Resolves when the wrangler says `Ready on http://…:<port>` (miniflare's line, which wrangler
 * holds back until the Worker has loaded), of the port it was given; never when it does not.
 */
function whenReadyOn(child, port) {
  return new Promise((resolve) => {
    let pending = '';
    const read = (chunk) => {
      // Whole lines only (a chunk may end in the middle of one), without colour codes.
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop();
      for (const line of lines) {
        const said = /\bReady on https?:\/\/\S*:(\d+)\/?(?:\s|$)/.exec(stripVTControlCharacters(line));
        if (said && Number(said[1]) === port) {
          child.stdout.off('data', read);
          child.stderr.off('data', read);
          resolve();
        }
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
  });
}

const wranglers = [
  ...(provider
    ? []
    : [
        [
          'fake 3DS Server',
          [
            'dev',
            '-c',
            'src/fake-3ds-server/wrangler.toml',
            '--port',
            String(fakePort),
            '--inspector-port',
            String(fakeInspectorPort),
          ],
          fakePort,
        ],
      ]),
  [
    'service (live)',
    [
      'dev',
      '--env',
      'live',
      '--define',
      'LIVE_DEMO:true',
      '--port',
      String(servicePort),
      '--inspector-port',
      String(inspectorPort),
      '--var',
      `THREEDS_SERVER_URL:${providerUrl}`,
      ...(publicBase ? ['--var', `PUBLIC_BASE_URL:${publicBase}`] : []),
      ...envFiles.flatMap((file) => ['--env-file', file]),
    ],
    servicePort,
  ],
];
const children = wranglers.map(([name, args]) => {
  // Wrangler's output goes on to this terminal as it comes (in colour when that is one), read on
  // the way for its `Ready on` line. Not interactive: the two wranglers share no keyboard, and
  // Ctrl-C reaches start:live, which stops both.
  const child = spawn(process.execPath, [WRANGLER, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: process.stdout.isTTY && !('NO_COLOR' in process.env) ? { FORCE_COLOR: '1', ...process.env } : process.env,
  });
  child.stdout.pipe(process.stdout, { end: false });
  child.stderr.pipe(process.stderr, { end: false });
  child.on('exit', (code) => {
    console.log(`[start:live] ${name} ended (${code ?? 'signal'}); stopping`);
    stop(code ?? 1);
  });
  return child;
});

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  setTimeout(() => process.exit(code), 500);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop(0));
// With no one left to read what it prints (its terminal or pipe gone), start:live stops both.
for (const out of [process.stdout, process.stderr]) out.on('error', () => stop(1));

console.log(
  `[start:live] the live Worker: http://localhost:${servicePort} (demo checkout at /demo; inspector ${inspectorPort}); ` +
    (provider
      ? `the 3DS Server provider: ${provider} (no fake started)`
      : `the fake 3DS Server provider: ${providerUrl} (inspector ${fakeInspectorPort})`),
);

// Ready once every wrangler has said it is, on its own port: the one line to wait for.
void Promise.all(children.map((child, i) => whenReadyOn(child, wranglers[i][2]))).then(() => {
  if (stopping) return;
  console.log(
    `[start:live] ready: the live Worker at http://localhost:${servicePort}/demo, ` +
      (provider ? `in front of ${provider}` : `the fake 3DS Server provider at ${providerUrl}`),
  );
});
