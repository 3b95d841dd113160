import type { Brand } from '../bin/model';
import { toBase64 } from '../bytes';
import { derivedAuthenticationValue, derivedUuid } from './derived';

/**
 * The `authentication` object of 3DS answers (CONTRACT.md §6.2): ECI per brand, the CAVV
 * (`authenticationValue`) and transaction ids: fresh for an answer the transaction's guard keeps,
 * derived (see derived.ts) for one that must repeat without being stored.
 */

/** Outcomes on the wire. `authenticatedAttempted` is `authenticated` with an attempted ECI. */
export type WireOutcome =
  'authenticated' | 'authenticationFailed' | 'unavailable' | 'bypassed' | 'notEnrolled' | 'signatureFailed';

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

/** The ids and CAVV of one answer, derived from a seed that names the request and the step. */
export interface AnswerIds {
  transactionId: string;
  acsTransactionId: string;
  authenticationValue: string;
}

/** Fresh ids and a fresh CAVV (base64 of 20 random bytes), for an answer the guard will keep. */
export function randomAnswerIds(): AnswerIds {
  return {
    transactionId: crypto.randomUUID(),
    acsTransactionId: crypto.randomUUID(),
    authenticationValue: toBase64(crypto.getRandomValues(new Uint8Array(20))),
  };
}

/** Ids and CAVV derived from a seed, for an answer that is not stored but must repeat. */
export async function answerIds(key: Uint8Array<ArrayBuffer>, seed: string): Promise<AnswerIds> {
  return {
    transactionId: await derivedUuid(key, `transaction-id:${seed}`),
    acsTransactionId: await derivedUuid(key, `acs-transaction-id:${seed}`),
    authenticationValue: await derivedAuthenticationValue(key, `cavv:${seed}`),
  };
}

/** The wire outcome and `authentication` object for a result. */
export function authenticationFor(
  kind: ResultKind,
  brands: readonly Brand[],
  version: string,
  ids: AnswerIds,
): { outcome: WireOutcome; authentication: Authentication } {
  const { transactionId } = ids;
  switch (kind) {
    case 'authenticated':
    case 'authenticatedAttempted': {
      const attempted = kind === 'authenticatedAttempted';
      return {
        outcome: 'authenticated',
        authentication: {
          version,
          eci: eciFor(brands, attempted ? 'attempted' : 'authenticated'),
          authenticationValue: ids.authenticationValue,
          transactionId,
          acsTransactionId: ids.acsTransactionId,
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
      return {
        outcome: 'bypassed',
        authentication: { version, eci: eciFor(brands, 'none'), transactionId, enrolled: 'B' },
      };
    case 'notEnrolled':
      return { outcome: 'notEnrolled', authentication: { version, eci: eciFor(brands, 'none'), enrolled: 'N' } };
    case 'signatureFailed':
      return { outcome: 'signatureFailed', authentication: { version, transactionId, status: 'N', enrolled: 'Y' } };
  }
}

/** The wire answer: `{outcome, transactionReference, authentication}`, in Worldpay's field order. */
export function answerOf(
  transactionReference: string,
  result: { outcome: WireOutcome; authentication: Authentication },
): { outcome: WireOutcome; transactionReference: string; authentication: Authentication } {
  return { outcome: result.outcome, transactionReference, authentication: result.authentication };
}
