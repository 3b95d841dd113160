import { fail } from '../failures';
import {
  CARD_BIN_MEDIA_TYPE,
  EVENTS_MEDIA_TYPE,
  THREE_DS_MEDIA_TYPES,
  TOKENS_MEDIA_TYPES,
  type ApiVersion,
} from '../media-types';

export type { ApiVersion } from '../media-types';

/** One version of an API and the media type that names it. */
export interface ApiVersionType {
  version: ApiVersion;
  mediaType: string;
}

/** The header rules of one API (docs/pipeline.md step 3), and version negotiation. */
export interface ApiProfile {
  name: 'cardBin' | 'threeDS' | 'tokens' | 'events';
  /** The versions this API speaks, each with its media type; the first (version 1) is the default. */
  versions: readonly ApiVersionType[];
  /** The default version's media type: the answers' when Accept picks no version. */
  mediaType: string;
  /** Accept must allow one of the media types; when `acceptRequired`, a missing Accept is an error. */
  acceptRequired: boolean;
  /** Whether wildcards (`*` / `application/*`) in Accept are good enough (they allow the default version). */
  acceptWildcards: boolean;
  /** Other headers that must be present with exactly this value. */
  exactHeaders: Readonly<Record<string, string>>;
  /** Headers every answer of this API carries. */
  responseHeaders?: Readonly<Record<string, string>>;
  /** Every answer names the BIN data that answered it (`Bin-Data-Version`, docs/card-bin.md). */
  namesBinDataVersion?: boolean;
}

function versionsOf(types: Readonly<Record<ApiVersion, string>>): ApiVersionType[] {
  return ([1, 2, 3] as const).map((version) => ({ version, mediaType: types[version] }));
}

export const CARD_BIN_API: ApiProfile = {
  name: 'cardBin',
  versions: [{ version: 1, mediaType: CARD_BIN_MEDIA_TYPE }],
  mediaType: CARD_BIN_MEDIA_TYPE,
  acceptRequired: false,
  acceptWildcards: true,
  exactHeaders: { 'WP-Api-Version': '1' },
  // Worldpay's answers name the version that answered; ours also name the BIN data that did
  // (its layers, their SHA-256 prefixes, the build time: docs/bin-data.md "Provenance").
  responseHeaders: { 'WP-Api-Version': '1' },
  namesBinDataVersion: true,
};

export const THREE_DS_API: ApiProfile = {
  name: 'threeDS',
  versions: versionsOf(THREE_DS_MEDIA_TYPES),
  mediaType: THREE_DS_MEDIA_TYPES[1],
  acceptRequired: true,
  acceptWildcards: false,
  exactHeaders: {},
};

export const TOKENS_API: ApiProfile = {
  name: 'tokens',
  versions: versionsOf(TOKENS_MEDIA_TYPES),
  mediaType: TOKENS_MEDIA_TYPES[1],
  acceptRequired: true,
  acceptWildcards: false,
  exactHeaders: {},
};

/**
 * The events API (docs/events.md): this service's own, not Worldpay's, so plain JSON, one version,
 * and an Accept that is optional (and may be a wildcard), as the Card BIN API's.
 */
export const EVENTS_API: ApiProfile = {
  name: 'events',
  versions: [{ version: 1, mediaType: EVENTS_MEDIA_TYPE }],
  mediaType: EVENTS_MEDIA_TYPE,
  acceptRequired: false,
  acceptWildcards: true,
  exactHeaders: {},
};

/** The media type of a version of the API (the default's for a version it does not speak). */
export function mediaTypeFor(api: ApiProfile, version: ApiVersion): string {
  return api.versions.find((v) => v.version === version)?.mediaType ?? api.mediaType;
}

/** The bare media type of a header value: lower case, parameters (charset...) dropped. */
export function mediaTypeOf(value: string): string {
  return value.split(';', 1)[0]!.trim().toLowerCase();
}

/** The weight of an Accept entry: its `q` (1 when absent or not a number). */
function weightOf(params: readonly string[]): number {
  const q = params.find((p) => /^q\s*=/.test(p));
  if (q === undefined) return 1;
  const weight = Number(q.slice(q.indexOf('=') + 1).trim());
  return Number.isNaN(weight) ? 1 : weight;
}

