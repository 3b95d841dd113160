import { Validator } from '@cfworker/json-schema';
import { emvJsonSchema, type EmvScenario } from './emv-json-schema';
import type { EmvMessageType, EmvVersion } from './emv-rules';

/**
 * EMV messages checked against the field rules of their version (emv-rules.ts, as JSON Schemas
 * made by emv-json-schema.ts), with `@cfworker/json-schema`, which runs inside workerd (validators
 * that generate code cannot). For the fake 3DS Server's Directory Server and for the tests: the
 * service itself never imports it (its bundle check says so).
 */

export interface EmvProblem {
  /** JSON Pointer of the offending value (`#/acctInfo/chAccAgeInd`), or `#` for the message. */
  at: string;
  keyword: string;
  error: string;
}

const validators = new Map<string, Validator>();

/** The problems of a message against its version's rules; empty when it is valid. */
export function emvProblems(
  message: EmvMessageType,
  version: EmvVersion,
  scenario: EmvScenario,
  value: unknown,
): EmvProblem[] {
  const key = `${message} ${version} ${scenario.channel} ${scenario.category}`;
  let validator = validators.get(key);
  if (!validator) {
    validator = new Validator(emvJsonSchema(message, version, scenario), '2020-12', false);
    validators.set(key, validator);
  }
  const result = validator.validate(value);
  if (result.valid) return [];
  // The schema's combinators report their parts' failures: the parts say what is wrong.
  return result.errors
    .filter((e) => !['properties', 'allOf', 'if', 'then', 'anyOf', 'items'].includes(e.keyword))
    .map((e) => ({ at: e.instanceLocation, keyword: e.keyword, error: e.error }));
}
