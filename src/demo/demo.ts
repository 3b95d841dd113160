import { keyAllowsOrigin, MERCHANTS, type MerchantConfig } from '../config/merchants';
import { readJsonObject } from '../http/body';
import { ApiError, fail, mapFailure } from '../http/errors';
import type { EndpointResult, RequestContext } from '../http/pipeline';
import { publicBaseUrl } from '../routes/context';
import { authenticate } from '../routes/threeds/authenticate';
import { deviceDataInitialize } from '../routes/threeds/device-data-initialize';
import { verification } from '../routes/threeds/verification';
import { escapeHtml } from '../threeds/pages';
import { SCENARIOS } from '../threeds/scenarios';
import { WINDOW_SIZES } from '../threeds/schemas';

/**
 * The demo checkout at /demo (`test` only; every /demo path answers 404 in `live`): a card form
 * that shows the BIN answer as the cardholder types (binLookup with the demo merchant's
 * publishable key, from the page), then runs the whole 3DS flow in the page. Its server side is
 * this file: a small merchant backend that calls the 3DS steps as the local test merchant
 * (`test-merchant`, entity `default`) would through the API. The page's files are static assets
 * (public/demo/), served through the ASSETS binding so that the `test` gate applies to them too.
 */

const DEMO_USERNAME = 'test-merchant';
const DEMO_ENTITY = 'default';

/** The demo's pages and files: script, styles and images from this origin only. */
const DEMO_CSP = [
  "default-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function demoMerchant(): MerchantConfig {
  const merchant = MERCHANTS.get(DEMO_USERNAME);
  if (!merchant) fail({ kind: 'resourceNotFound' });
  return merchant;
}

/** Every /demo path is a 404 outside `test`. */
function testOnly(rc: RequestContext): void {
  if (rc.settings.environment !== 'test') fail({ kind: 'resourceNotFound' });
}

function withCsp(response: Response): Response {
  const out = new Response(response.body, response);
  out.headers.set('Content-Security-Policy', DEMO_CSP);
  out.headers.set('X-Content-Type-Options', 'nosniff');
  return out;
}

/** `GET /demo`: the page. */
export async function demoPage(rc: RequestContext): Promise<Response> {
  testOnly(rc);
  return withCsp(await rc.env.ASSETS.fetch(new URL('/demo/', rc.url)));
}

/** `GET /demo/*`: the page's script, styles and images. */
export async function demoFile(rc: RequestContext): Promise<Response> {
  testOnly(rc);
  const response = await rc.env.ASSETS.fetch(new Request(rc.url, { method: 'GET' }));
  if (response.status === 404) fail({ kind: 'resourceNotFound' });
  return withCsp(response);
}

/**
 * `GET /demo/config`: what the page needs: the demo merchant's publishable key for this origin,
 * its entity, the test magic values and the challenge window sizes.
 */
export function demoConfig(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const origin = new URL(publicBaseUrl(rc)).origin;
  const key = demoMerchant().publishableKeys.find((k) => keyAllowsOrigin(k, origin));
  return Promise.resolve({
    status: 200,
    body: {
      publishableKey: key?.key ?? null,
      entity: DEMO_ENTITY,
      scenarios: SCENARIOS.map((s) => ({
        cardHolderName: s.name,
        authenticate: s.authenticate,
        ...(s.verification ? { verification: s.verification } : {}),
      })),
      windowSizes: WINDOW_SIZES,
    },
  });
}

/** `POST /demo/merchant/init`: the merchant's server starts 3DS (deviceDataInitialize). */
export async function demoInit(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  // The page's fields go into the API's schema as they are: validation answers anything wrong.
  const card = await readJsonObject(rc.request);
  return deviceDataInitialize.handle({
    merchant: demoMerchant(),
    params: {},
    rc,
    body: {
      transactionReference: `demo-${crypto.randomUUID()}`,
      merchant: { entity: DEMO_ENTITY },
      paymentInstrument: {
        type: 'card/front',
        cardNumber: card.cardNumber,
        cardExpiryDate: { month: card.month, year: card.year },
      },
    },
  });
}

/** `POST /demo/merchant/authenticate`: the merchant's server authenticates, with the page's device data. */
export async function demoAuthenticate(rc: RequestContext): Promise<EndpointResult> {
  testOnly(rc);
  const input = await readJsonObject(rc.request);
  return authenticate.handle({
    merchant: demoMerchant(),
    params: {},
    rc,
    body: {
      transactionReference: input.transactionReference,
      merchant: { entity: DEMO_ENTITY },
      instruction: {
        value: { amount: 4999, currency: 'GBP' },
        paymentInstrument: {
          type: 'card/front',
          cardNumber: input.cardNumber,
          cardExpiryDate: { month: input.month, year: input.year },
          ...(typeof input.cardHolderName === 'string' && input.cardHolderName !== ''
            ? { cardHolderName: input.cardHolderName }
            : {}),
        },
      },
      deviceData: {
        acceptHeader: rc.request.headers.get('Accept') ?? '*/*',
        userAgentHeader: rc.request.headers.get('User-Agent') ?? 'demo',
        collectionReference: input.collectionReference ?? '',
      },
      challenge: {
        returnUrl: `${publicBaseUrl(rc)}/demo/merchant/return`,
        windowSize: input.windowSize,
        preference: 'noPreference',
      },
    },
  });
}

/**
 * `POST /demo/merchant/return`: where the challenge page posts back (TransactionId = the
 * challenge reference, MD = the transaction reference). The merchant's server calls
 * verification and answers a page that hands the result to the checkout.
 */
export async function demoReturn(rc: RequestContext): Promise<Response> {
  testOnly(rc);
  const form = new URLSearchParams(await rc.request.text());
  let result: unknown;
  try {
    const verified = await verification.handle({
      merchant: demoMerchant(),
      params: {},
      rc,
      body: {
        transactionReference: form.get('MD') ?? '',
        merchant: { entity: DEMO_ENTITY },
        challenge: { reference: form.get('TransactionId') ?? '' },
      },
    });
    result = verified.body;
  } catch (e) {
    result = e instanceof ApiError ? mapFailure(e.failure).body : { errorName: 'internalErrorOccurred' };
  }
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Verification</title></head>
<body data-verification="${escapeHtml(JSON.stringify(result))}"><p>Verification done.</p>
<script src="/demo/return.js"></script></body></html>`;
  return new Response(html, {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': DEMO_CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'"),
    },
  });
}