/**
 * The version an Accept header value picks, or undefined when it allows none: among its entries
 * that allow one of the API's media types (named exactly, or by a wildcard where the API takes
 * them, which stands for the default version), the highest `q` wins, then the first; an entry
 * with `q=0` allows nothing. Parameters other than `q` are ignored.
 *
 * @example
 * ```ts
 * acceptedVersion('application/vnd.worldpay.tokens-v1.hal+json;q=0.5, application/vnd.worldpay.tokens-v3.hal+json', TOKENS_API); // 3
 * acceptedVersion('*\/*', TOKENS_API); // undefined: wildcards do not count on a versioned API
 * ```
 */
export function acceptedVersion(accept: string, api: ApiProfile): ApiVersion | undefined {
  let best: { version: ApiVersion; weight: number } | undefined;
  for (const entry of accept.split(',')) {
    const [range = '', ...params] = entry.split(';').map((p) => p.trim().toLowerCase());
    const weight = weightOf(params);
    if (!(weight > 0)) continue;
    const named = api.versions.find((v) => v.mediaType === range)?.version;
    const [type] = api.mediaType.split('/');
    const wildcard = api.acceptWildcards && (range === '*/*' || range === `${type}/*`);
    const version = named ?? (wildcard ? api.versions[0]!.version : undefined);
    if (version !== undefined && (best === undefined || weight > best.weight)) best = { version, weight };
  }
  return best?.version;
}

/**
 * The version the answer is written in, without judging the headers: the one Accept picks, else
 * the default. Answers given before the headers are checked (401, 405) and errors of negotiation
 * use it, so that a client gets its own version wherever its Accept says which.
 */
export function answerVersion(headers: Headers, api: ApiProfile): ApiVersion {
  const accept = headers.get('Accept');
  return (accept === null ? undefined : acceptedVersion(accept, api)) ?? api.versions[0]!.version;
}

/**
 * Enforces the API's header rules, in the order Accept, Content-Type, their versions, then exact
 * headers, and returns the negotiated version. `hasBody` is false for GET and DELETE, which carry
 * no Content-Type.
 */
export function checkHeaders(headers: Headers, api: ApiProfile, hasBody: boolean): ApiVersion {
  const accept = headers.get('Accept');
  let accepted: ApiVersion | undefined;
  if (accept === null) {
    if (api.acceptRequired) fail({ kind: 'headerMissing', header: 'Accept' });
  } else {
    accepted = acceptedVersion(accept, api);
    if (accepted === undefined)
      fail({ kind: 'headerInvalid', header: 'Accept', status: 406, expected: expectedAccept(api) });
  }
  let sent: ApiVersion | undefined;
  if (hasBody) {
    const contentType = headers.get('Content-Type');
    if (contentType === null) fail({ kind: 'headerMissing', header: 'Content-Type' });
    sent = api.versions.find((v) => v.mediaType === mediaTypeOf(contentType))?.version;
    if (sent === undefined) {
      fail({ kind: 'headerInvalid', header: 'Content-Type', status: 415, expected: oneOf(api) });
    }
    // Worldpay: Accept names the version of the answer; the body must be written in that version.
    if (accepted !== undefined && sent !== accepted) {
      const expected = `${mediaTypeFor(api, accepted)}: the version Accept asks for`;
      fail({ kind: 'headerInvalid', header: 'Content-Type', status: 400, expected });
    }
  }
  for (const [name, expected] of Object.entries(api.exactHeaders)) {
    const value = headers.get(name);
    if (value === null) fail({ kind: 'headerMissing', header: name });
    if (value.trim() !== expected) fail({ kind: 'headerInvalid', header: name, status: 400, expected });
  }
  return accepted ?? sent ?? api.versions[0]!.version;
}

function oneOf(api: ApiProfile): string {
  const types = api.versions.map((v) => v.mediaType);
  return types.length === 1 ? types[0]! : `one of ${types.join(', ')}`;
}

function expectedAccept(api: ApiProfile): string {
  return api.acceptWildcards
    ? `a value that allows ${oneOf(api)}`
    : `${oneOf(api)}, named explicitly (this versioned API does not answer to wildcards such as */*)`;
}
