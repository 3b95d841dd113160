/**
 * Exponential backoff, as every retry of the service waits (the objects' KV writes and event
 * appends, the event log's deliveries): `baseMs` after the first failure in a row, doubling, at
 * most `maxMs`.
 *
 * @example
 * ```ts
 * backoffMs(1, 1_000, 60_000); // 1000
 * backoffMs(3, 1_000, 60_000); // 4000
 * backoffMs(9, 1_000, 60_000); // 60000
 * ```
 */
export function backoffMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}
