import { maskPan } from './mask';
import { FailureError } from './failures';

/**
 * Structured logging: one JSON object per line, read by Workers Logs. Nothing here may ever
 * carry a full card number or a credential; {@link redactPans} is the last line of defence for
 * free text such as exception messages.
 */

export type LogFields = Record<string, string | number | boolean | undefined> & {
  level: 'info' | 'warn' | 'error';
};

/**
 * Writes one log line. The whole line but its correlation id (a UUID, whose digit groups could
 * look like a card number) goes through {@link redactPans} in one pass: a path such as
 * `/tokens/4571…`, a merchant's reference or a stray exception message must not carry a card
 * number into the logs.
 */
export function logLine(fields: LogFields): void {
  const { correlationId, ...rest } = fields;
  const body = redactPans(JSON.stringify({ ts: new Date().toISOString(), ...rest }));
  const line =
    correlationId === undefined ? body : `{"correlationId":${JSON.stringify(correlationId)},${body.slice(1)}`;
  if (fields.level === 'error') console.error(line);
  else console.log(line);
}

/**
 * Masks every run of 12–19 digits in free text, the digits separated by up to three of the
 * separators a written card number may have (any white space, dashes, `. / _ : +`) or by the
 * white space JSON escapes (`\t`, `\n`, `\r`, `\f`, `\b`, `\u000b`): at least as wide as what the free-text fields refuse
 * (src/cards/card-number-in-text.ts), and without its Luhn and scheme checks, so that a value no
 * field checked (a path, a header) is masked all the same.
 */
export function redactPans(text: string): string {
  return text.replace(PAN_IN_TEXT, (m) => maskPan(m.replace(/\\u000b|\\[tnrfb]|[^\d]/g, '')));
}

const PAN_IN_TEXT = /\d(?:(?:[\s./_:+-]|\\[tnrfb]|\\u000b){0,3}\d){11,18}/g;

/** An exception as one masked line for the log: `Name: message`. */
export function describeError(e: unknown): string {
  return redactPans(
    e instanceof Error ? `${e.name}: ${e.message}` : typeof e === 'string' ? e : (JSON.stringify(e) ?? 'unknown'),
  );
}

/**
 * What the log line says about an exception that ended a request: for storage failing, which call
 * and the platform's reason; for a misconfiguration, every problem; for a bug, the exception. A
 * failure the client caused needs nothing more than its error name.
 */
export function errorLogFields(e: unknown): Record<string, string> {
  if (!(e instanceof FailureError)) return { exception: describeError(e) };
  const { failure } = e;
  if (failure.kind === 'misconfigured' || failure.kind === 'providerMisconfigured')
    return { misconfigured: failure.what };
  const cause: Record<string, string> = e.cause !== undefined ? { cause: describeError(e.cause) } : {};
  if (failure.kind === 'storageUnavailable') return { storage: redactPans(e.message), ...cause };
  if (failure.kind === 'providerUnavailable') return { provider: redactPans(e.message), ...cause };
  return {};
}
