import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import liveWorker from '../../src/live';
import { StorageHarness } from './faulty-env';
import { call, CARD_BIN_HEADERS, CLIENT_ADDRESS, ENTRYPOINT, luhnComplete, panLookup } from './helpers';
import { LIVE_VARS } from './live-helpers';

/**
 * The service routes (src/routes/service-pages.ts, docs/pipeline.md "Service routes"): the
 * landing page at `/` and the health check at `/health`, in the test Worker (src/index.ts) and
 * the live Worker (src/live.ts); and the pipeline's step 1 still answering every other method and
 * path as before.
 */

/** Calls the live Worker (src/live.ts) itself, with ENVIRONMENT=live. */
async function callLive(path: string, method = 'GET', vars: Partial<Env> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`https://edge.test${path}`, { method, headers: { 'CF-Connecting-IP': CLIENT_ADDRESS } });
  const response = await liveWorker.fetch(request, { ...env, ...LIVE_VARS, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** The Bin-Data-Version a card BIN answer names: what the landing page and /health must show. */
async function binDataVersion(): Promise<string> {
  const response = await panLookup({ merchant: { entity: 'default' }, cardNumber: luhnComplete('457173', 16) });
  expect(response.status).toBe(200);
  return response.headers.get('Bin-Data-Version')!;
}

function expectStrictPage(response: Response): void {
  expect(response.status).toBe(200);
  expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
  const csp = response.headers.get('Content-Security-Policy')!;
  expect(csp).toMatch(/^default-src 'none'; style-src 'nonce-[A-Za-z0-9+/]+=*'; /);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toMatch(/script-src|https?:/);
  expect(response.headers.get('Cache-Control')).toBe('no-store');
  expect(response.headers.get('X-Content-Type-Options')).toBe('nosniff');
  expect(response.headers.get('WP-CorrelationId')).toMatch(/^[0-9a-f-]{36}$/);
}

/** Every link and resource of a page: all on this origin, and no script at all. */
function expectNothingFromElsewhere(html: string): string[] {
  expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|url\(/i);
  const links = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
  for (const link of links) expect(link).toMatch(/^\/[^/]/);
  return links;
}

describe('GET /: the landing page', () => {
  it('says what the service is, links its reference and the demo, and shows the environment and BIN data version, without credentials', async () => {
    const version = await binDataVersion();
    const response = await call('/', { method: 'GET' });
    expectStrictPage(response);
    const html = await response.text();
    expect(html).toContain('<title>card-edge</title>');
    expect(html).toContain('Card BIN lookup, 3-D Secure');
    expect(expectNothingFromElsewhere(html)).toEqual(['/docs', '/openapi.json', '/demo', '/health']);
    expect(html).toContain('<dd id="environment">test</dd>');
    expect(html).toContain(`<code id="bin-data-version">${version}</code>`);
    // A fresh nonce on every answer.
    const again = await call('/', { method: 'GET' });
    expect(again.headers.get('Content-Security-Policy')).not.toBe(response.headers.get('Content-Security-Policy'));
  });

  it('in the live Worker: environment live, no demo link', async () => {
    const version = await binDataVersion();
    const response = await callLive('/');
    expectStrictPage(response);
    const html = await response.text();
    expect(expectNothingFromElsewhere(html)).toEqual(['/docs', '/openapi.json', '/health']);
    expect(html).toContain('<dd id="environment">live</dd>');
    expect(html).toContain(`<code id="bin-data-version">${version}</code>`);
  });

  it('in the test Worker with ENVIRONMENT=live: no demo link, as /demo answers 404 there', async () => {
    const harness = new StorageHarness(LIVE_VARS);
    const response = await call('/', { method: 'GET', via: (r) => harness.fetch(r) });
    expect(expectNothingFromElsewhere(await response.text())).not.toContain('/demo');
    expect((await call('/demo/config', { method: 'GET', via: (r) => harness.fetch(r) })).status).toBe(404);
  });
});

describe('GET /health', () => {
  it('answers 200 {status, environment, binDataVersion} without credentials, not cached', async () => {
    const version = await binDataVersion();
    const response = await call('/health', { method: 'GET' });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe('application/json');
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(response.headers.get('WP-CorrelationId')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toEqual({ status: 'ok', environment: 'test', binDataVersion: version });
  });

  it("is what the runtime's own entry point answers (exports.default), as the direct handler calls of the other tests do", async () => {
    const direct = await call('/health', { method: 'GET' });
    const viaRuntime = await call('/health', { method: 'GET', via: ENTRYPOINT });
    expect(viaRuntime.status).toBe(200);
    expect(await viaRuntime.json()).toEqual(await direct.json());
    const card = { merchant: { entity: 'default' }, cardNumber: luhnComplete('457173', 16) };
    const lookup = await call('/api/cardBin/panLookup', { body: card, headers: CARD_BIN_HEADERS, via: ENTRYPOINT });
    expect(lookup.status).toBe(200);
    expect(await lookup.json()).toEqual(await (await panLookup(card)).json());
  });

  it('calls no storage: it answers 200 while every storage call would hang', async () => {
    const harness = new StorageHarness({ STORAGE_TIMEOUT_MS: '1000' }).failOn({ nth: 0, of: 'any', when: 'hang' });
    const response = await call('/health', { method: 'GET', via: (r) => harness.fetch(r) });
    expect(response.status).toBe(200);
    expect(harness.calls).toEqual([]);
    expect(harness.armed).toBe(true);
    await harness.settled();
  });

  it('in the live Worker: environment live', async () => {
    const response = await callLive('/health');
    expect(response.status).toBe(200);
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(await response.json()).toEqual({
      status: 'ok',
      environment: 'live',
      binDataVersion: await binDataVersion(),
    });
  });

  it('answers 503 serviceUnavailable when the Worker is misconfigured (live without its provider), never the reason', async () => {
    const response = await callLive('/health', 'GET', { THREEDS_SERVER_URL: undefined });
    expect(response.status).toBe(503);
    expect(response.headers.get('Retry-After')).toBe('60');
    const body = await response.json<Record<string, unknown>>();
    expect(body.errorName).toBe('serviceUnavailable');
    expect(JSON.stringify(body)).not.toContain('THREEDS_SERVER_URL');
  });
});

describe('step 1 around the service routes', () => {
  it.each([
    ['POST', '/'],
    ['PUT', '/'],
    ['DELETE', '/health'],
    ['POST', '/health'],
  ])('%s %s answers 405 methodNotAllowed with Allow: GET', async (method, path) => {
    for (const send of [(p: string, m: string) => call(p, { method: m }), callLive]) {
      const response = await send(path, method);
      expect(response.status).toBe(405);
      expect(response.headers.get('Allow')).toBe('GET');
      expect(await response.json()).toMatchObject({ errorName: 'methodNotAllowed', allowedMethods: ['GET'] });
    }
  });

  it.each(['/index.html', '/healthz', '/health/deep', '/nothing-here'])(
    'GET %s still answers 404 resourceNotFound',
    async (path) => {
      for (const send of [(p: string) => call(p, { method: 'GET' }), (p: string) => callLive(p)]) {
        const response = await send(path);
        expect(response.status).toBe(404);
        expect(await response.json()).toMatchObject({ errorName: 'resourceNotFound' });
      }
    },
  );

  it('the APIs still need credentials', async () => {
    const { Authorization: _, ...noAuth } = CARD_BIN_HEADERS;
    const response = await call('/api/cardBin/panLookup', { body: {}, headers: noAuth });
    expect(response.status).toBe(401);
  });
});
