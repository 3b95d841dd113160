/** The media types of the three APIs (docs/pipeline.md step 3), shared by the Worker and its OpenAPI document. */
export const CARD_BIN_MEDIA_TYPE = 'application/json';
export const THREE_DS_MEDIA_TYPE = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
export const TOKENS_MEDIA_TYPE = 'application/vnd.worldpay.tokens-v1.hal+json';
