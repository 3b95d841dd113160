import type { EmvVersion } from '../emv/emv-rules';
import { scenarioFor } from './scenarios';
import type { TransactionRecord } from './transaction-record';

/**
 * The ACS's side of the 3DS Method: the browser posted threeDSMethodData to a method URL. The ACS
 * records that the method was invoked and, when the scenario's method completes, that it
 * completed (the page it serves notifies the requestor at once).
 */

export type MethodOutcome =
  | { kind: 'unknown' }
  /** This URL is not a method URL the card range named. */
  | { kind: 'notOffered'; why: string }
  | { kind: 'completes' }
  | { kind: 'neverCompletes' };

/**
 * A method invocation through the method URL of `version` (undefined for the one URL of a card
 * range without per-version URLs).
 */
export function invokeMethod(
  tx: TransactionRecord | undefined,
  version: EmvVersion | undefined,
  now: number,
): { record: TransactionRecord | undefined; outcome: MethodOutcome } {
  const scenario = tx && scenarioFor(tx.acctNumber);
  if (!tx || !scenario) return { record: tx, outcome: { kind: 'unknown' } };
  const refuse = (why: string) => ({ record: tx, outcome: { kind: 'notOffered' as const, why } });
  if (scenario.method === 'none') return refuse('The card range has no 3DS Method');
  if (scenario.versions.methodUrlPerVersion) {
    if (version === undefined || !scenario.versions.acs.includes(version)) {
      return refuse(`The card range names one method URL per version: ${scenario.versions.acs.join(', ')}`);
    }
  } else if (version !== undefined) {
    return refuse('The card range names one method URL for all its versions');
  }
  const completes = scenario.method === 'completes';
  const method = {
    ...tx.method,
    invokedAt: now,
    ...(version !== undefined ? { invokedVersion: version } : {}),
    ...(completes ? { completedAt: now } : {}),
  };
  return { record: { ...tx, method }, outcome: { kind: completes ? 'completes' : 'neverCompletes' } };
}
