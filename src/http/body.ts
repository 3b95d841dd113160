import { fail } from './errors';

/** Largest accepted request body (CONTRACT.md §2 step 4). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Reads the body as a JSON object, refusing more than MAX_BODY_BYTES without buffering it all:
 * the declared Content-Length is checked first, then the stream is counted as it arrives
 * (a chunked body has no Content-Length).
 */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const text = await readBodyText(request);
  if (text === undefined) fail({ kind: 'bodyNotJson' });
  if (text.trim() === '') fail({ kind: 'bodyEmpty' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail({ kind: 'bodyNotJson' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail({ kind: 'bodyNotJson' });
  return parsed as Record<string, unknown>;
}

/**
 * The body as UTF-8 text, at most MAX_BODY_BYTES (else bodyIsTooLarge); undefined when it is not
 * valid UTF-8.
 */
export async function readBodyText(request: Request): Promise<string | undefined> {
  const declared = Number(request.headers.get('Content-Length') ?? '0');
  if (declared > MAX_BODY_BYTES) fail({ kind: 'bodyTooLarge', limitBytes: MAX_BODY_BYTES });
  const bytes = await readCapped(request.body, MAX_BODY_BYTES);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

async function readCapped(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The client stopped sending before the end (a cut-off upload): its request, not our fault.
      fail({ kind: 'bodyIncomplete' });
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      fail({ kind: 'bodyTooLarge', limitBytes: limit });
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
