import type { Route } from '../app/route-table';
import { toBase64 } from '../bytes';
import type { EndpointResult, RequestContext } from '../http/endpoint';
import { escapeHtml } from '../threeds/page-html';

/**
 * The service's own front door (docs/README.md "Routes"): `GET /`, a small page saying what the
 * service is and where its reference is, and `GET /health`, for a load balancer or an uptime
 * check. Neither needs credentials, and neither shows anything secret: the environment and the
 * BIN data version are in every card BIN answer already (`Bin-Data-Version`).
 *
 * `/health` calls no storage (no KV, no Durable Object, no 3DS Server provider): it says the
 * Worker is deployed, configured and answering, and never fails because KV is slow for a moment,
 * which would take a healthy Worker out of a pool for what one retry fixes (docs/pipeline.md
 * "Service routes"). A Worker whose settings are broken answers 503, as every API request would.
 */

export interface ServiceRouteOptions {
  /** Whether this request's Worker serves the demo checkout at /demo (the test Worker decides). */
  demoServed?: (rc: RequestContext) => boolean;
}

/** `GET /health`: 200 `{status: "ok", environment, binDataVersion}`, from memory only. */
function health(rc: RequestContext): Promise<EndpointResult> {
  return Promise.resolve({
    status: 200,
    body: {
      status: 'ok',
      environment: rc.settings.environment,
      binDataVersion: rc.services.binIndex.dataVersion ?? null,
    },
  });
}

/** The landing page's only style; nothing else may load (its CSP). */
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#f6f7f9}
main{max-width:42rem;margin:0 auto;padding:24px 16px;box-sizing:border-box}
h1{font-size:24px;margin:0 0 8px}ul{padding-left:1.2em}li{margin:6px 0}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:4px 16px}dt{color:#555}dd{margin:0}
code{font-size:14px;overflow-wrap:anywhere}a{color:#0b57d0}`;

/** `GET /`: what the service is, links to its reference (and the demo where it is served), its environment and BIN data. */
function landingPage(rc: RequestContext, demo: boolean): Promise<Response> {
  const environment = rc.settings.environment;
  const dataVersion = rc.services.binIndex.dataVersion;
  const nonce = toBase64(crypto.getRandomValues(new Uint8Array(16)));
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>card-edge</title>
<style nonce="${nonce}">${STYLE}</style></head><body><main>
<h1>card-edge</h1>
<p>Card BIN lookup, 3-D Secure customer verification and card tokens, wire-compatible with Worldpay Access
(Card BIN v1; 3DS and Tokens v1, v2 and v3). API calls take the merchant's HTTP Basic credentials (the BIN prefix
lookup also a publishable key).</p>
<ul>
<li><a href="/docs">API reference</a> (Swagger UI)</li>
<li><a href="/openapi.json">OpenAPI 3.1 document</a></li>
${demo ? '<li><a href="/demo">Demo checkout</a> (BIN lookup as you type, then 3-D Secure)</li>\n' : ''}<li><a href="/health">Health</a> (JSON, for load balancers)</li>
</ul>
<dl>
<dt>Environment</dt><dd id="environment">${escapeHtml(environment)}</dd>
<dt>BIN data version</dt><dd><code id="bin-data-version">${escapeHtml(dataVersion ?? 'unknown')}</code></dd>
</dl>
</main></body></html>`;
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return Promise.resolve(
    new Response(html, {
      headers: {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': csp,
        'Referrer-Policy': 'no-referrer',
      },
    }),
  );
}

/** The service routes, first in each Worker's route table (src/index.ts, src/live.ts). */
export function serviceRoutes(options: ServiceRouteOptions = {}): Route[] {
  return [
    { method: 'GET', path: '/', page: (rc) => landingPage(rc, options.demoServed?.(rc) ?? false) },
    { method: 'GET', path: '/health', page: health },
  ];
}
