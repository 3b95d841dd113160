import * as v from 'valibot';
import type { FieldError } from '../failures';

/**
 * valibot building blocks whose failures map to the field error names (docs/errors.md "Field errors"), and the
 * mapping itself (issue → `{errorName, message, jsonPath}`). Pure: the HTTP layer turns the
 * errors into a response (`src/http/validation.ts`).
 */

/**
 * Error names for custom checks, keyed by the check function itself (valibot puts the function
 * in `issue.requirement`), so that schemas say `v.check(isLuhnValid, ...)` and the mapper
 * still knows it means panFailedLuhnCheck.
 */
const CHECK_ERROR_NAMES = new Map<unknown, string>();

const NOT_AN_OBJECT = 'This field must be a JSON object.';
const NOT_AN_INTEGER = 'This field must be an integer.';

/**
 * An integer field from min to max: a string or boolean there is fieldMustBeInteger (not
 * fieldMustBeNumber), a fraction fieldMustBeInteger, out of range integerIsTooSmall/Large.
 */
export function integer(min: number, max: number) {
  return v.pipe(v.number(NOT_AN_INTEGER), v.integer(NOT_AN_INTEGER), v.minValue(min), v.maxValue(max));
}

/**
 * A JSON object with these fields. valibot's `object` lets arrays through (they are objects to
 * JavaScript); a JSON API must answer fieldMustBeObject for `[]` as for `"x"`.
 */
export function jsonObject<const E extends v.ObjectEntries>(entries: E) {
  return asJsonObject(v.object(entries));
}

/** Refuses arrays (and other non-objects) with fieldMustBeObject before `schema` runs. */
export function asJsonObject<const S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.custom<unknown>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), NOT_AN_OBJECT),
    schema,
  );
}

/** The error name a check reports (its namedCheck name, else bodyDoesNotMatchSchema's default). */
export function checkErrorName(requirement: unknown): string | undefined {
  return CHECK_ERROR_NAMES.get(requirement);
}

/** A valibot check whose failure is reported under a field error name (docs/errors.md "Field errors"). */
export function namedCheck<T>(errorName: string, test: (input: T) => boolean, message: string) {
  // A closure of its own, so that one test function can serve under several names.
  const check = (input: T): boolean => test(input);
  CHECK_ERROR_NAMES.set(check, errorName);
  return v.check(check, message);
}

/** Names the field error a check across fields (`v.partialCheck`) reports. */
export function namedRequirement<F extends (input: never) => boolean>(errorName: string, requirement: F): F {
  CHECK_ERROR_NAMES.set(requirement, errorName);
  return requirement;
}

/** JSONPath of an issue: `$`, `$.merchant.entity`, `$.items[0].name`. */
export function jsonPathOf(path: v.BaseIssue<unknown>['path']): string {
  let out = '$';
  for (const item of path ?? []) {
    const key = item.key;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** Maps one valibot issue to the field error it means (docs/errors.md "Field errors"). */
export function toFieldError(issue: v.BaseIssue<unknown>): FieldError {
  const jsonPath = jsonPathOf(issue.path);
  const errorName = errorNameOf(issue);
  return { errorName, message: messageOf(errorName, issue), jsonPath };
}

function errorNameOf(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === 'schema') {
    if (issue.input === undefined) return 'fieldIsMissing';
    if (issue.input === null) return 'fieldIsNull';
    switch (issue.type) {
      case 'string':
        return 'fieldMustBeString';
      case 'number':
        return issue.message === NOT_AN_INTEGER ? 'fieldMustBeInteger' : 'fieldMustBeNumber';
      case 'boolean':
        return 'fieldMustBeBoolean';
      case 'object':
      case 'strict_object':
      case 'loose_object':
        return 'fieldMustBeObject';
      case 'array':
        return 'fieldMustBeArray';
      case 'custom':
        return issue.message === NOT_AN_OBJECT ? 'fieldMustBeObject' : 'fieldHasInvalidValue';
      default:
        return 'fieldHasInvalidValue';
    }
  }
  switch (issue.type) {
    case 'min_length':
      return issue.input === '' ? 'fieldIsEmpty' : 'stringIsTooShort';
    case 'non_empty':
      return 'fieldIsEmpty';
    case 'max_length':
      return 'stringIsTooLong';
    case 'regex':
      return 'stringFailedRegexCheck';
    case 'integer':
      return 'fieldMustBeInteger';
    case 'min_value':
      return Number.isInteger(issue.input) ? 'integerIsTooSmall' : 'numberIsTooSmall';
    case 'max_value':
      return Number.isInteger(issue.input) ? 'integerIsTooLarge' : 'numberIsTooLarge';
    case 'check':
    case 'partial_check':
      return CHECK_ERROR_NAMES.get(issue.requirement) ?? 'fieldHasInvalidValue';
    default:
      return 'fieldHasInvalidValue';
  }
}

const MESSAGES: Record<string, string> = {
  fieldIsMissing: 'This field is required.',
  fieldIsNull: 'This field must not be null.',
  fieldMustBeString: 'This field must be a string.',
  fieldMustBeNumber: 'This field must be a number.',
  fieldMustBeInteger: 'This field must be an integer.',
  fieldMustBeBoolean: 'This field must be a boolean.',
  fieldMustBeObject: 'This field must be a JSON object.',
  fieldMustBeArray: 'This field must be an array.',
  fieldIsEmpty: 'This field must not be empty.',
};

function messageOf(errorName: string, issue: v.BaseIssue<unknown>): string {
  const fixed = MESSAGES[errorName];
  if (fixed) return fixed;
  // Schema messages are written for humans in the schemas; never echo the input itself, which
  // may be a card number.
  return issue.message.startsWith('Invalid ')
    ? `This field has an invalid value (expected ${issue.expected ?? 'another value'}).`
    : issue.message;
}
