import { env, exports } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { afterAll, expect, inject, vi } from 'vitest';
import worker from '../../src/index';
import { expectDocumentedAnswer } from './openapi-compat';
import { expectWorldpayShape } from './worldpay-compat';

export const TEST_AUTH = basic('test-merchant', 'test-password');
export const OTHER_AUTH = basic('other-merchant', 'other-password');

export function basic(username: string, password: string): string {
  return `Basic ${btoa(`${username}:${password}`)}`;
}

export const CARD_BIN_HEADERS: Record<string, string> = {
  Authorization: TEST_AUTH,
  'Content-Type': 'application/json',
  'WP-Api-Version': '1',
};

export interface CallOptions {
  method?: string;
  headers?: Record<string, string | undefined>;
  body?: unknown;
  /** Sent as is, not JSON-encoded (a string adds Content-Type: text/plain). */
  rawBody?: BodyInit;
  /** Who answers: the Worker's own fetch by default, or a harness with faulty storage. */
  via?: Fetch;
}

export type Fetch = (request: Request) => Promise<Response>;

/**
 * The Worker's fetch handler, called as the runtime calls it (the module's default export, the
 * bindings, an execution context). Not through `exports.default.fetch`: in
 * @cloudflare/vitest-pool-workers 0.15 that path re-imports the main module through Vite's module
 * runner on every request, and its cost grows with every request a file makes (3 ms to 550 ms
 * over token-lifecycle.test.ts; docs/benchmarks.md "The test suite"). The Worker uses no
 * `waitUntil`, so an answer is all the work a request does either way.
 */
const WORKER: Fetch = (request) => worker.fetch(request, env, createExecutionContext());

/**
 * The Worker through the runtime's own entry point (`exports.default`): what proves the module's
 * default export is the handler workerd runs. A few tests go this way; the rest call {@link WORKER}.
 */
export const ENTRYPOINT: Fetch = (request) => exports.default.fetch(request);

/**
 * The client address of this test file's requests. The rate limiters keep their counts across
 * tests and files (the pool does not reset them), so each file is its own client.
 */
export const CLIENT_ADDRESS = `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

/** Each request's time in this file, when PROFILE_REQUESTS is set (docs/benchmarks.md "The test suite"). */
const requestTimes: number[] | null = inject('profileRequests') ? [] : null;
if (requestTimes) {
  afterAll(() => {
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    const first = requestTimes.slice(0, 10);
    const last = requestTimes.slice(-10);
    console.log(
      `[requests] ${requestTimes.length} requests: first ten median ${median(first).toFixed(1)} ms, ` +
        `last ten median ${median(last).toFixed(1)} ms, all median ${median(requestTimes).toFixed(1)} ms`,
    );
  });
}

/** Calls the Worker through its fetch handler, as a merchant's server would. */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const headers = new Headers({ 'CF-Connecting-IP': CLIENT_ADDRESS });
  for (const [k, v] of Object.entries(options.headers ?? {})) if (v !== undefined) headers.set(k, v);
  // Bytes, not a string: a string body would make Request add `Content-Type: text/plain`.
  const body =
    options.rawBody ??
    (options.body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(options.body)));
  const request = new Request(`https://edge.test${path}`, { method: options.method ?? 'POST', headers, body });
  const started = performance.now();
  const response = await (options.via ?? WORKER)(request);
  requestTimes?.push(performance.now() - started);
  // Every answer must be one a Worldpay client can read (Worldpay's published documents).
  await expectWorldpayShape(request.method, request.url, response);
  // ... and one our own OpenAPI document describes.
  await expectDocumentedAnswer(request.method, request.url, response);
  return response;
}

/** Runs `n` copies of a call at once and waits for all of them. */
export function burst<T>(n: number, send: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => send(i)));
}

/** `POST /api/cardBin/panLookup` with valid headers unless overridden. */
export function panLookup(body: unknown, headers: Record<string, string | undefined> = {}): Promise<Response> {
  return call('/api/cardBin/panLookup', { body, headers: { ...CARD_BIN_HEADERS, ...headers } });
}

/** Completes a prefix into a Luhn-valid card number of the given length. */
export function luhnComplete(prefix: string, length = 16, fill = '0'): string {
  const body = prefix.padEnd(length - 1, fill).slice(0, length - 1);
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}

/** One row of an error table: what to send and the error document it must get. */
export interface ErrorCase {
  name: string;
  send: () => Promise<Response>;
  status: number;
  errorName: string;
  headerName?: string;
  /** Expected validationErrors as [errorName, jsonPath] pairs, in order. */
  fields?: [string, string][];
}

/** Checks a response against an error case: status, error document and common headers. */
export async function expectErrorCase(c: ErrorCase, mediaType: string): Promise<void> {
  const response = await c.send();
  const body = await response.json<Record<string, unknown>>();
  expect(response.status).toBe(c.status);
  expect(body.errorName).toBe(c.errorName);
  expect(typeof body.message).toBe('string');
  expect(response.headers.get('Content-Type')).toBe(mediaType);
  expect(response.headers.get('Cache-Control')).toBe('no-store');
  expect(response.headers.get('WP-CorrelationId')).toMatch(/^[0-9a-f-]{36}$/);
  if (c.headerName) expect(body.headerName).toBe(c.headerName);
  else expect(body).not.toHaveProperty('headerName');
  if (c.fields) {
    const errors = body.validationErrors as { errorName: string; jsonPath: string; message: string }[];
    expect(errors.map((e) => [e.errorName, e.jsonPath])).toEqual(c.fields);
    for (const e of errors) expect(e.message).not.toMatch(/\d{12}/);
  } else {
    expect(body).not.toHaveProperty('validationErrors');
  }
  if (response.status === 401) expect(response.headers.get('WWW-Authenticate')).toMatch(/^Basic realm="/);
}

/** Silences the Worker's log lines and errors for a test that makes failures on purpose (restored by `vi.restoreAllMocks`). */
export function quiet(): void {
  vi.spyOn(console, 'error').mockImplementation(() => {});
  vi.spyOn(console, 'log').mockImplementation(() => {});
}

/** A 503 error document: Retry-After in whole seconds, `serviceUnavailable` (and of `mediaType`, when given). */
export async function expect503(response: Response, mediaType?: string): Promise<void> {
  const body = await response.json<Record<string, any>>();
  expect(response.status, JSON.stringify(body)).toBe(503);
  expect(response.headers.get('Retry-After')).toMatch(/^\d+$/);
  if (mediaType !== undefined) expect(response.headers.get('Content-Type')).toBe(mediaType);
  expect(body.errorName).toBe('serviceUnavailable');
}

/** A 404 error document naming `errorName` (by default `resourceNotFound`). */
export async function expectNotFound(response: Response, errorName = 'resourceNotFound'): Promise<void> {
  const body = await response.json<Record<string, any>>();
  expect(response.status, JSON.stringify(body)).toBe(404);
  expect(body.errorName).toBe(errorName);
}
