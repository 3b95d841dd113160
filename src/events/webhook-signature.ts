import { fromBase64, toBase64, utf8 } from '../bytes';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, docs/events.md "Signatures"):
 * each endpoint has its own secret, `whsec_` and the base64 of 32 random bytes; a delivery
 * carries `webhook-id` (the eventId), `webhook-timestamp` (Unix seconds) and `webhook-signature`,
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` once per valid secret, space-separated
 * (two while a rotated-out secret still signs). Receivers verify with a Standard Webhooks library
 * (npm, PyPI, NuGet, Go, … `standardwebhooks`), which the tests use as a receiver would.
 *
 * @example
 * ```ts
 * const keys = [await signingKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')];
 * await webhookSignature(keys, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
 * // 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 * ```
 */
export async function webhookSignature(
  keys: readonly CryptoKey[],
  id: string,
  timestamp: number,
  body: string,
): Promise<string> {
  const message = utf8(`${id}.${timestamp}.${body}`);
  const signatures = await Promise.all(
    keys.map(async (key) => `v1,${toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', key, message)))}`),
  );
  return signatures.join(' ');
}

const PREFIX = 'whsec_';
/** Random bytes in a new secret (the specification asks for 24 to 64). */
const SECRET_BYTES = 32;

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** The HMAC key of a secret (the bytes its base64 stands for). Throws on a string that is not one. */
export function signingKey(secret: string): Promise<CryptoKey> {
  if (!secret.startsWith(PREFIX)) throw new Error('not a whsec_ secret');
  return crypto.subtle.importKey(
    'raw',
    fromBase64(secret.slice(PREFIX.length)),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
}
