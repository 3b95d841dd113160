import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/**
 * The Chromium the browser tests drive, nothing downloaded at run time:
 * - `CHROMIUM_PATH`, when set;
 * - else Debian's `/usr/bin/chromium` when installed (`apt-get install chromium`);
 * - else the Chromium inside the `@sparticuz/chromium` npm package (a devDependency: the binary
 *   ships in the package, Brotli-compressed, and is unpacked once into a private folder of the
 *   temporary directory named after its version, so no other copy is ever picked up).
 * `CHROMIUM_FROM=npm` forces the npm one (CI runs the browser tests with both).
 */

const DEBIAN = '/usr/bin/chromium';

/** Flags for a headless run in a container; sparticuz's own list is not used (it disables web security). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export async function chromiumExecutable(): Promise<{ path: string; from: 'CHROMIUM_PATH' | 'debian' | 'npm' }> {
  if (process.env.CHROMIUM_FROM !== 'npm') {
    const configured = process.env.CHROMIUM_PATH;
    if (configured) {
      if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured} does not exist`);
      return { path: configured, from: 'CHROMIUM_PATH' };
    }
    if (existsSync(DEBIAN)) return { path: DEBIAN, from: 'debian' };
  }
  const version = packageVersion('@sparticuz/chromium');
  const { default: packaged } = await import('@sparticuz/chromium');
  packaged.setGraphicsMode = false;
  // executablePath() unpacks into os.tmpdir()/chromium and reuses whatever is there: point it at
  // a folder of this version's and this process's own. The browser files run side by side, each
  // in its own process: in a shared folder, one would launch the binary while another was still
  // writing it (spawn ETXTBSY).
  const folder = join(tmpdir(), `card-edge-chromium-${version}-${process.pid}`);
  mkdirSync(folder, { recursive: true });
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = folder;
  try {
    return { path: await packaged.executablePath(), from: 'npm' };
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
}

/** A package's version, read from its package.json (this one does not export that file). */
function packageVersion(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  while (dir !== dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  throw new Error(`cannot find the version of ${name}`);
}

/**
 * Launches the Chromium above, headless. `options.env` replaces the environment it starts with
 * (e.g. `LANG=C`: a browser without a locale, whose navigator.language is `en-US@posix`).
 */
export async function launchChromium(
  extraArgs: string[] = [],
  options: { env?: Record<string, string> } = {},
): Promise<Browser> {
  const { path } = await chromiumExecutable();
  return chromium.launch({
    executablePath: path,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    ...(options.env ? { env: options.env } : {}),
  });
}
