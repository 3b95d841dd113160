import { describe, expect, it } from 'vitest';
import { FailureError, type Failure } from '../../src/failures';
import {
  acceptedVersion,
  CARD_BIN_API,
  checkHeaders,
  mediaTypeOf,
  THREE_DS_API,
  TOKENS_API,
  type ApiProfile,
} from '../../src/http/api-headers';

/**
 * Whether an Accept header value allows `mediaType` (q=0 entries excluded): acceptedVersion over
 * a one-version API of that media type.
 *
 * @example
 * ```ts
 * acceptAllows('text/html, application/*;q=0.8', 'application/json', true); // true
 * acceptAllows('application/json;q=0', 'application/json', true); // false
 * ```
 */
function acceptAllows(accept: string, mediaType: string, wildcards: boolean): boolean {
  const wanted = mediaType.toLowerCase();
  const api: ApiProfile = { ...CARD_BIN_API, versions: [{ version: 1, mediaType: wanted }], mediaType: wanted };
  return acceptedVersion(accept, { ...api, acceptWildcards: wildcards }) !== undefined;
}

/** The failure checkHeaders ends the request with, or undefined when the headers pass. */
function failureOf(headers: Record<string, string>, api = THREE_DS_API, hasBody = true): Failure | undefined {
  try {
    checkHeaders(new Headers(headers), api, hasBody);
    return undefined;
  } catch (e) {
    if (e instanceof FailureError) return e.failure;
    throw e;
  }
}

const THREEDS = 'application/vnd.worldpay.verifications.customers-v1.hal+json';

describe('Accept negotiation (pure)', () => {
  it.each<[string, string, boolean, boolean]>([
    ['application/json', 'application/json', true, true],
    ['APPLICATION/JSON; charset=utf-8', 'application/json', true, true],
    ['text/html, application/json;q=0.5', 'application/json', true, true],
    ['*/*', 'application/json', true, true],
    ['application/*', 'application/json', true, true],
    ['*/*', THREEDS, false, false],
    ['application/json;q=0', 'application/json', true, false],
    ['application/json;q=0.000', 'application/json', true, false],
    ['application/json;q=0.001', 'application/json', true, true],
    ['text/html', 'application/json', true, false],
    ['', 'application/json', true, false],
  ])('Accept %j allows %s (wildcards %s): %s', (accept, mediaType, wildcards, allowed) => {
    expect(acceptAllows(accept, mediaType, wildcards)).toBe(allowed);
  });

  it('reads the bare media type of a Content-Type, in lower case', () => {
    expect(mediaTypeOf(' Application/JSON ; charset=UTF-8')).toBe('application/json');
  });
});

describe('the header rules of each API (pure)', () => {
  it('checks Accept (406), then Content-Type (415), then the exact headers (400)', () => {
    expect(failureOf({ Accept: 'text/html', 'Content-Type': 'text/plain' })).toMatchObject({
      kind: 'headerInvalid',
      header: 'Accept',
      status: 406,
    });
    expect(failureOf({ Accept: THREEDS, 'Content-Type': 'text/plain' })).toMatchObject({
      header: 'Content-Type',
      status: 415,
    });
    expect(failureOf({ 'Content-Type': 'application/json' }, CARD_BIN_API)).toEqual({
      kind: 'headerMissing',
      header: 'WP-Api-Version',
    });
    expect(failureOf({ 'Content-Type': 'application/json', 'WP-Api-Version': '2' }, CARD_BIN_API)).toMatchObject({
      kind: 'headerInvalid',
      header: 'WP-Api-Version',
      status: 400,
    });
  });

  it('requires Accept on the versioned APIs and not on the card BIN API', () => {
    expect(failureOf({ 'Content-Type': THREEDS })).toEqual({ kind: 'headerMissing', header: 'Accept' });
    expect(failureOf({ 'Content-Type': 'application/json', 'WP-Api-Version': '1' }, CARD_BIN_API)).toBeUndefined();
  });

  it('takes no Content-Type where there is no body (GET and DELETE on tokens)', () => {
    const TOKENS = 'application/vnd.worldpay.tokens-v1.hal+json';
    expect(failureOf({ Accept: TOKENS }, TOKENS_API, false)).toBeUndefined();
    expect(failureOf({ Accept: TOKENS }, TOKENS_API, true)).toEqual({ kind: 'headerMissing', header: 'Content-Type' });
  });
});
