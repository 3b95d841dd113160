/**
 * Base64url as 3-D Secure's browser messages use it. EMVCo says no padding; 3dsecure.io's
 * sandbox once sent padded CRes values, and requestors must accept both (research notes §1.6,
 * §1.7, §1.10). So the fake reads both and writes whichever a message needs.
 */

/** The base64url of UTF-8 text, with or without `=` padding. */
export function base64UrlEncode(text: string, padded: boolean): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  const url = btoa(binary).replace(/\+/g, '-').replace(/\//g, '_');
  return padded ? url : url.replace(/=+$/, '');
}

/** The UTF-8 text of a base64url value, padded or not; undefined when it is not base64url. */
export function base64UrlDecode(value: string): string | undefined {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(value)) return undefined;
  const bare = value.replace(/=+$/, '');
  if (bare.length % 4 === 1) return undefined;
  const standard = bare.replace(/-/g, '+').replace(/_/g, '/');
  try {
    const binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, '='));
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
}

/** Whether a base64url value carries `=` padding. */
export function isPadded(value: string): boolean {
  return value.endsWith('=');
}

/** The JSON object inside a base64url value, or undefined when there is none. */
export function decodeJsonObject(value: string): Record<string, unknown> | undefined {
  const text = base64UrlDecode(value);
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a value is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
