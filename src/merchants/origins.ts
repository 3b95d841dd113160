/**
 * Web origins of the pages that may use a publishable key (docs/card-bin.md "Publishable keys"):
 * what an origin in the configuration may look like, and whether a page's `Origin` header is one
 * a key lists. Pure.
 */

/** Local origins with any port: the one wildcard an origin list may hold. */
const LOCAL_ANY_PORT = /^http:\/\/(localhost|127\.0\.0\.1):\*$/;
const LOCAL_WITH_PORT = /^(http:\/\/(?:localhost|127\.0\.0\.1)):\d{1,5}$/;

/**
 * A web origin as browsers send it: scheme, host, optional port, nothing else; or a local
 * any-port origin (`http://localhost:*`, `http://127.0.0.1:*`).
 *
 * @example
 * ```ts
 * isConfigurableOrigin('https://shop.example'); // true
 * isConfigurableOrigin('https://shop.example/checkout'); // false
 * ```
 */
export function isConfigurableOrigin(value: string): boolean {
  if (LOCAL_ANY_PORT.test(value)) return true;
  try {
    const url = new URL(value);
    // The URL parser lets `*` through in a host: a browser never sends one, so a wildcard there
    // would silently match nothing (the only wildcard is the local any-port one above).
    const hostOnly = /^[a-z0-9.-]+$/.test(url.hostname);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value && hostOnly;
  } catch {
    return false;
  }
}

/**
 * Whether a page's `Origin` is in a list of configured origins: exactly, or as any port of a
 * listed local any-port origin.
 *
 * @example
 * ```ts
 * originListed(new Set(['http://localhost:*']), 'http://localhost:8787'); // true
 * ```
 */
export function originListed(origins: ReadonlySet<string>, origin: string): boolean {
  if (origins.has(origin)) return true;
  const local = LOCAL_WITH_PORT.exec(origin);
  return local !== null && origins.has(`${local[1]}:*`);
}
