// Bundles the Worker exactly as `wrangler deploy` would (without uploading) and prints the size
// of every module and the gzip total, against the Workers 3 MB compressed limit (free plan).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LIMIT_GZIP_BYTES = 3 * 1024 * 1024;
const out = 'dist';
rmSync(out, { recursive: true, force: true });
execFileSync('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', out], { stdio: 'inherit' });

let raw = 0;
let gzip = 0;
for (const name of readdirSync(out)) {
  const file = join(out, name);
  if (!statSync(file).isFile() || name.endsWith('.map') || name === 'README.md') continue;
  const bytes = readFileSync(file);
  const gz = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gzip += gz;
  console.log(`bundle  ${name.padEnd(48)} ${String(bytes.length).padStart(9)} B  gzip ${String(gz).padStart(8)} B`);
}
console.log(
  `bundle  total${' '.repeat(44)} ${String(raw).padStart(9)} B  gzip ${String(gzip).padStart(8)} B ` +
    `(${((gzip / LIMIT_GZIP_BYTES) * 100).toFixed(1)}% of the 3 MiB limit)`,
);
if (gzip > LIMIT_GZIP_BYTES) {
  console.error('bundle  over the Workers compressed size limit');
  process.exit(1);
}
