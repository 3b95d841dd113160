// Bundles the Worker of each environment exactly as `wrangler deploy` would (without uploading)
// and prints the size of every module and the gzip total, against the Workers 3 MB compressed
// limit (free plan). Fails when a bundle is over it, or when the live bundle contains code that
// must never be deployed live (the demo checkout).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LIMIT_GZIP_BYTES = 3 * 1024 * 1024;

/**
 * Strings only test-only code contains: the test bundle must hold each (else the marker is stale
 * and proves nothing), the live bundle none.
 */
const NOT_IN_LIVE = [['the demo checkout', '/demo/merchant/authenticate']];

const ENVIRONMENTS = [
  { name: 'test', args: ['--env', ''] },
  { name: 'live', args: ['--env', 'live'] },
];

let failed = false;
const totals = [];
for (const { name, args } of ENVIRONMENTS) {
  const out = join('dist', name);
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
      `bundle  ${name.padEnd(5)} ${file.padEnd(48)} ${String(bytes.length).padStart(9)} B  gzip ${String(gz).padStart(8)} B`,
    );
  }
  console.log(
    `bundle  ${name.padEnd(5)} total${' '.repeat(43)} ${String(raw).padStart(9)} B  gzip ${String(gzip).padStart(8)} B ` +
      `(${((gzip / LIMIT_GZIP_BYTES) * 100).toFixed(1)}% of the 3 MiB limit)`,
  );
  totals.push({ name, raw, gzip });
  if (gzip > LIMIT_GZIP_BYTES) {
    console.error(`bundle  ${name}: over the Workers compressed size limit`);
    failed = true;
  }
  for (const [what, marker] of NOT_IN_LIVE) {
    const found = code.includes(marker);
    console.log(`bundle  ${name.padEnd(5)} ${what}: ${found ? 'present' : 'absent'}`);
    if (found !== (name === 'test')) failed = true;
  }
}
const [test, live] = totals;
console.log(
  `bundle  the live bundle is ${test.raw - live.raw} B (${test.gzip - live.gzip} B gzip) smaller than the test bundle`,
);
if (failed) process.exit(1);
