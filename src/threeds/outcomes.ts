import type { Brand } from '../bin/model';
import { hmacSha256 } from './hmac';

/**
 * The `authentication` object of 3DS answers (CONTRACT.md §6.2): ECI per brand, a fresh CAVV
 * (`authenticationValue`) and transaction ids.
 */

/** Outcomes on the wire. `authenticatedAttempted` is `authenticated` with an attempted ECI. */
export type WireOutcome =
  | 'authenticated' | 'authenticationFailed' | 'unavailable' | 'bypassed' | 'notEnrolled'
  | 'signatureFailed';

export type ResultKind = WireOutcome | 'authenticatedAttempted';

export interface Authentication {
  version: string;
  eci?: string;
  authenticationValue?: string;
  transactionId?: string;
  acsTransactionId?: string;
  status?: 'Y' | 'A' | 'N' | 'U' | 'R';
  enrolled?: 'Y' | 'N' | 'U' | 'B';
}

/** Mastercard-family ECIs (02/01/00) versus everyone else's (05/06/07). */
export function eciFor(brands: readonly Brand[], level: 'authenticated' | 'attempted' | 'none'): string {
  const mastercard = brands.some((b) => b === 'mastercard' || b === 'maestro');
  const table = mastercard
    ? { authenticated: '02', attempted: '01', none: '00' }
    : { authenticated: '05', attempted: '06', none: '07' };
  return table[level];
}

/** Base64 of 20 random bytes: the 28-character CAVV/AAV. */
export function newAuthenticationValue(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(20))));
}

/**
 * A UUID v4-shaped id derived from a key and a seed: the same seed gives the same id, so an
 * answer that is not stored can still be repeated identically.
 */
export async function stableUuid(key: Uint8Array, seed: string): Promise<string> {
  const b = (await hmacSha256(key, seed)).slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The wire outcome and `authentication` object for a result (fresh ids unless one is given). */
export function authenticationFor(
  kind: ResultKind, brands: readonly Brand[], version: string, transactionId: string = crypto.randomUUID(),
): { outcome: WireOutcome; authentication: Authentication } {
  switch (kind) {
    case 'authenticated':
    case 'authenticatedAttempted': {
      const attempted = kind === 'authenticatedAttempted';
      return {
        outcome: 'authenticated',
        authentication: {
          version,
          eci: eciFor(brands, attempted ? 'attempted' : 'authenticated'),
          authenticationValue: newAuthenticationValue(),
          transactionId,
          acsTransactionId: crypto.randomUUID(),
          status: attempted ? 'A' : 'Y',
          enrolled: 'Y',
        },
      };
    }
    case 'authenticationFailed':
      return {
        outcome: 'authenticationFailed',
        authentication: { version, eci: eciFor(brands, 'none'), transactionId, status: 'N', enrolled: 'Y' },
      };
    case 'unavailable':
      return { outcome: 'unavailable', authentication: { version, transactionId, status: 'U', enrolled: 'U' } };
    case 'bypassed':
      return { outcome: 'bypassed', authentication: { version, eci: eciFor(brands, 'none'), transactionId, enrolled: 'B' } };
    case 'notEnrolled':
      return { outcome: 'notEnrolled', authentication: { version, eci: eciFor(brands, 'none'), enrolled: 'N' } };
    case 'signatureFailed':
      return { outcome: 'signatureFailed', authentication: { version, transactionId, status: 'N', enrolled: 'Y' } };
  }
}

/** The wire answer: `{outcome, transactionReference, authentication}`, in Worldpay's field order. */
export function answerOf(
  transactionReference: string, result: { outcome: WireOutcome; authentication: Authentication },
): { outcome: WireOutcome; transactionReference: string; authentication: Authentication } {
  return { outcome: result.outcome, transactionReference, authentication: result.authentication };
}
