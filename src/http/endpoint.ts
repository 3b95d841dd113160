import type { AppIssuer } from '../threeds/app-issuer';
import type { BinIndex } from '../bin/bin-index';
import type { Settings } from '../config/settings';
import type { MerchantConfig, MerchantDirectory } from '../merchants/merchant-config';
import type { ApiProfile, ApiVersion } from './api-headers';
import type { LoginMemory } from './basic-auth';

/**
 * The types the request path shares: what a Worker is built from (its services), the state of one
 * request, and the two kinds of handlers a route has: an endpoint of a JSON API, run through the
 * shared pipeline (docs/pipeline.md), or a page handler answering HTML itself.
 */

/** What the Worker is built from, injected by its entry module (src/app/). */
export interface Services {
  /** The compiled BIN index the Worker answers from. */
  binIndex: BinIndex;
  /** The merchant configuration. */
  merchants: MerchantDirectory;
  /** The test issuer's app-channel keys: in the `test` Worker only (src/app/test-app-issuer.ts). */
  appIssuer?: AppIssuer;
}

/** Per-request state shared by the pipeline, the endpoint and the log line. */
export interface RequestContext {
  readonly request: Request;
  readonly env: Env;
  readonly ctx: ExecutionContext;
  readonly url: URL;
  readonly correlationId: string;
  /**
   * The environment parsed into typed settings (once per isolate); reading it on a misconfigured
   * Worker throws a SettingsError, answered 503.
   */
  readonly settings: Settings;
  readonly services: Services;
  /** This Worker's memory of logins (one per isolate). */
  readonly logins: LoginMemory;
  /**
   * The Worker itself, to call in process: what the demo checkout's merchant backend calls, so
   * that it goes through the whole pipeline as a merchant's server would.
   */
  readonly self: { fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> };
  /** The matched API, once routing found one: decides the media type of errors. */
  api?: ApiProfile;
  /**
   * The version of the API the request negotiated (docs/pipeline.md step 3), once its headers
   * passed: the answer is written in its media type. Before that, answers use the version Accept
   * picks, else version 1.
   */
  apiVersion?: ApiVersion;
  /** Headers every answer of this request carries, errors included (CORS on the prefix lookup). */
  extraHeaders?: Record<string, string>;
  /** Safe fields for the log line (never a full card number, never credentials). */
  readonly log: Record<string, string | number | boolean | undefined>;
}

/** What an endpoint is handed once the shared pipeline has passed. */
export interface EndpointCall {
  readonly merchant: MerchantConfig;
  /** The parsed JSON object body (empty object for GET and DELETE, and for `hasBody: 'value'`). */
  readonly body: Record<string, unknown>;
  /** The parsed JSON body of any type, for an endpoint with `hasBody: 'value'`. */
  readonly value?: unknown;
  readonly params: Readonly<Record<string, string>>;
  readonly rc: RequestContext;
  /** The negotiated version of the API (docs/pipeline.md step 3): 1 unless the client asked for 2 or 3. */
  readonly apiVersion: ApiVersion;
}

export interface EndpointResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One endpoint of a JSON API: the API it belongs to, whether it takes a body, and its handler. */
export interface Endpoint {
  api: ApiProfile;
  /** Whether it takes a body: a JSON object (`true`), or any JSON value (`'value'`). */
  hasBody: boolean | 'value';
  /** Whether a publishable key (`Authorization: Bearer pk_…`) may call it, from a listed origin. */
  publishable?: boolean;
  handle(call: EndpointCall): Promise<EndpointResult>;
}

/** A route that answers by itself (HTML pages, static files, CORS preflight), given its path's parameters. */
export type PageHandler = (rc: RequestContext, params: Record<string, string>) => Promise<Response | EndpointResult>;
