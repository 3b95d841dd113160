/**
 * The fake's answers. Every one carries `X-Fake-3DS-Server: fake-3ds-server`: the marker that
 * says which Worker answered, and that the service's bundle check looks for to prove the fake is
 * not in the service's bundles.
 */

export const MARKER_HEADER = 'X-Fake-3DS-Server';
export const MARKER = 'fake-3ds-server';

const JSON_TYPE = 'application/json; charset=utf-8';

function headers(contentType: string, extra: Record<string, string> = {}): Headers {
  return new Headers({ 'Content-Type': contentType, 'Cache-Control': 'no-store', [MARKER_HEADER]: MARKER, ...extra });
}

/** A JSON answer, as 3dsecure.io answers (UTF-8). */
export function jsonResponse(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: headers(JSON_TYPE) });
}

/** A plain-text answer (the provider's 401, the fake's own refusals of a route). */
export function textResponse(text: string, status: number, extra: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: headers('text/plain; charset=utf-8', extra) });
}

/** An answer with a body of the given type, as is (the malformed-answer fault). */
export function rawResponse(body: string, status: number, contentType: string): Response {
  return new Response(body, { status, headers: headers(contentType) });
}

/** An HTML page under its Content-Security-Policy (acs-pages.ts builds both). */
export function htmlResponse(page: { html: string; policy: string }, status = 200): Response {
  return new Response(page.html, {
    status,
    headers: headers('text/html; charset=utf-8', {
      'Content-Security-Policy': page.policy,
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    }),
  });
}

/** The JSON body of a request, or undefined when it is not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The string fields of a form post (urlencoded or multipart); empty when the body is no form. */
export async function readForm(request: Request): Promise<Record<string, string>> {
  try {
    const form = await request.formData();
    const fields: Record<string, string> = {};
    for (const [name, value] of form) if (typeof value === 'string') fields[name] = value;
    return fields;
  } catch {
    return {};
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts (the client gave up). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
