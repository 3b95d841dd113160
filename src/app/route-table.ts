import type { Endpoint, PageHandler } from '../http/endpoint';

/** One line of a route table: a method and path, and what answers it. */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  path: string;
  /** A JSON API endpoint, run through the shared pipeline (docs/pipeline.md). */
  endpoint?: Endpoint;
  /** A route that answers by itself (HTML pages, static files, the CORS preflight). */
  page?: PageHandler;
  /** Answers carry CORS headers for the origins of publishable keys (src/http/publishable-keys.ts). */
  cors?: boolean;
}
