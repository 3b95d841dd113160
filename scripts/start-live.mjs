// `npm run start:live`: the service in `live` on this machine, in front of the fake 3DS Server
// provider (docs/fake-3ds-server.md), so that a live checkout runs end to end offline:
//
//   the fake provider    wrangler dev -c src/fake-3ds-server/wrangler.toml   http://localhost:8788
//   the service (live)   wrangler dev, ENVIRONMENT=live, THREEDS_SERVER_URL   http://localhost:8787
//                        pointing at the fake, the demo checkout at /demo
//
// Each runs in a process group of its own, and Ctrl-C (or either one ending) stops both groups
// whole: through npx, a workerd that wrangler started would otherwise outlive it.
import { spawn } from 'node:child_process';

const SERVICE_PORT = process.env.PORT ?? '8787';
const FAKE_PORT = process.env.FAKE_PORT ?? '8788';
const FAKE_URL = `http://localhost:${FAKE_PORT}`;

const children = [
  [
    'fake 3DS Server',
    ['wrangler', 'dev', '-c', 'src/fake-3ds-server/wrangler.toml', '--port', FAKE_PORT, '--inspector-port', '9230'],
  ],
  [
    'service (live)',
    [
      'wrangler',
      'dev',
      '--port',
      SERVICE_PORT,
      '--var',
      'ENVIRONMENT:live',
      '--var',
      `THREEDS_SERVER_URL:${FAKE_URL}`,
      '--var',
      'DEMO_IN_LIVE:true',
    ],
  ],
].map(([name, args]) => {
  const child = spawn('npx', args, { stdio: 'inherit', detached: true });
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
  setTimeout(() => process.exit(code), 500);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop(0));

console.log(
  `[start:live] the service in live: http://localhost:${SERVICE_PORT} (demo checkout at /demo); ` +
    `the fake 3DS Server provider: ${FAKE_URL}`,
);
