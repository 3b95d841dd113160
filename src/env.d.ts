// Secrets and optional vars, which `wrangler types` cannot see in wrangler.toml.
declare namespace Cloudflare {
  interface Env {
    /** JSON `{ "<username>": "pbkdf2-sha256:<iterations>:<salt>:<hash>" }` (see README). */
    MERCHANT_PASSWORD_HASHES?: string;
    /** Base URL for links; the request origin when unset. */
    PUBLIC_BASE_URL?: string;
  }
}
