import { base64OfText, textOfBase64 } from '../bytes';
import type { CodeAttempt } from './challenge-rules';
import { derivedUuid, hmacSha256 } from './hmac-derived-values';

/**
 * The test ACS challenge (docs/threeds.md "Challenge"): references, the CReq payload and the
 * code. The attempt count and the result live in the transaction's Durable Object, which applies
 * the rules of src/threeds/challenge-rules.ts; nothing here touches storage.
 */

/** The one-time code that passes in `test`, where the page shows it. */
export const TEST_CHALLENGE_CODE = '1234';

/**
 * The code that passes a challenge. In `test`, the documented 1234. In `live` this test ACS has
 * no issuer to send a code to the cardholder, so it uses a per-challenge secret code (from the
 * JWT key) that nobody is told: a live challenge can only end as failed, never pass on a
 * published code.
 */
export async function challengeCode(
  environment: string,
  key: Uint8Array<ArrayBuffer>,
  reference: string,
): Promise<string> {
  if (environment === 'test') return TEST_CHALLENGE_CODE;
  const mac = new DataView((await hmacSha256(key, `challenge-code:${reference}`)).buffer);
  return String(mac.getUint32(0) % 1_000_000).padStart(6, '0');
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 20 random alphanumerics (docs/threeds.md "authenticate"), without modulo bias: bytes of 248 and over are skipped. */
export function newChallengeReference(): string {
  let out = '';
  while (out.length < 20) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      if (byte < 248 && out.length < 20) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

/** EMV 3DS challengeWindowSize codes for the windowSize names. */
export const WINDOW_CODES: Record<string, string> = {
  '250x400': '01',
  '390x400': '02',
  '500x600': '03',
  '600x400': '04',
  fullPage: '05',
};

/** Width and height in CSS pixels, or undefined for the full page. */
export function windowDimensions(windowSize: string): { width: number; height: number } | undefined {
  const m = /^(\d+)x(\d+)$/.exec(windowSize);
  return m ? { width: Number(m[1]), height: Number(m[2]) } : undefined;
}

/** The challenge request (CReq) that the `payload` field carries, base64-encoded. */
export async function challengePayload(
  key: Uint8Array<ArrayBuffer>,
  reference: string,
  version: string,
  windowSize: string,
): Promise<string> {
  const creq = {
    messageType: 'CReq',
    messageVersion: version,
    threeDSServerTransID: await derivedUuid(key, `creq-server:${reference}`),
    acsTransID: await derivedUuid(key, `creq-acs:${reference}`),
    challengeWindowSize: WINDOW_CODES[windowSize] ?? '02',
  };
  return base64OfText(JSON.stringify(creq));
}

/** Reads the window size name back from a CReq payload (base64 JSON); the default when unreadable. */
export function windowSizeOfPayload(payload: unknown): string {
  try {
    const creq = JSON.parse(textOfBase64(String(payload))) as { challengeWindowSize?: string };
    const entry = Object.entries(WINDOW_CODES).find(([, code]) => code === creq.challengeWindowSize);
    return entry?.[0] ?? '390x400';
  } catch {
    return '390x400';
  }
}

/** Judges a posted code: surrounding spaces are forgiven, nothing else. */
export function judgeCode(action: string, code: string, expected: string): CodeAttempt {
  if (action === 'cancel') return 'cancel';
  return code.trim() === expected ? 'right' : 'wrong';
}
