import { isMastercardFamily, type Brand } from '../bin/model';
import { toBase64 } from '../bytes';
import { exemptionEci, type ExemptionResult } from './exemptions';
import { derivedAuthenticationValue, derivedUuid } from './hmac-derived-values';

/**
 * The answers of authenticate and verification in Worldpay's shape (docs/threeds.md "Outcomes"; Worldpay's
 * published 3DS document): `acsTransactionId`, `status` and `enrolled` at the top level, and an
 * `authentication` object of `version`, `eci`, `authenticationValue` and `transactionId` only.
 * Ids and the CAVV are fresh for an answer the transaction's owner keeps, derived (see
 * hmac-derived-values.ts) for one that must repeat without being stored.
 */

/** Outcomes on the wire. `authenticatedAttempted` is `authenticated` with an attempted ECI. */
export type WireOutcome =
  'authenticated' | 'authenticationFailed' | 'unavailable' | 'bypassed' | 'notEnrolled' | 'signatureFailed';

export type ResultKind = WireOutcome | 'authenticatedAttempted' | 'exempted' | 'dataOnly';

export interface Authentication {
  version: string;
  eci?: string;
  authenticationValue?: string;
  transactionId?: string;
  /** Live only, when the issuer gave one: the EMV transStatusReason. */
  statusReason?: string;
  /** Live only, when the issuer gave one: the EMV challengeCancel. */
  cancellationIndicator?: string;
  /** Live only (2.3.1), when the ACS gave one: the EMV transChallengeExemption. */
  exemption?: string;
}

/** A 3DS answer, fields in Worldpay's order. */
export interface ThreeDsAnswer {
  outcome: WireOutcome;
  transactionReference: string;
  acsTransactionId?: string;
  /** The EMV transaction status: Y, A (attempted), N, U; in `live` also I (exemption) and R (rejected). */
  status?: 'Y' | 'A' | 'N' | 'U' | 'I' | 'R';
  enrolled?: 'Y' | 'N' | 'U' | 'B';
  authentication?: Authentication;
  /** A data-only authentication: nothing was authenticated, the issuer has the data (an extension). */
  dataOnly?: true;
  /** The exemption asked for, what was sent and what the issuer did (an extension; src/threeds/exemptions.ts). */
  exemption?: ExemptionResult;
  _links?: Record<string, { href: string }>;
}

