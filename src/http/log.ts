import { maskPan } from '../cards/mask';
import { FailureError } from '../failures';

/**
 * Structured logging: one JSON object per line, read by Workers Logs. Nothing here may ever
 * carry a full card number or a credential; {@link redactPans} is the last line of defence for
 * free text such as exception messages.
 */

/** What every request's line says, first, in this order. */
export interface RequestLogHead {
  level: 'info' | 'warn' | 'error';
  correlationId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

/** What the request's steps add to its line (never a full card number, never credentials). */
export type LogFields = Record<string, string | number | boolean | undefined>;

/**
 * Writes a request's one log line: `head`, then `fields` (fields left undefined are left out).
 * The whole line but its correlation id (a UUID, whose digit groups could look like a card
 * number) goes through {@link redactPans} in one pass: a path such as `/tokens/4571…`, a
 * merchant's reference or a stray exception message must not carry a card number into the logs.
 */
export function logLine(head: RequestLogHead, fields: LogFields): void {
  const { level, method, path, status, durationMs } = head;
  const first = JSON.stringify({ ts: new Date().toISOString(), level, method, path, status, durationMs });
  const rest = JSON.stringify(fields);
  const body = redactPans(rest.length > 2 ? `${first.slice(0, -1)},${rest.slice(1)}` : first);
  const line = `{"correlationId":${JSON.stringify(head.correlationId)},${body.slice(1)}`;
  if (level === 'error') console.error(line);
  else console.log(line);
}

/** Masks every run of 12–19 digits (optionally spaced or dashed) in free text. */
export function redactPans(text: string): string {
  if (!hasDigitRun(text, 12)) return text; // the common case, a line without one: no regex pass
  return text.replace(/\d(?:[ -]?\d){11,18}/g, (m) => maskPan(m.replace(/[ -]/g, '')));
}

const ZERO = 48;
const NINE = 57;
const isDigit = (code: number): boolean => code >= ZERO && code <= NINE;

/** Whether `text` has `length` digits in a row, a single space or dash allowed between two. */
function hasDigitRun(text: string, length: number): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) {
      if (++run >= length) return true;
    } else if (!((code === 32 || code === 45) && run > 0 && isDigit(text.charCodeAt(i + 1)))) {
      run = 0;
    }
  }
  return false;
}

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
