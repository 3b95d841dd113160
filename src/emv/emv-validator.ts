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

/**
 * The rules' scenario of a transaction, from its AReq: the channel by `deviceChannel` (01 app,
 * 03 3RI, else browser), the category by `messageCategory` (02 non-payment, else payment).
 */
export function emvScenarioOf(areq: unknown): EmvScenario {
  const fields = typeof areq === 'object' && areq !== null ? (areq as Record<string, unknown>) : {};
  const channel = fields['deviceChannel'] === '03' ? '3RI' : fields['deviceChannel'] === '01' ? 'APP' : 'BRW';
  return { channel, category: fields['messageCategory'] === '02' ? 'NPA' : 'PA' };
}

/**
 * The problems of a message of a transaction whose AReq is `areq` (the message itself when it is
 * the AReq), in that AReq's scenario. The rules' scenarios are payment or not: a message category
 * of the Directory Server's range (80–99, which every version's pattern allows; Mastercard's data
 * only is 80) is checked as a payment.
 */
export function emvMessageProblems(
  message: EmvMessageType,
  version: EmvVersion,
  value: unknown,
  areq: unknown = value,
): EmvProblem[] {
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  const category = fields?.['messageCategory'];
  const dsCategory = typeof category === 'string' && /^[89][0-9]$/.test(category);
  return emvProblems(message, version, emvScenarioOf(areq), dsCategory ? { ...fields, messageCategory: '01' } : value);
}
