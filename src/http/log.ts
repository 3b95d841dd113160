import { maskPan } from '../cards/mask';

/**
 * Structured logging: one JSON object per line, read by Workers Logs. Nothing here may ever
 * carry a full card number or a credential; {@link redactPans} is the last line of defence for
 * free text such as exception messages.
 */

export type LogFields = Record<string, string | number | boolean | undefined> & {
  level: 'info' | 'warn' | 'error';
};

/**
 * Writes one log line. Every free-text field goes through {@link redactPans}: a path such as
 * `/tokens/4571…` or a stray exception message must not carry a card number into the logs.
 */
export function logLine(fields: LogFields): void {
  const safe: Record<string, unknown> = { ts: new Date().toISOString() };
  for (const [name, value] of Object.entries(fields)) {
    safe[name] = typeof value === 'string' && name !== 'correlationId' ? redactPans(value) : value;
  }
  const line = JSON.stringify(safe);
  if (fields.level === 'error') console.error(line);
  else console.log(line);
}

/** Masks every run of 12–19 digits (optionally spaced or dashed) in free text. */
export function redactPans(text: string): string {
  return text.replace(/\d(?:[ -]?\d){11,18}/g, (m) => maskPan(m.replace(/[ -]/g, '')));
}

/** An exception as one masked line for the log: `Name: message`. */
export function describeError(e: unknown): string {
  return redactPans(
    e instanceof Error ? `${e.name}: ${e.message}` : typeof e === 'string' ? e : (JSON.stringify(e) ?? 'unknown'),
  );
}
