import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { launchChromium } from './chromium';

/**
 * The API reference at /docs and the document at /openapi.json, served as static assets by the
 * real asset router (Miniflare, as wrangler dev and Cloudflare serve them), opened in Chromium.
 * The page must render from this origin alone: any request to another origin fails the test,
 * and so does any Content-Security-Policy violation. The page is loaded under a host name that
 * is not localhost, since Swagger UI skips its outside validator badge on localhost only.
 */

const HOST = 'docs.card-edge.test';
let worker: LocalWorker;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  worker = await startLocalWorker({ root: process.cwd(), quiet: true });
  origin = `http://${HOST}:${worker.url.port}`;
  browser = await launchChromium([`--host-resolver-rules=MAP ${HOST} 127.0.0.1`]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

/** A context that records every request leaving the origin (blocked ones too) and CSP violations. */
async function watched(): Promise<{ context: BrowserContext; outside: string[]; violations: () => Promise<string[]> }> {
  const context = await browser.newContext();
  const outside: string[] = [];
  context.on('request', (r) => {
    if (new URL(r.url()).origin !== origin) outside.push(r.url());
  });
  await context.route(
    (url) => url.origin !== origin,
    (route) => {
      outside.push(route.request().url());
      return route.abort('blockedbyclient');
    },
  );
  await context.addInitScript(() => {
    const w = window as unknown as { cspViolations: string[] };
    w.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      w.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  let page: Awaited<ReturnType<BrowserContext['newPage']>> | undefined;
  return {
    context,
    outside,
    violations: async () =>
      (await (page ??= context.pages()[0])?.evaluate(
        () => (window as unknown as { cspViolations: string[] }).cspViolations,
      )) ?? [],
  };
}

describe('the API reference', () => {
  it('serves the OpenAPI document at /openapi.json', async () => {
    const response = await fetch(new URL('/openapi.json', worker.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    const served = (await response.json()) as Record<string, unknown>;
    expect(served).toEqual(JSON.parse(readFileSync('public/openapi.json', 'utf8')));
    expect(served.openapi).toBe('3.1.0');
  });

  it("renders /docs under default-src 'self' with no request leaving the page", async () => {
    const { context, outside, violations } = await watched();
    const page = await context.newPage();
    const response = await page.goto(`${origin}/docs`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toMatch(/^default-src 'self';/);
    await page.getByText('Look up a card number or token').waitFor();
    // Open an operation and the schemas, as a reader would, and let every image and font load.
    await page.getByText('Look up a card number or token').click();
    await page.getByText('PanLookupRequest').first().waitFor();
    await page.locator('.models-control').click();
    await page.waitForLoadState('networkidle');
    expect(outside).toEqual([]);
    expect(await violations()).toEqual([]);
    expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(15);
    await context.close();
  });

  it("sends an operation's requests to the origin serving the page, whatever its host and port (the relative server)", async () => {
    const { context } = await watched();
    const page = await context.newPage();
    await page.goto(`${origin}/docs`);
    await page.getByText('Look up a card number or token').waitFor();
    // The request Swagger UI's "Try it out" would send, built by Swagger UI itself (its
    // request builder, the selected server, the document's URL as the base), then sent.
    const built = await page.evaluate(async () => {
      type Ui = {
        specSelectors: { specJson(): { toJS(): unknown }; url(): string };
        oas3Selectors: { selectedServer(): string };
        fn: { buildRequest(o: Record<string, unknown>): { url: string; method: string } };
      };
      const ui = (window as unknown as { ui: Ui }).ui;
      const request = ui.fn.buildRequest({
        spec: ui.specSelectors.specJson().toJS(),
        operationId: 'health',
        server: ui.oas3Selectors.selectedServer(),
        contextUrl: new URL(ui.specSelectors.url(), location.href).href,
      });
      const answer = await fetch(request.url, { method: request.method });
      return {
        server: ui.oas3Selectors.selectedServer(),
        url: request.url,
        status: answer.status,
        body: await answer.json(),
      };
    });
    expect(built).toMatchObject({ server: '/', url: `${origin}/health`, status: 200, body: { status: 'ok' } });
    await context.close();
  });

  it('answers / with the landing page (the Worker runs first there), and every link on it answers', async () => {
    const { context, outside, violations } = await watched();
    const page = await context.newPage();
    const response = await page.goto(`${origin}/`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toMatch(/^default-src 'none';/);
    expect(await page.textContent('#environment')).toBe('test');
    const links = await page.$$eval('a', (as) => as.map((a) => a.href));
    expect(links.map((l) => new URL(l).pathname)).toEqual(['/docs', '/openapi.json', '/demo', '/health']);
    for (const link of links) expect((await fetch(new URL(new URL(link).pathname, worker.url))).status, link).toBe(200);
    expect(outside).toEqual([]);
    expect(await violations()).toEqual([]);
    await context.close();
  });

  it('keeps the API answering its own paths (no asset shadows them)', async () => {
    const response = await fetch(new URL('/api/cardBin/panLookup', worker.url), { method: 'POST' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ errorName: 'headerIsMissing' });
  });
});
