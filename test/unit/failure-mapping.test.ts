import { describe, expect, it } from 'vitest';
import { TokenKeyMissing } from '../../src/cards/card-crypto';
import { SettingsError } from '../../src/config/settings';
import { fail, failureOf, FailureError, type Failure } from '../../src/failures';
import { mapFailure } from '../../src/http/error-document';
import { failurePage } from '../../src/routes/threeds/failure-page';
import { StorageError } from '../../src/storage/storage-error';

/** One of every failure kind: the table below must list each (the mapper's switch is exhaustive). */
const EVERY_FAILURE: [Failure, number, string][] = [
  [{ kind: 'resourceNotFound' }, 404, 'resourceNotFound'],
  [{ kind: 'maximumUpdatesExceeded', retryAfter: 3600 }, 429, 'maximumUpdatesExceeded'],
  [{ kind: 'tooManyTokensForNamespace' }, 403, 'tooManyTokensForNamespace'],
  [{ kind: 'tokenizationNotEnabled' }, 500, 'tokenizationNotEnabled'],
  [{ kind: 'methodNotAllowed', allowed: ['POST'] }, 405, 'methodNotAllowed'],
  [{ kind: 'authorizationMissing' }, 401, 'headerIsMissing'],
  [{ kind: 'authorizationMalformed' }, 401, 'headerHasInvalidValue'],
  [{ kind: 'accessDenied' }, 401, 'accessDenied'],
  [{ kind: 'publishableKeyNotAllowed' }, 401, 'accessDenied'],
  [{ kind: 'originNotAllowed' }, 403, 'originIsNotAllowed'],
  [{ kind: 'tooManyRequests', retryAfter: 60 }, 429, 'tooManyRequests'],
  [{ kind: 'headerMissing', header: 'Accept' }, 400, 'headerIsMissing'],
  [{ kind: 'headerInvalid', header: 'Accept', status: 406, expected: 'x' }, 406, 'headerHasInvalidValue'],
  [{ kind: 'bodyTooLarge', limitBytes: 65536 }, 413, 'bodyIsTooLarge'],
  [{ kind: 'bodyEmpty' }, 400, 'bodyIsEmpty'],
  [{ kind: 'bodyNotJson' }, 400, 'bodyIsNotJson'],
  [{ kind: 'bodyIncomplete' }, 400, 'bodyIsNotJson'],
  [{ kind: 'bodyDoesNotMatchSchema', errors: [] }, 400, 'bodyDoesNotMatchSchema'],
  [{ kind: 'urlContainsInvalidValue', errors: [] }, 400, 'urlContainsInvalidValue'],
  [{ kind: 'entityNotConfigured' }, 400, 'entityIsNotConfigured'],
  [{ kind: 'merchantNotConfigured', feature: '3-D Secure' }, 400, 'merchantIsNotConfigured'],
  [{ kind: 'paymentInstrumentNotSupported' }, 400, 'paymentInstrumentIsNotSupported'],
  [{ kind: 'currencyNotSupported', currency: 'EUR' }, 400, 'currencyIsNotSupported'],
  [{ kind: 'underlyingPaymentInstrumentExpired' }, 400, 'underlyingPaymentInstrumentHasExpired'],
  [{ kind: 'binNotFound' }, 404, 'binNotFound'],
  [{ kind: 'tokenNotFound' }, 404, 'tokenNotFound'],
  [{ kind: 'unrecognizedCardBrand' }, 422, 'unrecognizedCardBrand'],
  [{ kind: 'challengeNotFound' }, 404, 'challengeNotFound'],
  [{ kind: 'transactionReferenceDuplicate' }, 400, 'transactionReferenceIsADuplicate'],
  [{ kind: 'sandboxNotEnabled' }, 403, 'sandboxIsNotEnabled'],
  [{ kind: 'storageUnavailable' }, 503, 'serviceUnavailable'],
  [{ kind: 'misconfigured', what: 'JWT_SIGNING_KEY is not set' }, 503, 'serviceUnavailable'],
  [{ kind: 'providerUnavailable' }, 503, 'serviceUnavailable'],
  [{ kind: 'providerMisconfigured', what: '3DS Server refused the API key' }, 500, 'internalErrorOccurred'],
  [{ kind: 'internal' }, 500, 'internalErrorOccurred'],
];

describe('the failure mapper (pure)', () => {
  it.each(EVERY_FAILURE)('maps %j to %i %s with a message for people', (failure, status, errorName) => {
    const mapped = mapFailure(failure);
    expect(mapped.status).toBe(status);
    expect(mapped.body.errorName).toBe(errorName);
    expect(mapped.body.message).toMatch(/\w/);
  });

  it('never sends what a misconfiguration is, only that there is one', () => {
    expect(JSON.stringify(mapFailure({ kind: 'misconfigured', what: 'JWT_SIGNING_KEY is not set' }))).not.toContain(
      'JWT_SIGNING_KEY',
    );
  });

  it('sends Retry-After with every 503 and 429, and WWW-Authenticate with every 401', () => {
    for (const [failure, status] of EVERY_FAILURE) {
      const { headers } = mapFailure(failure);
      expect(headers['Retry-After'] !== undefined).toBe(status === 503 || status === 429);
      expect(headers['WWW-Authenticate'] !== undefined).toBe(status === 401);
    }
  });
});

describe('the one classifier of exceptions (pure)', () => {
  it('takes the failure an exception carries, and calls anything else internal', () => {
    expect(failureOf(new StorageError('KV get token failed'))).toEqual({ kind: 'storageUnavailable' });
    expect(failureOf(new SettingsError(['JWT_SIGNING_KEY is not set']))).toEqual({
      kind: 'misconfigured',
      what: 'JWT_SIGNING_KEY is not set',
    });
    expect(failureOf(new TokenKeyMissing('k0'))).toEqual({
      kind: 'misconfigured',
      what: 'token key k0 is no longer configured',
    });
    expect(() => fail({ kind: 'bodyEmpty' })).toThrow(FailureError);
    expect(failureOf(new TypeError('x is undefined'))).toEqual({ kind: 'internal' });
    expect(failureOf('a string')).toEqual({ kind: 'internal' });
  });
});

describe('the same failure as a page (pure)', () => {
  it.each(EVERY_FAILURE)('answers %j with the status and Retry-After of the JSON answer', (failure) => {
    const json = mapFailure(failure);
    const page = failurePage(failure);
    expect(page.status).toBe(json.status);
    expect(page.retryAfter === undefined ? undefined : String(page.retryAfter)).toBe(
      json.status === 503 ? json.headers['Retry-After'] : undefined,
    );
    expect(page.html).not.toContain('JWT_SIGNING_KEY');
  });

  it('answers a missing token key as a 503 page, as the JSON APIs do', () => {
    expect(failurePage(failureOf(new TokenKeyMissing('k0'))).status).toBe(503);
  });
});
