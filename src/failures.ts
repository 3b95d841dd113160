/**
 * Every way a request can fail, as one tagged union shared by every layer: domain steps return
 * these (see {@link Result}), the HTTP layer maps them to the wire in one exhaustive switch
 * (`src/http/errors.ts`), so adding a kind without mapping it fails to compile.
 */

/** One item of `validationErrors` (SPEC.md §7.4). */
export interface FieldError {
  errorName: string;
  message: string;
  jsonPath: string;
}

export type Failure =
  | { kind: 'resourceNotFound' }
  | { kind: 'methodNotAllowed'; allowed: readonly string[] }
  | { kind: 'authorizationMissing' }
  | { kind: 'authorizationMalformed' }
  | { kind: 'accessDenied' }
  /** A publishable key sent to an endpoint other than the lookup by BIN prefix. */
  | { kind: 'publishableKeyNotAllowed' }
  /** A publishable key used from an origin it does not list, or a preflight from such an origin. */
  | { kind: 'originNotAllowed' }
  /**
   * Too many failed logins from this address or for this username, or too many lookups with one
   * publishable key from one address: wait `retryAfter` seconds.
   */
  | { kind: 'tooManyRequests'; retryAfter: number; what?: 'lookups' | 'simulated' }
  | { kind: 'headerMissing'; header: string }
  /** 406 for Accept, 415 for Content-Type, 400 for the others. */
  | { kind: 'headerInvalid'; header: string; status: 400 | 406 | 415; expected: string }
  | { kind: 'bodyTooLarge'; limitBytes: number }
  | { kind: 'bodyEmpty' }
  | { kind: 'bodyNotJson' }
  /** The body stopped arriving before its end (a cut-off upload): bodyIsNotJson, not a 500. */
  | { kind: 'bodyIncomplete' }
  | { kind: 'bodyDoesNotMatchSchema'; errors: readonly FieldError[] }
  | { kind: 'urlContainsInvalidValue'; errors: readonly FieldError[] }
  | { kind: 'entityNotConfigured' }
  | { kind: 'merchantNotConfigured'; feature: string }
  | { kind: 'paymentInstrumentNotSupported' }
  | { kind: 'currencyNotSupported'; currency: string }
  | { kind: 'underlyingPaymentInstrumentExpired' }
  | { kind: 'binNotFound' }
  | { kind: 'tokenNotFound' }
  /** POST /tokens of a number no card scheme claims (Worldpay's 422). */
  | { kind: 'unrecognizedCardBrand' }
  | { kind: 'challengeNotFound' }
  /** A sandbox control called in `live`. */
  | { kind: 'sandboxNotEnabled' }
  | { kind: 'storageUnavailable' }
  | { kind: 'misconfigured'; what: string }
  | { kind: 'internal' };

/** What a domain step returns: its answer, or the failure that ends the request. */
export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function failed<T = never>(failure: Failure): Result<T> {
  return { ok: false, failure };
}

/** One field error as a failure: bodyDoesNotMatchSchema with that single item. */
export function fieldFailure<T = never>(errorName: string, message: string, jsonPath: string): Result<T> {
  return failed({ kind: 'bodyDoesNotMatchSchema', errors: [{ errorName, message, jsonPath }] });
}
