/**
 * The public BIN lists data:refresh knows by name: where each lives, its format, its licence and
 * the attribution its licence asks for, and the download that fetches one.
 */

export interface NamedSource {
  name: string;
  /** The work as its author titles it. */
  title: string;
  author: string;
  homepage: string;
  url: string;
  /** The file name kept in data/. */
  fileName: string;
  format: string;
  /** SPDX licence id. */
  licence: string;
  licenceUrl: string;
  /** What the source is, for the NOTICE and the README. */
  about: string;
}

export const NAMED_SOURCES: readonly NamedSource[] = [
  {
    name: 'venelinkochev',
    title: 'BIN List Data',
    author: 'Venelin Kochev (BinLookup.io)',
    homepage: 'https://github.com/venelinkochev/bin-list-data',
    url: 'https://raw.githubusercontent.com/venelinkochev/bin-list-data/master/bin-list-data.csv',
    fileName: 'bin-list-data.csv',
    format: 'venelinkochev',
    licence: 'CC-BY-4.0',
    licenceUrl: 'https://creativecommons.org/licenses/by/4.0/',
    about: 'about 375,000 six-digit BINs with brand, type, level, issuer and country, updated 2025',
  },
  {
    name: 'iannuttall',
    title: 'binlist-data',
    author: 'Ian Nuttall',
    homepage: 'https://github.com/iannuttall/binlist-data',
    url: 'https://raw.githubusercontent.com/iannuttall/binlist-data/master/binlist-data.csv',
    fileName: 'binlist-data.csv',
    format: 'iannuttall',
    licence: 'CC-BY-4.0',
    licenceUrl: 'https://creativecommons.org/licenses/by/4.0/',
    about: 'about 343,000 BINs with brand, type, level, issuer and country, archived 2020',
  },
  {
    // Pinned: this is the last commit whose README grants the Apache-2.0 licence; later commits
    // dropped the statement (data/binlist/NOTICE).
    name: 'binlist',
    title: 'binlist/data ranges.csv',
    author: 'binlist.net',
    homepage: 'https://github.com/binlist/data',
    url: 'https://github.com/binlist/data/raw/e86eb0f/ranges.csv',
    fileName: 'ranges.csv',
    format: 'binlist',
    licence: 'Apache-2.0',
    licenceUrl: 'https://www.apache.org/licenses/LICENSE-2.0',
    about: 'about 5,800 BIN ranges, mostly Denmark and the United States, 2016 (the embedded default)',
  },
];

export function namedSource(name: string): NamedSource | undefined {
  return NAMED_SOURCES.find((s) => s.name === name);
}

/** A download that could not happen; `offline` when the host could not be reached at all. */
export class DownloadError extends Error {
  constructor(
    message: string,
    readonly offline: boolean,
  ) {
    super(message);
  }
}

/** Error codes of a host that cannot be reached: no network, no DNS, nothing listening. */
const UNREACHABLE = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNREFUSED',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export interface DownloadOptions {
  /** Called as bytes arrive: received so far, and the total when the server declared it. */
  onProgress?: (received: number, total: number | undefined) => void;
  /** Gives up when no byte arrived for this long (default 30 s). */
  idleTimeoutMs?: number;
}

/**
 * Downloads a URL into memory, reporting progress. Throws DownloadError with `offline` set when
 * the host cannot be reached, so the caller can say what to do instead.
 */
export async function download(url: string, options: DownloadOptions = {}): Promise<Uint8Array> {
  const idle = new AbortController();
  const idleMs = options.idleTimeoutMs ?? 30_000;
  let timer = setTimeout(() => idle.abort(), idleMs);
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), idleMs);
  };
  try {
    let response: Response;
    try {
      response = await fetch(url, { signal: idle.signal, redirect: 'follow' });
    } catch (e) {
      const code = errorCode(e);
      const offline = code !== undefined && UNREACHABLE.has(code);
      const host = new URL(url).host;
      throw new DownloadError(
        offline
          ? `${host} cannot be reached (${code}): this machine looks offline`
          : `GET ${url} failed: ${idle.signal.aborted ? `no answer for ${idleMs / 1000} s` : describe(e)}`,
        offline || idle.signal.aborted,
      );
    }
    if (!response.ok || response.body === null) {
      throw new DownloadError(`GET ${url} answered ${response.status} ${response.statusText}`, false);
    }
    const declared = Number(response.headers.get('Content-Length'));
    const total = Number.isSafeInteger(declared) && declared > 0 ? declared : undefined;
    const chunks: Uint8Array[] = [];
    let received = 0;
    options.onProgress?.(0, total);
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        touch();
        chunks.push(chunk);
        received += chunk.byteLength;
        options.onProgress?.(received, total);
      }
    } catch (e) {
      throw new DownloadError(
        `GET ${url} broke off after ${received} bytes: ${idle.signal.aborted ? `no data for ${idleMs / 1000} s` : describe(e)}`,
        false,
      );
    }
    if (total !== undefined && received !== total) {
      throw new DownloadError(`GET ${url} ended after ${received} of ${total} bytes`, false);
    }
    const bytes = new Uint8Array(received);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return bytes;
  } finally {
    clearTimeout(timer);
  }
}

function errorCode(e: unknown): string | undefined {
  for (let cause: unknown = e, depth = 0; cause !== undefined && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

function describe(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : '';
  return message + cause;
}

/**
 * A progress bar on a terminal (redrawn in place), or a line per quarter otherwise (CI logs).
 */
export function progressBar(label: string, write: (s: string) => void, tty: boolean): DownloadOptions['onProgress'] {
  let lastQuarter = -1;
  let lastDraw = 0;
  const mb = (n: number): string => (n / 1e6).toFixed(1);
  return (received, total) => {
    const share = total ? received / total : undefined;
    if (tty) {
      const now = Date.now();
      if (now - lastDraw < 100 && received !== total) return;
      lastDraw = now;
      const width = 30;
      const filled = share === undefined ? 0 : Math.round(share * width);
      const bar = share === undefined ? '' : `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] `;
      const pct = share === undefined ? '' : `${Math.floor(share * 100)}% `;
      write(`\r${label} ${bar}${pct}${mb(received)}${total ? ` / ${mb(total)}` : ''} MB`);
      if (received === total) write('\n');
      return;
    }
    const quarter = share === undefined ? Math.floor(received / 5e6) : Math.floor(share * 4);
    if (quarter === lastQuarter) return;
    lastQuarter = quarter;
    write(`${label} ${share === undefined ? '' : `${quarter * 25}% `}${mb(received)} MB\n`);
  };
}

/**
 * The NOTICE written beside a downloaded source: the work, its author, the licence, where and
 * when it was taken, and the changes this project makes (CC BY 4.0 §3(a)).
 */
export function noticeFor(source: NamedSource, file: string, url: string, retrieved: string, sha256: string): string {
  return `${file} is "${source.title}" by ${source.author}, ${source.homepage},
licensed under ${source.licence} (${source.licenceUrl}).
It is ${source.about}.

Downloaded from ${url}
on ${retrieved}, SHA-256 ${sha256}, by \`npm run data:refresh -- --source ${source.name}\`.

Changes made by this project: the file itself is kept as downloaded. The build
(scripts/build-data.ts) reads it, normalises its brand, funding, product and country labels to
the API's vocabulary, leaves out rows it cannot read (listed in the build summary), merges it
with the other sources of data/bin-source.json by their precedence (data/overrides.csv and
earlier layers win where they say otherwise) and compiles the result into data/bin-index.bin,
which the Worker serves.

The licensor offers the work as-is and makes no representations or warranties of any kind
concerning it; see the licence.
`;
}
