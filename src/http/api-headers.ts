import { fail } from '../failures';
import { CARD_BIN_MEDIA_TYPE, THREE_DS_MEDIA_TYPE, TOKENS_MEDIA_TYPE } from './media-types';

/** The header rules of one API (docs/pipeline.md step 3), and Accept negotiation. */
export interface ApiProfile {
  name: 'cardBin' | 'threeDS' | 'tokens';
  /** The media type of this API's responses, errors included. */
  mediaType: string;
  /** Accept must allow mediaType; when `acceptRequired`, a missing Accept is an error. */
  acceptRequired: boolean;
  /** Whether wildcards (`*` / `application/*`) in Accept are good enough. */
  acceptWildcards: boolean;
  /** Content-Type required on requests with a body. */
  contentType: string;
  /** Other headers that must be present with exactly this value. */
  exactHeaders: Readonly<Record<string, string>>;
  /** Headers every answer of this API carries. */
  responseHeaders?: Readonly<Record<string, string>>;
  /** Every answer names the BIN data that answered it (`Bin-Data-Version`, docs/card-bin.md). */
  namesBinDataVersion?: boolean;
}

export const CARD_BIN_API: ApiProfile = {
  name: 'cardBin',
  mediaType: CARD_BIN_MEDIA_TYPE,
  acceptRequired: false,
  acceptWildcards: true,
  contentType: CARD_BIN_MEDIA_TYPE,
  exactHeaders: { 'WP-Api-Version': '1' },
  // Worldpay's answers name the version that answered; ours also name the BIN data that did
  // (its layers, their SHA-256 prefixes, the build time: docs/bin-data.md "Provenance").
  responseHeaders: { 'WP-Api-Version': '1' },
  namesBinDataVersion: true,
};

export const THREE_DS_API: ApiProfile = {
  name: 'threeDS',
  mediaType: THREE_DS_MEDIA_TYPE,
  acceptRequired: true,
  acceptWildcards: false,
  contentType: THREE_DS_MEDIA_TYPE,
  exactHeaders: {},
};

export const TOKENS_API: ApiProfile = {
  name: 'tokens',
  mediaType: TOKENS_MEDIA_TYPE,
  acceptRequired: true,
  acceptWildcards: false,
  contentType: TOKENS_MEDIA_TYPE,
  exactHeaders: {},
};

/** The bare media type of a header value: lower case, parameters (charset...) dropped. */
export function mediaTypeOf(value: string): string {
  return value.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Whether an Accept header value allows `mediaType` (q=0 entries excluded).
 *
 * @example
 * ```ts
 * acceptAllows('text/html, application/*;q=0.8', 'application/json', true); // true
 * acceptAllows('application/json;q=0', 'application/json', true); // false
 * ```
 */
export function acceptAllows(accept: string, mediaType: string, wildcards: boolean): boolean {
  const wanted = mediaType.toLowerCase();
  const [type] = wanted.split('/');
  return accept.split(',').some((entry) => {
    const [range = '', ...params] = entry.split(';').map((p) => p.trim().toLowerCase());
    if (params.some((p) => /^q=0(\.0*)?$/.test(p))) return false;
    if (range === wanted) return true;
    return wildcards && (range === '*/*' || range === `${type}/*`);
  });
}

/**
 * Enforces the API's header rules, in the order Accept, Content-Type, then exact headers.
 * `hasBody` is false for GET and DELETE, which carry no Content-Type.
 */
export function checkHeaders(headers: Headers, api: ApiProfile, hasBody: boolean): void {
  const accept = headers.get('Accept');
  if (accept === null) {
    if (api.acceptRequired) fail({ kind: 'headerMissing', header: 'Accept' });
  } else if (!acceptAllows(accept, api.mediaType, api.acceptWildcards)) {
    const expected = api.acceptWildcards
      ? `a value that allows ${api.mediaType}`
      : `${api.mediaType}, named explicitly (this versioned API does not answer to wildcards such as */*)`;
    fail({ kind: 'headerInvalid', header: 'Accept', status: 406, expected });
  }
  if (hasBody) {
    const contentType = headers.get('Content-Type');
    if (contentType === null) fail({ kind: 'headerMissing', header: 'Content-Type' });
    if (mediaTypeOf(contentType) !== api.contentType) {
      fail({ kind: 'headerInvalid', header: 'Content-Type', status: 415, expected: api.contentType });
    }
  }
  for (const [name, expected] of Object.entries(api.exactHeaders)) {
    const value = headers.get(name);
    if (value === null) fail({ kind: 'headerMissing', header: name });
    if (value.trim() !== expected) fail({ kind: 'headerInvalid', header: name, status: 400, expected });
  }
}
