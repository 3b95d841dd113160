// Verifies the `Event-Signature` header of an event card-edge posted to your endpoint
// (docs/events.md "Verify the signature"). Copy this function into your receiver: it needs no
// dependency and runs on Node 20+, Cloudflare Workers, Deno and browsers (WebCrypto).
//
//   const ok = await verifyEventSignature(rawBody, request.headers.get('Event-Signature'), [secret]);
//
// `rawBody` is the body exactly as received (a string): parse it only once it is verified.
/* global crypto, TextEncoder */

/** A signature older than this (or this far ahead of your clock) is refused: a replay. */
const TOLERANCE_SECONDS = 5 * 60;

/**
 * Whether `header` is a valid signature of `rawBody` under one of `secrets` (during a rotation on
 * your side, pass both), made within the last 5 minutes. Any `v1=` of the header may match: while
 * card-edge rotates your secret, it signs with the new and the old one.
 *
 * @param {string} rawBody the request body as received
 * @param {string | null} header the Event-Signature header: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`
 * @param {string | string[]} secrets your signing secret(s)
 * @param {number} [nowSeconds] the current time in Unix seconds (for tests)
 * @returns {Promise<boolean>}
 */
export async function verifyEventSignature(rawBody, header, secrets, nowSeconds = Math.floor(Date.now() / 1000)) {
  if (typeof rawBody !== 'string' || typeof header !== 'string') return false;
  let t;
  const signatures = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (t === undefined || signatures.length === 0 || Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return false;
  const encoder = new TextEncoder();
  const message = encoder.encode(`${t}.${rawBody}`);
  let valid = false;
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    const expected = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
    for (const signature of signatures) valid = equalHex(expected, signature) || valid;
  }
  return valid;
}

/** Compares bytes with a hex string in time that does not depend on where they differ. */
function equalHex(bytes, hex) {
  let difference = bytes.length * 2 === hex.length ? 0 : 1;
  for (let i = 0; i < bytes.length; i++) difference |= bytes[i] ^ parseInt(hex.slice(2 * i, 2 * i + 2) || '0', 16);
  return difference === 0;
}
