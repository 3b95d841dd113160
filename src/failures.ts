/**
 * Every way a request can fail, as one tagged union shared by every layer (docs/errors.md).
 * Domain steps return these (see {@link Result}); the layers below throw them inside a
 * {@link FailureError} (storage that fails, a missing secret); the HTTP layer turns each into the
 * wire form in one exhaustive switch (`src/http/error-document.ts`), so that adding a kind without
 * mapping it fails to compile. {@link failureOf} is the one classifier of exceptions, for the JSON
 * APIs and the HTML pages alike.
 */

/** One item of `validationErrors` (docs/errors.md "Field errors"). */
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
  /** A token updated 50 times in the last 30 days (Worldpay's 429); the next is possible in `retryAfter` s. */
  | { kind: 'maximumUpdatesExceeded'; retryAfter: number }
  /** A 17th card in a namespace (Worldpay's 403). */
  | { kind: 'tooManyTokensForNamespace' }
  /** An 11th event endpoint of a merchant (docs/events.md "Endpoints"). */
  | { kind: 'tooManyEndpoints' }
  /**
   * Tokens v3: POST /tokens from an entity that may not tokenize (not PCI compliant), Worldpay's
   * v3 500; versions 1 and 2 answer merchantIsNotConfigured (src/tokens/token-versions.ts).
   */
  | { kind: 'tokenizationNotEnabled' }
  | { kind: 'challengeNotFound' }
  /**
   * 3DS v2 and v3: a different authenticate body under a transactionReference already
   * authenticated (v1 answers outcome `unavailable` instead).
   */
  | { kind: 'transactionReferenceDuplicate' }
  /** A sandbox control called in `live`. */
  | { kind: 'sandboxNotEnabled' }
  /** KV or a Durable Object failed, timed out or hung: 503 with Retry-After. */
  | { kind: 'storageUnavailable' }
  /** A setting or secret is missing or malformed (`what` is logged, never sent): 503. */
  | { kind: 'misconfigured'; what: string }
  /**
   * The 3DS Server provider is unreachable, failing or past its deadline before anything was
   * decided there: 503 with Retry-After, nothing stored.
   */
  | { kind: 'providerUnavailable' }
  /** The 3DS Server provider refused this service's own credentials (`what` is logged): 500. */
  | { kind: 'providerMisconfigured'; what: string }
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

/**
 * An exception that carries its failure. `fail` throws it to end a request; the platform
 * failures of the layers below extend it (`StorageError`, `SettingsError`, `TokenKeyMissing`),
 * so that the HTTP layer classifies every exception without knowing those classes. Its message
 * is for the log only, never sent.
 */
export class FailureError extends Error {
  constructor(
    readonly failure: Failure,
    message: string = failure.kind,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FailureError';
  }
}

/** Ends the request with the given failure. */
export function fail(failure: Failure): never {
  throw new FailureError(failure);
}

/** The value of a domain result, or ends the request with its failure. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) fail(result.failure);
  return result.value;
}

/**
 * The one classifier of exceptions, for the JSON APIs and the HTML pages alike: a
 * {@link FailureError} is its failure; anything else is a bug, answered 500 internalErrorOccurred.
 *
 * @example
 * ```ts
 * failureOf(new StorageError('KV get token failed')); // { kind: 'storageUnavailable' }
 * failureOf(new TypeError('x is undefined')); // { kind: 'internal' }
 * ```
 */
export function failureOf(e: unknown): Failure {
  return e instanceof FailureError ? e.failure : { kind: 'internal' };
}
