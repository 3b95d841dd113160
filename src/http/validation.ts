import * as v from 'valibot';
import { fail, type FieldError } from '../failures';
import { toFieldError } from '../schemas/field-errors';

/**
 * Validates a parsed JSON body. On failure, ends the request with bodyDoesNotMatchSchema carrying
 * every field error (one per field, in schema order) plus `extra` errors from cross-field rules
 * (docs/pipeline.md step 5).
 *
 * @example
 * ```ts
 * const body = validateBody(PAN_LOOKUP, json);
 * ```
 */
export function validateBody<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  extra: (input: unknown) => FieldError[] = () => [],
): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  const errors = result.success ? [] : result.issues.map(toFieldError);
  errors.push(...extra(input));
  // valibot reports in schema order, which follows the documented field order.
  if (errors.length > 0) fail({ kind: 'bodyDoesNotMatchSchema', errors });
  return result.output;
}
