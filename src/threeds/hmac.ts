/** HMAC-SHA256 of a text under the 3DS key (JWT_SIGNING_KEY): request fingerprints, stable ids, codes. */
export async function hmacSha256(key: Uint8Array, text: string): Promise<Uint8Array> {
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', hmac, new TextEncoder().encode(text)));
}
