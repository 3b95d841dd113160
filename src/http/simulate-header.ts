import type { Environment } from '../config/settings';
import { fail } from '../failures';

/**
 * `WP-Sandbox-Simulate` (`test` only): makes any API endpoint answer a chosen failure, so that a
 * merchant can test its error handling on demand. Values, comma-separated:
 * - `503`: 503 serviceUnavailable with `Retry-After: 1`, as when storage fails;
 * - `500`: 500 internalErrorOccurred;
 * - `429`: 429 tooManyRequests with `Retry-After: 60`;
 * - `delay=<ms>`: answer (normally, or with the failure) after that many milliseconds, up to 10,000.
 * It acts once the request is authenticated and its headers are right, as a real failure would.
 * In `live` the header is refused (400 headerHasInvalidValue): nothing simulates there.
 */
export const SIMULATE_HEADER = 'WP-Sandbox-Simulate';
export const MAX_SIMULATED_DELAY_MS = 10_000;

export interface Simulation {
  delayMs: number;
  failure?: 500 | 503 | 429;
}

/** The simulation a header value asks for, or undefined when it is not one. */
export function parseSimulation(value: string): Simulation | undefined {
  const simulation: Simulation = { delayMs: 0 };
  for (const part of value.split(',').map((p) => p.trim())) {
    const delay = /^delay=(\d{1,5})$/.exec(part);
    if (delay && Number(delay[1]) <= MAX_SIMULATED_DELAY_MS) simulation.delayMs = Number(delay[1]);
    else if ((part === '500' || part === '503' || part === '429') && simulation.failure === undefined)
      simulation.failure = Number(part) as 500 | 503 | 429;
    else return undefined;
  }
  return simulation;
}

/** Applies the header of a request, if it has one: waits, then fails as asked. */
export async function simulate(value: string, environment: Environment, note: (what: string) => void): Promise<void> {
  if (environment !== 'test') {
    fail({
      kind: 'headerInvalid',
      header: SIMULATE_HEADER,
      status: 400,
      expected: 'absent: sandbox controls work in the test environment only',
    });
  }
  const simulation = parseSimulation(value);
  if (!simulation) {
    fail({
      kind: 'headerInvalid',
      header: SIMULATE_HEADER,
      status: 400,
      expected: `503, 500 or 429 and/or delay=<0–${MAX_SIMULATED_DELAY_MS} ms>, comma-separated`,
    });
  }
  note(value);
  if (simulation.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, simulation.delayMs));
  if (simulation.failure === 503) fail({ kind: 'storageUnavailable' });
  if (simulation.failure === 500) fail({ kind: 'internal' });
  if (simulation.failure === 429) fail({ kind: 'tooManyRequests', retryAfter: 60, what: 'simulated' });
}
