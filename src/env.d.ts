// Optional vars that wrangler.toml leaves unset, so `wrangler types` cannot see them. Secrets
// are typed by `npm run types` from .dev.vars.example; at run time a missing secret is
// undefined all the same, and the code checks for it (503 serviceUnavailable).
declare namespace Cloudflare {
  interface Env {
    /** Base URL for links; the request origin when unset. */
    PUBLIC_BASE_URL?: string;
    /** Deadline of every KV and Durable Object call, in ms (default 5000). */
    STORAGE_TIMEOUT_MS?: string;
    /** Into how many objects each merchant's event log is split by subject (default 8; fixed for a deployment's life). */
    EVENT_LOG_SHARDS?: string;
    /** Live: the deadline of an AReq at the 3DS Server provider, in ms (default 15000). */
    THREEDS_SERVER_TIMEOUT_MS?: string;
    /**
     * A service binding to the 3DS Server provider (the fake one, in tests): when bound, calls to
     * the provider go through it instead of the network.
     */
    THREEDS_SERVER?: Fetcher;
  }
}
