/**
 * Byte encodings, once for the whole Worker (and the Node scripts that share its modules).
 * Platform-neutral: `atob`/`btoa` exist in workerd and in Node.
 */

const UTF8 = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return UTF8.encode(text) as Uint8Array<ArrayBuffer>;
}

/** Lower-case hex of bytes: `toHex(new Uint8Array([1, 255]))` is `'01ff'`. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}

/** Standard base64 with padding. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Bytes of standard base64; throws on anything that is not base64. */
export function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** URL-safe base64 without padding (RFC 4648 §5). */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Bytes of URL-safe base64, padded or not (EMV's CRes and 3DS Method data come both ways);
 * throws on anything else.
 */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw new Error('not base64url');
  const b64 = text.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  return fromBase64(b64.padEnd(b64.length + ((4 - (b64.length % 4)) % 4), '='));
}

/** Base64 of a UTF-8 string (the 3DS CReq payload). */
export function base64OfText(text: string): string {
  return toBase64(utf8(text));
}

/** The UTF-8 string inside base64; throws when it is neither. */
export function textOfBase64(b64: string): string {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(fromBase64(b64));
}
