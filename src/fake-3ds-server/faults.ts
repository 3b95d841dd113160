import { isObject } from './base64url';

/**
 * Faults a test arms at the fake provider (`POST /_fake/faults`) for the next calls of one
 * endpoint: the ways a real provider fails that the service must survive.
 *
 * | kind | the call is processed | the answer |
 * |---|---|---|
 * | 401 | no | 401 text/plain `Invalid API Key` |
 * | 500, 503 | no | that status, an Erro of the 3DS Server (403, component S) |
 * | hang | no | none: the request stays open until the client gives up (10 minutes at most) |
 * | malformed | no | 200 with a body that is not JSON |
 * | late | yes (an AReq is counted and answered at the provider) | the real answer, `delayMs` later (default 20 s) |
 */

export const FAULT_ENDPOINTS = ['preauth', 'auth', 'postauth'] as const;
export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];

export const FAULT_KINDS = ['401', '500', '503', 'hang', 'malformed', 'late'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ArmedFault {
  endpoint: FaultEndpoint;
  kind: FaultKind;
  /** How many of the next calls it still hits. */
  times: number;
  delayMs?: number;
}

/** How long a late answer waits unless the fault says. */
export const LATE_DEFAULT_MS = 20_000;

/** How long a hanging call holds the request when the client never gives up. */
export const HANG_MS = 10 * 60_000;

const oneOf = <T extends string>(list: readonly T[], value: unknown): T | undefined =>
  list.find((item) => item === value);

/**
 * A fault from the body of `POST /_fake/faults`, or what is wrong with the body.
 *
 * @example
 * ```ts
 * parseFault({ endpoint: 'auth', kind: 'late', delayMs: 500 }); // { endpoint: 'auth', kind: 'late', times: 1, delayMs: 500 }
 * ```
 */
export function parseFault(body: unknown): ArmedFault | { error: string } {
  if (!isObject(body)) return { error: 'The body must be a JSON object' };
  const endpoint = oneOf(FAULT_ENDPOINTS, body['endpoint']);
  if (!endpoint) return { error: `endpoint must be one of ${FAULT_ENDPOINTS.join(', ')}` };
  const kind = oneOf(FAULT_KINDS, body['kind']);
  if (!kind) return { error: `kind must be one of ${FAULT_KINDS.join(', ')}` };
  const times = body['times'] ?? 1;
  if (!Number.isInteger(times) || (times as number) < 1 || (times as number) > 1000) {
    return { error: 'times must be an integer from 1 to 1000' };
  }
  const delayMs = body['delayMs'];
  if (
    delayMs !== undefined &&
    (!Number.isInteger(delayMs) || (delayMs as number) < 0 || (delayMs as number) > HANG_MS)
  ) {
    return { error: `delayMs must be an integer from 0 to ${HANG_MS}` };
  }
  return { endpoint, kind, times: times as number, ...(delayMs !== undefined ? { delayMs: delayMs as number } : {}) };
}

/** The fault that hits the next call of `endpoint` (the first armed), and the faults left armed. */
export function takeFault(
  armed: readonly ArmedFault[],
  endpoint: FaultEndpoint,
): { fault: ArmedFault | undefined; rest: ArmedFault[] } {
  const index = armed.findIndex((f) => f.endpoint === endpoint);
  const fault = armed[index];
  if (fault === undefined) return { fault: undefined, rest: [...armed] };
  const rest = [...armed];
  if (fault.times > 1) rest[index] = { ...fault, times: fault.times - 1 };
  else rest.splice(index, 1);
  return { fault, rest };
}
