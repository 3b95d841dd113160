// Bundles the Worker of each environment exactly as `wrangler deploy` would (without uploading)
// and prints the size of every module and the gzip total, against the Workers 3 MB compressed
// limit (free plan). Fails when a bundle is over it, when the live bundle contains code that must
// never be deployed live (the demo checkout, which only the local live build of `npm run
// start:live` has), or when any contains the fake 3DS Server provider, which is never deployed.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LIMIT_GZIP_BYTES = 3 * 1024 * 1024;

/**
 * Strings only code kept out of a bundle contains, and the bundles it belongs in: each must be
 * found where it belongs (else the marker is stale and proves nothing) and nowhere else. The fake
 * provider belongs in its own bundle only (`npm run build:fake`, dist/fake-3ds-server).
 */
const MARKERS = [
  { what: 'the demo checkout', marker: '/demo/merchant/authenticate', in: ['test', 'live+demo'] },
  { what: 'the fake 3DS Server provider', marker: 'fake-3ds-server', in: ['fake'] },
  // The test issuer's app-channel keys (data/test-pki.json): public on purpose, and `test` only.
  { what: 'the test PKI', marker: 'TEST ONLY: test PKI', in: ['test'] },
];

/**
 * The bundles: the two deployments, and the live Worker as `npm run start:live` builds it (with
 * the demo checkout, `--define LIVE_DEMO:true`), which proves that the define is what keeps the
 * demo out of the deployed live bundle.
 */
const ENVIRONMENTS = [
  { name: 'test', args: ['--env', ''] },
  { name: 'live', args: ['--env', 'live'] },
  { name: 'live+demo', args: ['--env', 'live', '--define', 'LIVE_DEMO:true'] },
];

let failed = false;
const totals = [];
for (const { name, args } of ENVIRONMENTS) {
  const out = join('dist', name.replace('+', '-'));
  rmSync(out, { recursive: true, force: true });
  execFileSync('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', out, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let raw = 0;
  let gzip = 0;
  let code = '';
  for (const file of readdirSync(out)) {
    const path = join(out, file);
    if (!statSync(path).isFile() || file.endsWith('.map') || file === 'README.md') continue;
    const bytes = readFileSync(path);
    const gz = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gzip += gz;
    if (file.endsWith('.js')) code += bytes.toString('utf8');
    console.log(
      `bundle  ${name.padEnd(9)} ${file.padEnd(48)} ${String(bytes.length).padStart(9)} B  gzip ${String(gz).padStart(8)} B`,
    );
  }
  console.log(
    `bundle  ${name.padEnd(9)} total${' '.repeat(43)} ${String(raw).padStart(9)} B  gzip ${String(gzip).padStart(8)} B ` +
      `(${((gzip / LIMIT_GZIP_BYTES) * 100).toFixed(1)}% of the 3 MiB limit)`,
  );
  totals.push({ name, raw, gzip });
  if (gzip > LIMIT_GZIP_BYTES) {
    console.error(`bundle  ${name}: over the Workers compressed size limit`);
    failed = true;
  }
  for (const { what, marker, in: belongs } of MARKERS)
    failed = !checkMarker(name, code, what, marker, belongs) || failed;
}

execFileSync('npm', ['run', '-s', 'build:fake'], { stdio: ['ignore', 'ignore', 'inherit'] });
const fakeCode = readFileSync(join('dist', 'fake-3ds-server', 'index.js'), 'utf8');
for (const { what, marker, in: belongs } of MARKERS)
  failed = !checkMarker('fake', fakeCode, what, marker, belongs) || failed;

/** Prints whether a bundle holds the marker; false when that is not where it belongs. */
function checkMarker(name, code, what, marker, belongs) {
  const found = code.includes(marker);
  console.log(`bundle  ${name.padEnd(9)} ${what}: ${found ? 'present' : 'absent'}`);
  return found === belongs.includes(name);
}
const [test, live] = totals;
console.log(
  `bundle  the live bundle is ${test.raw - live.raw} B (${test.gzip - live.gzip} B gzip) smaller than the test bundle`,
);
if (failed) process.exit(1);
