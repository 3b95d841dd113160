/** Types of lib.mjs, for the TypeScript example that imports it (examples/try-app.ts). */

export const BASE_URL: string;
export const BASIC: string;
export const THREEDS: string;
export const THREEDS_HEADERS: Record<string, string>;
export const CARD_BIN_HEADERS: Record<string, string>;
export const TOKENS: string;
export const TOKENS_HEADERS: Record<string, string>;

/** One request's answer: `json` when the body is JSON. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export function call(
  method: string,
  url: string,
  options?: { headers?: Record<string, string>; json?: unknown; form?: Record<string, string>; expect?: number },
): Promise<Answer>;
export function check(condition: unknown, what: string): void;
export function step(title: string): void;
export function runId(): string;
export function cardNumber(prefix: string, length?: number): string;
export function luhnValid(number: string): boolean;
export function run(name: string, main: () => Promise<void>): void;
