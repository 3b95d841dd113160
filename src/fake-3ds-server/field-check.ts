import type { EmvMessageType, EmvVersion } from '../emv/emv-rules';
import { emvMessageProblems } from '../emv/emv-validator';

/**
 * The Directory Server's field check, as the names of the fields at fault: a missing required
 * field is EMV's error 201, any other problem (format, value, a field the table does not have)
 * 203, and the Erro's errorDetail names the fields.
 */

export interface FieldFaults {
  /** Required fields that are absent, as dotted paths (`acctInfo.chAccAgeInd`). */
  missing: string[];
  /** Fields present but not valid, or not in the table. */
  invalid: string[];
}

const QUOTED = /"([^"]+)"/;

/** The fields of a message that break its version's rules, in its AReq's scenario (emv-validator.ts). */
export function fieldFaults(message: EmvMessageType, version: EmvVersion, value: unknown): FieldFaults {
  const missing = new Set<string>();
  const invalid = new Set<string>();
  for (const problem of emvMessageProblems(message, version, value)) {
    const parent = problem.at.replace(/^#\/?/, '').split('/').filter(Boolean).join('.');
    const named = QUOTED.exec(problem.error)?.[1];
    const child = (name: string | undefined): string => [parent, name].filter(Boolean).join('.');
    if (problem.keyword === 'required') missing.add(child(named));
    else if (problem.keyword === 'additionalProperties') invalid.add(child(named));
    // The additional property's own failure ("False boolean schema") repeats the one above.
    else if (problem.keyword !== 'false') invalid.add(parent || 'message');
  }
  return { missing: [...missing], invalid: [...invalid] };
}