/** Mastercard-family ECIs (02/01/00) versus everyone else's (05/06/07). */
export function eciFor(brands: readonly Brand[], level: 'authenticated' | 'attempted' | 'none'): string {
  const table = isMastercardFamily(brands)
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

/** Fresh ids and a fresh CAVV (base64 of 20 random bytes), for an answer the owner will keep. */
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

export interface AnswerContext {
  transactionReference: string;
  brands: readonly Brand[];
  version: string;
  ids: AnswerIds;
  /** Which step answers: verification's `unavailable` has no `enrolled` and links both steps. */
  step: 'authenticate' | 'verification';
  /** Base of the `_links`: `{base}/verifications/customers/3ds`. */
  apiBase: string;
}

/**
 * `unavailable`, in `test` and in `live` alike: verification's has no `enrolled` and links both
 * steps.
 */
export function unavailableFor(c: Pick<AnswerContext, 'transactionReference' | 'step' | 'apiBase'>): ThreeDsAnswer {
  const authenticateLink = { '3ds:authenticate': { href: `${c.apiBase}/authenticate` } };
  const head = { transactionReference: c.transactionReference };
  return c.step === 'authenticate'
    ? { outcome: 'unavailable', ...head, status: 'U', enrolled: 'U', _links: authenticateLink }
    : {
        outcome: 'unavailable',
        ...head,
        status: 'U',
        _links: { ...authenticateLink, '3ds:verify': { href: `${c.apiBase}/verification` } },
      };
}

/**
 * `decoupled` (an extension, docs/threeds.md "Decoupled"): the issuer authenticates the
 * cardholder out of band until `expiresAt`; authenticate's answer, and verification's until the
 * result is known.
 */
export function decoupledAnswer(c: {
  transactionReference: string;
  version: string;
  reference: string;
  expiresAt: number;
  apiBase: string;
}): Record<string, unknown> {
  return {
    outcome: 'decoupled',
    transactionReference: c.transactionReference,
    authentication: { version: c.version },
    challenge: { reference: c.reference },
    decoupled: { expiresAt: new Date(c.expiresAt).toISOString() },
    _links: { '3ds:verify': { href: `${c.apiBase}/verification` } },
  };
}

/** An answer with extension fields in their place: after Worldpay's own, before `_links`. */
export function beforeLinks<T extends object>(answer: T, fields: Record<string, unknown>): T {
  const { _links, ...rest } = answer as { _links?: unknown };
  return { ...rest, ...fields, ...(_links !== undefined ? { _links } : {}) } as T;
}

/** An answer with the exemption's result, in its place (before `_links`). */
export function withExemption<T extends object>(answer: T, exemption: ExemptionResult | undefined): T {
  return exemption ? beforeLinks(answer, { exemption }) : answer;
}

/** A data-only authentication: `unavailable` (nothing was authenticated) with `dataOnly: true`. */
export function dataOnlyFor(c: Pick<AnswerContext, 'transactionReference' | 'step' | 'apiBase'>): ThreeDsAnswer {
  return beforeLinks(unavailableFor(c), { dataOnly: true });
}

/** The wire answer for a result, shaped per outcome as Worldpay's document and examples show it. */
export function answerFor(kind: ResultKind, c: AnswerContext): ThreeDsAnswer {
  const { version, ids } = c;
  const head = { transactionReference: c.transactionReference };
  const none = eciFor(c.brands, 'none');
  const authenticateLink = { '3ds:authenticate': { href: `${c.apiBase}/authenticate` } };
  switch (kind) {
    case 'authenticated':
    case 'authenticatedAttempted': {
      const attempted = kind === 'authenticatedAttempted';
      return {
        outcome: 'authenticated',
        ...head,
        acsTransactionId: ids.acsTransactionId,
        status: attempted ? 'A' : 'Y',
        enrolled: 'Y',
        authentication: {
          version,
          eci: eciFor(c.brands, attempted ? 'attempted' : 'authenticated'),
          authenticationValue: ids.authenticationValue,
          transactionId: ids.transactionId,
        },
      };
    }
    case 'authenticationFailed':
      return {
        outcome: 'authenticationFailed',
        ...head,
        acsTransactionId: ids.acsTransactionId,
        status: 'N',
        enrolled: 'Y',
        authentication: { version, eci: none, transactionId: ids.transactionId },
        _links: authenticateLink,
      };
    case 'exempted':
      // Granted, nothing authenticated: the exemption's ECI and no authentication value.
      return {
        outcome: 'authenticated',
        ...head,
        acsTransactionId: ids.acsTransactionId,
        status: 'I',
        enrolled: 'Y',
        authentication: { version, eci: exemptionEci(c.brands, false), transactionId: ids.transactionId },
      };
    case 'dataOnly':
      return dataOnlyFor(c);
    case 'unavailable':
      return unavailableFor(c);
    case 'bypassed':
      return {
        outcome: 'bypassed',
        ...head,
        acsTransactionId: ids.acsTransactionId,
        status: 'Y',
        enrolled: 'B',
        authentication: { version, eci: none, transactionId: ids.transactionId },
      };
    case 'notEnrolled':
      return { outcome: 'notEnrolled', ...head, enrolled: 'N', authentication: { version, eci: none } };
    case 'signatureFailed':
      return { outcome: 'signatureFailed', ...head, authentication: { version, eci: none }, _links: authenticateLink };
  }
}

/**
 * The `challenged` answer of an app's challenge: the payload for the app's SDK under the
 * challenge's reference (no `url`, no `jwt`: no page), and where to verify it.
 */
export function appChallengedAnswer(o: {
  transactionReference: string;
  version: string;
  reference: string;
  payload: string;
  apiBase: string;
}): Record<string, unknown> {
  return {
    outcome: 'challenged',
    transactionReference: o.transactionReference,
    authentication: { version: o.version },
    challenge: { reference: o.reference, payload: o.payload },
    _links: { '3ds:verify': { href: `${o.apiBase}/verification` } },
  };
}
