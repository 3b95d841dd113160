import { toBase64Url, utf8 } from '../../bytes';
import { hmacSha256 } from '../hmac-derived-values';

/**
 * A transaction's handle (docs/threeds.md "Live": "Notification URLs"): what the URLs an ACS
 * posts to carry in their path (the 3DS Method notification, the challenge notification) and
 * what the challenge relay sends as `threeDSSessionData`. It names the transaction's owner object
 * and proves that this service issued it: `<object id><HMAC>`, the object id's 64 hex digits
 * followed by 22 base64url characters, 86 characters in all. Every character is base64url, as
 * EMV and the provider require of `threeDSSessionData` (at most 1024 base64url characters), so
 * that nobody can complete a method or fetch a result for a transaction they only guessed.
 *
 * Handles issued before had a `.` between the two parts (87 characters); they are still read, so
 * that a challenge under way across a deployment still ends.
 *
 * The content of the ACS's posts is never trusted: the handle says which transaction, the 3DS
 * Server provider says what happened.
 */

/** Bytes of HMAC kept: 128 bits, plenty against forgery, short enough for a URL. */
const MAC_BYTES = 16;

/** A handle: the object id, an optional `.` (the older form), the MAC. */
const HANDLE = /^([0-9a-f]{64})\.?([A-Za-z0-9_-]{22})$/;

async function macOf(key: Uint8Array<ArrayBuffer>, objectId: string): Promise<string> {
  return toBase64Url((await hmacSha256(key, `3ds-handle:${objectId}`)).slice(0, MAC_BYTES));
}

/** The handle of the transaction whose owner object has this id (64 hex digits). */
export async function transactionHandle(key: Uint8Array<ArrayBuffer>, objectId: string): Promise<string> {
  return `${objectId}${await macOf(key, objectId)}`;
}

/**
 * The owner object id a handle names, or undefined when this service did not issue it.
 *
 * @example
 * ```ts
 * await objectIdOfHandle(key, await transactionHandle(key, id)); // id
 * await objectIdOfHandle(key, `${id}${'A'.repeat(22)}`); // undefined
 * ```
 */
export async function objectIdOfHandle(key: Uint8Array<ArrayBuffer>, handle: string): Promise<string | undefined> {
  const parts = HANDLE.exec(handle);
  if (!parts) return undefined;
  const [, objectId = '', mac = ''] = parts;
  const expected = utf8(await macOf(key, objectId));
  const given = utf8(mac);
  return expected.byteLength === given.byteLength && crypto.subtle.timingSafeEqual(expected, given)
    ? objectId
    : undefined;
}
