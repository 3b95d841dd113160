import { toHex, utf8 } from '../bytes';

/**
 * The `Event-Signature` header (docs/events.md "The signature"): `t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<raw body>">`, one `v1=` per valid secret (two while a merchant rotates).
 * The key is the secret's UTF-8 bytes. examples/verify-event-signature.mjs is the receiver's side.
 *
 * @example
 * ```ts
 * await eventSignature(['s3cret…'], 1795314600, '{"eventId":"evt_1",…}'); // 't=1795314600,v1=5f0c…'
 * ```
 */
export async function eventSignature(secrets: readonly string[], t: number, body: string): Promise<string> {
  const message = utf8(`${t}.${body}`);
  const parts = [`t=${t}`];
  for (const secret of secrets) {
    parts.push(`v1=${toHex(new Uint8Array(await crypto.subtle.sign('HMAC', await keyOf(secret), message)))}`);
  }
  return parts.join(',');
}

/** Imported keys, per secret, for the isolate's life: a few merchants' one or two secrets each. */
const KEYS = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 256;

function keyOf(secret: string): Promise<CryptoKey> {
  let key = KEYS.get(secret);
  if (!key) {
    if (KEYS.size >= MAX_KEYS) KEYS.clear();
    key = crypto.subtle.importKey('raw', utf8(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    // A failed import is not kept: the next attempt imports again.
    key.catch(() => KEYS.delete(secret));
    KEYS.set(secret, key);
  }
  return key;
}
