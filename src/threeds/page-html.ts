/**
 * The issuer-side browser pages of the test ACS (docs/threeds.md "Browser pages"): plain HTML,
 * no external assets, no framework, safe to frame. Every page gets a fresh nonce for its one
 * script and style, and a CSP that allows nothing else.
 */
import { toBase64 } from '../bytes';
import { windowDimensions } from './challenge';

/** A rendered page and what its response headers need. */
export interface HtmlPage {
  status: number;
  html: string;
  /** Extra origins the page's forms may post to (the merchant's returnUrl). */
  formTargets: string[];
  /**
   * Live pages that send the browser to an issuer's ACS (docs/threeds.md "Live": "Pages"): their
   * forms and frames may go to any https origin (ACS origins vary per card and redirect), to these
   * origins, and back to this service; their script may post to this service.
   */
  acs?: { origins: string[] };
  nonce: string;
  /** Seconds, for a 503: when to try again. */
  retryAfter?: number;
}

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside an inline <script>. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function newNonce(): string {
  return toBase64(crypto.getRandomValues(new Uint8Array(16)));
}

function layout(nonce: string, title: string, body: string, css = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">
body{font:15px/1.4 system-ui,sans-serif;margin:0;padding:16px;box-sizing:border-box;color:#1b1b1b;background:#fff}
h1{font-size:18px;margin:0 0 12px}p{margin:0 0 12px}.note{color:#555;font-size:13px}.error{color:#a00000}
input[type=text]{font-size:18px;padding:6px;width:8em;letter-spacing:.2em}
button{font-size:15px;padding:6px 14px;margin:12px 8px 0 0}${css}
</style></head><body>
${body}
</body></html>`;
}

/** The DDC page: tells its parent window that device data collection ended. */
export function ddcPage(message: { MessageType: 'profile.completed'; SessionId?: string; Status: boolean }): HtmlPage {
  const nonce = newNonce();
  const body = `<script nonce="${nonce}">window.parent.postMessage(JSON.stringify(${scriptJson(message)}), '*');</script>`;
  return { status: 200, html: layout(nonce, 'Device data collection', body), formTargets: [], nonce };
}

export interface ChallengeForm {
  submitUrl: string;
  state: string;
  windowSize: string;
  attemptsLeft: number;
  /** Shown in `test` only. */
  testCode?: string;
  wrongCode: boolean;
}

/** The challenge: a one-time code field, Submit and Cancel, sized for the window size. */
export function challengePage(form: ChallengeForm): HtmlPage {
  const nonce = newNonce();
  const size = windowDimensions(form.windowSize);
  const css = size ? `body{width:${size.width}px;height:${size.height}px;overflow:auto}` : '';
  const body = `<h1>Confirm your payment</h1>
<p>Enter the one-time code your bank sent you.</p>
${form.wrongCode ? `<p class="error" role="alert">That code is not right. ${form.attemptsLeft} attempt${form.attemptsLeft === 1 ? '' : 's'} left.</p>` : ''}
<form method="post" action="${escapeHtml(form.submitUrl)}">
<input type="hidden" name="state" value="${escapeHtml(form.state)}">
<label for="code">One-time code</label><br>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" autofocus>
<br><button type="submit" name="action" value="submit">Submit</button><button type="submit" name="action" value="cancel">Cancel</button>
</form>
${form.testCode ? `<p class="note">Test environment: the code that passes is <strong>${escapeHtml(form.testCode)}</strong>.</p>` : ''}`;
  return {
    status: 200,
    html: layout(nonce, 'Payment verification', body, css),
    formTargets: [new URL(form.submitUrl).origin],
    nonce,
  };
}

/**
 * The end of a challenge: says how it ended (the one result, which verification reports too) and
 * posts TransactionId and MD to the merchant's returnUrl at once.
 */
export function completionPage(
  returnUrl: string,
  transactionId: string,
  md: string,
  /** `pending` (live): the issuer's result is not known yet; the merchant's verification will tell. */
  result: 'passed' | 'failed' | 'unavailable' | 'pending',
): HtmlPage {
  const nonce = newNonce();
  const said =
    result === 'passed'
      ? '<h1>Payment verified</h1>'
      : result === 'failed'
        ? '<h1>Payment not verified</h1><p>Your bank could not confirm this payment.</p>'
        : '<h1>Verification finished</h1>';
  const body = `${said}<p>Returning to the merchant…</p>
${autoPostForm(nonce, 'complete', returnUrl, { TransactionId: transactionId, MD: md })}`;
  return {
    status: 200,
    html: layout(nonce, 'Payment verification', body),
    formTargets: [new URL(returnUrl).origin],
    nonce,
  };
}

/** What the live DDC page does (docs/threeds.md "Live": "Device data collection"). */
export interface LiveDdc {
  message: { MessageType: 'profile.completed'; SessionId?: string; Status: boolean };
  /** Where the page's script posts what it learned of the browser. */
  factsUrl: string;
  /** The ACS's 3DS Method, run in a hidden frame: its URL and `threeDSMethodData`. */
  method?: { url: string; data: string };
  /** The page tells its parent it is done after this long at the most. */
  givesUpMs: number;
}

/** The message the 3DS Method notification page posts to the DDC page. */
const METHOD_COMPLETED_MESSAGE = 'threeDSMethodCompleted';

/**
 * The live DDC page: posts the browser's facts to the service and runs the 3DS Method in a hidden
 * frame; tells its parent `profile.completed` once both are done, or after `givesUpMs`.
 */
export function liveDdcPage(ddc: LiveDdc): HtmlPage {
  const nonce = newNonce();
  const method = ddc.method
    ? `<iframe name="threeds-method" title="3-D Secure" hidden></iframe>
<form id="method" method="post" action="${escapeHtml(ddc.method.url)}" target="threeds-method">
<input type="hidden" name="threeDSMethodData" value="${escapeHtml(ddc.method.data)}">
</form>`
    : '';
  const config = {
    message: JSON.stringify(ddc.message),
    factsUrl: ddc.factsUrl,
    method: !!ddc.method,
    givesUpMs: ddc.givesUpMs,
  };
  const body = `${method}
<script nonce="${nonce}">
(function () {
  var config = ${scriptJson(config)};
  var finished = false, factsSent = false, methodDone = !config.method;
  function finish() {
    if (finished) return;
    finished = true;
    window.parent.postMessage(config.message, '*');
  }
  function settle() { if (factsSent && methodDone) finish(); }
  window.addEventListener('message', function (e) {
    if (e.origin === location.origin && e.data === ${scriptJson(METHOD_COMPLETED_MESSAGE)}) { methodDone = true; settle(); }
  });
  var facts = {
    javascriptEnabled: true,
    javaEnabled: typeof navigator.javaEnabled === 'function' ? navigator.javaEnabled() : false,
    language: navigator.language,
    colorDepth: screen.colorDepth,
    screenHeight: screen.height,
    screenWidth: screen.width,
    timeZone: new Date().getTimezoneOffset()
  };
  fetch(config.factsUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(facts), keepalive: true })
    .catch(function () {})
    .then(function () { factsSent = true; settle(); });
  if (config.method) document.getElementById('method').submit();
  setTimeout(finish, config.givesUpMs);
})();
</script>`;
  const origins = ddc.method ? [new URL(ddc.method.url).origin] : [];
  return { status: 200, html: layout(nonce, 'Device data collection', body), formTargets: [], nonce, acs: { origins } };
}

/** A form of hidden fields that posts itself (a button without script), as 3-D Secure hands a browser on. */
function autoPostForm(nonce: string, id: string, action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
  return `<form id="${id}" method="post" action="${escapeHtml(action)}">
${inputs}
<noscript><button type="submit">Continue</button></noscript>
</form>
<script nonce="${nonce}">document.getElementById('${id}').submit();</script>`;
}

/** The 3DS Method notification page, in the DDC page's hidden frame: tells the DDC page. */
export function methodNotifiedPage(): HtmlPage {
  const nonce = newNonce();
  const body = `<script nonce="${nonce}">window.parent.postMessage(${scriptJson(METHOD_COMPLETED_MESSAGE)}, location.origin);</script>`;
  return { status: 200, html: layout(nonce, '3-D Secure', body), formTargets: [], nonce };
}

/** The live challenge: posts the CReq to the issuer's ACS in the same frame. */
export function relayPage(acsUrl: string, creq: string, sessionData: string): HtmlPage {
  const nonce = newNonce();
  const body = `<p>Connecting to your bank…</p>
${autoPostForm(nonce, 'relay', acsUrl, { creq, threeDSSessionData: sessionData })}`;
  return {
    status: 200,
    html: layout(nonce, 'Payment verification', body),
    formTargets: [],
    nonce,
    acs: { origins: [new URL(acsUrl).origin] },
  };
}

/** An error the cardholder sees instead of a challenge; nothing was changed. */
export function errorPage(status: number, title: string, detail: string, retryAfter?: number): HtmlPage {
  const nonce = newNonce();
  const body = `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p>`;
  return { status, html: layout(nonce, title, body), formTargets: [], nonce, ...(retryAfter ? { retryAfter } : {}) };
}

/**
 * A CSP source for an origin, or nothing: schemes and host names hold no character that could
 * end a CSP source or directive (`;`, `,`, `'`, space), but a URL that slipped through
 * validation must never widen the policy.
 */
function cspOrigin(origin: string): string[] {
  return /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/.test(origin) ? [origin] : [];
}

/** The HTTP response for a page, with its CSP. */
export function pageResponse(page: HtmlPage): Response {
  const acs = page.acs ? ['https:', ...page.acs.origins.flatMap(cspOrigin)] : [];
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${page.nonce}'`,
    `style-src 'nonce-${page.nonce}'`,
    ["form-action 'self'", ...page.formTargets.flatMap(cspOrigin), ...acs].join(' '),
    ...(page.acs ? [["frame-src 'self'", ...acs].join(' '), "connect-src 'self'"] : []),
    "base-uri 'none'",
    // Framed by the merchant's checkout, whatever its origin: that is the point of these pages.
    'frame-ancestors *',
  ].join('; ');
  const headers: Record<string, string> = {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': csp,
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  };
  if (page.retryAfter !== undefined) headers['Retry-After'] = String(page.retryAfter);
  return new Response(page.html, { status: page.status, headers });
}
