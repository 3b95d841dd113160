/**
 * Token ids and token references (docs/tokens.md "Token ids and hrefs").
 *
 * - A token's `tokenId` is Worldpay's: 21 characters of its alphabet (digits and capitals without
 *   I and O), random (about 107 bits).
 * - Its href ends with its *reference*, the path parameter Worldpay's document calls an "encrypted
 *   token": the id of the object that owns the token (64 lower-case hexadecimal characters), then
 *   the `tokenId`. So every request on a token's href reaches the one object that decides about
 *   it, with no lookup in between.
 */

/** Worldpay's token id alphabet: digits and capitals without I and O. */
const ALPHABET = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const TOKEN_ID_LENGTH = 21;

/** What a token reference of ours looks like: the owning object's id, then the token id. */
export const TOKEN_REFERENCE = /^([0-9a-f]{64})([0-9A-HJ-NP-Z]{21})$/;

/** A token id: 21 characters of Worldpay's alphabet (about 107 random bits), without modulo bias. */
export function newTokenId(): string {
  let out = '';
  while (out.length < TOKEN_ID_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      // 238 = 7 × 34: bytes from 238 up would favour the first characters.
      if (byte < 238 && out.length < TOKEN_ID_LENGTH) out += ALPHABET[byte % 34];
    }
  }
  return out;
}

/** The reference of a token of the object whose id (`DurableObjectId.toString()`) is `ownerId`. */
export function tokenReference(ownerId: string, tokenId: string): string {
  const reference = `${ownerId}${tokenId}`;
  if (!TOKEN_REFERENCE.test(reference)) throw new Error('not an object id and a token id');
  return reference;
}

/** The owning object's id and the token id of a reference; undefined when it is not one of ours. */
export function parseReference(reference: string): { ownerId: string; tokenId: string } | undefined {
  const match = TOKEN_REFERENCE.exec(reference);
  return match ? { ownerId: match[1]!, tokenId: match[2]! } : undefined;
}
