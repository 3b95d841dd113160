import { toBase64Url, utf8 } from '../../bytes';
import { hmacSha256 } from '../hmac-derived-values';

/**
 * A transaction's handle (docs/threeds.md "Live": "Notification URLs"): what the URLs an ACS
 * posts to carry in their path (the 3DS Method notification, the challenge notification) and
 * what the challenge relay sends as `threeDSSessionData`. It names the transaction's guard object
 * and proves that this service issued it: `<object id>.<HMAC>`, 87 characters, so that nobody can
 * complete a method or fetch a result for a transaction they only guessed.
 *
 * The content of the ACS's posts is never trusted: the handle says which transaction, the 3DS
 * Server provider says what happened.
 */

/** Bytes of HMAC kept: 128 bits, plenty against forgery, short enough for a URL. */
const MAC_BYTES = 16;

async function macOf(key: Uint8Array<ArrayBuffer>, guardId: string): Promise<string> {
  return toBase64Url((await hmacSha256(key, `3ds-handle:${guardId}`)).slice(0, MAC_BYTES));
}

/** The handle of the transaction whose guard object has this id. */
export async function transactionHandle(key: Uint8Array<ArrayBuffer>, guardId: string): Promise<string> {
  return `${guardId}.${await macOf(key, guardId)}`;
}

/**
 * The guard object id a handle names, or undefined when this service did not issue it.
 *
 * @example
 * ```ts
 * await guardIdOfHandle(key, await transactionHandle(key, id)); // id
 * await guardIdOfHandle(key, `${id}.forged`); // undefined
 * ```
 */
export async function guardIdOfHandle(key: Uint8Array<ArrayBuffer>, handle: string): Promise<string | undefined> {
  const dot = handle.indexOf('.');
  if (dot <= 0 || handle.length > 200) return undefined;
  const guardId = handle.slice(0, dot);
  const expected = utf8(await macOf(key, guardId));
  const given = utf8(handle.slice(dot + 1));
  return expected.byteLength === given.byteLength && crypto.subtle.timingSafeEqual(expected, given)
    ? guardId
    : undefined;
}
