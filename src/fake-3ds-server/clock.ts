import { isObject } from './base64url';

/**
 * The fake's clock: Date.now() plus an offset that tests move (`POST /_fake/clock`), so that the
 * 80 s, 30 s and 300 s windows pass without waiting.
 */

export type ClockChange = { advanceMs: number } | { reset: true };

/** The change a `POST /_fake/clock` body asks for, or what is wrong with it. */
export function parseClockChange(body: unknown): ClockChange | { error: string } {
  if (isObject(body) && body['reset'] === true) return { reset: true };
  const advanceMs = isObject(body) ? body['advanceMs'] : undefined;
  if (typeof advanceMs === 'number' && Number.isSafeInteger(advanceMs)) return { advanceMs };
  return { error: 'The body must be {"advanceMs": <integer>} or {"reset": true}' };
}

/** The offset after a change. */
export function changedOffset(offsetMs: number, change: ClockChange): number {
  return 'reset' in change ? 0 : offsetMs + change.advanceMs;
}
