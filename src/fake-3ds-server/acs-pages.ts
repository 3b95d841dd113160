import { MAX_WRONG_CODES, PASSING_CODE } from './challenge-flow';

/**
 * The fake ACS's pages: plain HTML, no external assets, fine to frame (they run in the
 * requestor's iframes). Each has a strict Content-Security-Policy: nothing loads, the one inline
 * script (the auto-submit) runs by its nonce, and forms go only where the page means them to.
 */

export interface Page {
  html: string;
  policy: string;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text safe inside HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A fresh nonce for one page's script and style. */
export function newNonce(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
}

function policy(nonce: string, formActions: readonly string[]): string {
  const origins = [...new Set(formActions.map((url) => new URL(url).origin))];
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `form-action ${origins.length > 0 ? origins.join(' ') : "'none'"}`,
    "base-uri 'none'",
  ].join('; ');
}

function document(nonce: string, title: string, body: string, script?: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style nonce="${nonce}">body{font:16px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}` +
      'input,button{font:inherit;padding:.3em .6em}.note{color:#666;font-size:.85em}</style>',
    '</head>',
    '<body>',
    body,
    '<p class="note">fake-3ds-server: a test ACS, not a bank.</p>',
    script !== undefined ? `<script nonce="${nonce}">${script}</script>` : '',
    '</body>',
    '</html>',
  ].join('\n');
}

function hiddenFields(fields: Readonly<Record<string, string | undefined>>): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
}

/**
 * A page that posts a form to `action` in its own frame at once (and offers a button when
 * scripts are off): the method's notification, the end of a challenge, an automatic challenge.
 */
export function autoPostPage(
  nonce: string,
  title: string,
  action: string,
  fields: Readonly<Record<string, string | undefined>>,
): Page {
  const body = [
    `<p>${escapeHtml(title)}</p>`,
    `<form id="next" method="post" action="${escapeHtml(action)}">`,
    hiddenFields(fields),
    '<noscript><button type="submit">Continue</button></noscript>',
    '</form>',
  ].join('\n');
  return {
    html: document(nonce, title, body, "document.getElementById('next').submit();"),
    policy: policy(nonce, [action]),
  };
}

/** A 3DS Method that never completes: the page does nothing. */
export function idleMethodPage(nonce: string): Page {
  return { html: document(nonce, '3DS Method', '<p>Collecting device data.</p>'), policy: policy(nonce, []) };
}

/** The manual challenge: a one-time code field, Submit and Cancel. */
export function challengeCodePage(
  nonce: string,
  p: { submitUrl: string; threeDSServerTransID: string; acsTransID: string; attemptsLeft: number },
): Page {
  const retry = p.attemptsLeft < MAX_WRONG_CODES;
  const body = [
    '<h1>Confirm your purchase</h1>',
    retry
      ? `<p role="alert">That code is not right: ${p.attemptsLeft} attempt${p.attemptsLeft === 1 ? '' : 's'} left.</p>`
      : '<p>Enter the one-time code we sent you.</p>',
    `<p>Test ACS: the code that passes is <strong>${PASSING_CODE}</strong>.</p>`,
    `<form method="post" action="${escapeHtml(p.submitUrl)}">`,
    hiddenFields({ threeDSServerTransID: p.threeDSServerTransID, acsTransID: p.acsTransID }),
    '<label for="code">One-time code</label>',
    '<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" autofocus>',
    '<button type="submit" name="action" value="submit">Submit</button>',
    '<button type="submit" name="action" value="cancel">Cancel</button>',
    '</form>',
  ].join('\n');
  return { html: document(nonce, 'Confirm your purchase', body), policy: policy(nonce, [p.submitUrl]) };
}

/** An error of the ACS, shown in the challenge or method frame. */
export function errorPage(nonce: string, title: string, detail: string): Page {
  const body = `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(detail)}</p>`;
  return { html: document(nonce, title, body), policy: policy(nonce, []) };
}
