/** The media types of the APIs (docs/pipeline.md step 3), shared by the Worker and its OpenAPI document. */
export const CARD_BIN_MEDIA_TYPE = 'application/json';

/** The events API's (docs/events.md): plain JSON, one version. */
export const EVENTS_MEDIA_TYPE = 'application/json';

/** A version of a versioned API (3DS, Tokens), named in its media type: `…-v1.hal+json`. */
export type ApiVersion = 1 | 2 | 3;

/** The media type of each version of the 3DS API; version 1 is the default. */
export const THREE_DS_MEDIA_TYPES: Readonly<Record<ApiVersion, string>> = {
  1: 'application/vnd.worldpay.verifications.customers-v1.hal+json',
  2: 'application/vnd.worldpay.verifications.customers-v2.hal+json',
  3: 'application/vnd.worldpay.verifications.customers-v3.hal+json',
};

/** The media type of each version of the Tokens API; version 1 is the default. */
export const TOKENS_MEDIA_TYPES: Readonly<Record<ApiVersion, string>> = {
  1: 'application/vnd.worldpay.tokens-v1.hal+json',
  2: 'application/vnd.worldpay.tokens-v2.hal+json',
  3: 'application/vnd.worldpay.tokens-v3.hal+json',
};

/** Version 1's media types: the default (the demo, the docs' examples, errors when Accept picks no version). */
export const THREE_DS_MEDIA_TYPE = THREE_DS_MEDIA_TYPES[1];
export const TOKENS_MEDIA_TYPE = TOKENS_MEDIA_TYPES[1];
