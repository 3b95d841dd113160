/**
 * Builds public/: the OpenAPI 3.1 document of the Worker (scripts/openapi/document.ts) as
 * public/openapi.json, and the reference page's viewer, Swagger UI, copied from the
 * swagger-ui-dist package into public/docs/ (the page's own index.html and init.js are committed
 * there). Workers Static Assets serve both; neither is in the Worker's bundle.
 *
 * The stylesheet's inline `data:` images are written out as files, so that the page holds under
 * a plain `Content-Security-Policy: default-src 'self'` (public/_headers).
 *
 *   npm run build:openapi
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from './openapi/document';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PUBLIC = join(ROOT, 'public');
const DOCS = join(PUBLIC, 'docs');

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/svg+xml': 'svg',
  'image/gif': 'gif',
};

/** Writes each `url("data:…")` of a stylesheet to a file under `dir` and points the rule at it. */
export function externaliseDataUrls(css: string, dir: string, urlBase: string): { css: string; files: number } {
  mkdirSync(dir, { recursive: true });
  let files = 0;
  const out = css.replace(
    /url\(\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^)'"]*))\s*\)/g,
    (whole, dq?: string, sq?: string, bare?: string) => {
      const raw = (dq ?? sq ?? bare ?? '').replace(/\\(.)/g, '$1');
      const m = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(raw);
      if (!m) return whole;
      const [, type, params, data] = m;
      const bytes = params!.includes(';base64')
        ? Buffer.from(data!, 'base64')
        : Buffer.from(decodeURIComponent(data!), 'utf8');
      const name = `${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.${EXTENSIONS[type!] ?? 'bin'}`;
      writeFileSync(join(dir, name), bytes);
      files++;
      return `url(${urlBase}${name})`;
    },
  );
  return { css: out, files };
}

function main(): void {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const document = buildOpenApiDocument(version);
  mkdirSync(PUBLIC, { recursive: true });
  writeFileSync(join(PUBLIC, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);

  const viewer = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  copyFileSync(join(viewer, 'swagger-ui-bundle.js'), join(DOCS, 'swagger-ui-bundle.js'));
  rmSync(join(DOCS, 'img'), { recursive: true, force: true });
  const css = readFileSync(join(viewer, 'swagger-ui.css'), 'utf8').replace(/\/\*# sourceMappingURL=.*?\*\/\s*$/, '');
  const rewritten = externaliseDataUrls(css, join(DOCS, 'img'), '/docs/img/');
  writeFileSync(join(DOCS, 'swagger-ui.css'), rewritten.css);
  console.error(
    `[build:openapi] public/openapi.json (${Object.keys(document.paths as object).length} paths); ` +
      `public/docs: Swagger UI ${(JSON.parse(readFileSync(join(viewer, 'package.json'), 'utf8')) as { version: string }).version}, ${rewritten.files} stylesheet images as files`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (e) {
    console.error(`[build:openapi] error: ${(e as Error).message}`);
    process.exit(1);
  }
}
