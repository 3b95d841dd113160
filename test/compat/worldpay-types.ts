/**
 * The reduced form of Worldpay's OpenAPI documents that the vitest config hands to the tests
 * (`inject('worldpay')`): plain data, no Node APIs, so workerd can read it.
 */

export type JsonSchema = Record<string, unknown>;

export interface DocOperation {
  /** Which document: `3ds`, `tokens` or `cardBin`. */
  doc: string;
  operationId: string;
  method: string;
  /** The path in Worldpay's document (v3 names for 3DS). */
  docPath: string;
  /** Matches this service's paths for the operation: the v1 names, and the v3 names it also takes. */
  pathPattern: string;
  /** Response body schema by status code (undefined: the status has no documented body). */
  responses: Record<string, JsonSchema | undefined>;
  requestExamples: { name: string; value: unknown }[];
}

export interface WorldpayDocs {
  dir: string;
  operations: DocOperation[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** null when the documents are not beside the project (the checks that need them skip). */
    worldpay: WorldpayDocs | null;
    /** This service's own OpenAPI document (scripts/openapi/document.ts), built in the vitest config. */
    openapi: Record<string, unknown>;
    /** PROFILE_REQUESTS=1: each worker test file prints its requests' times, first ten against last ten. */
    profileRequests: boolean;
  }
}
