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

const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The body as UTF-8 text, at most MAX_BODY_BYTES (else bodyIsTooLarge); undefined when it is not
 * valid UTF-8. A body with a declared Content-Length within the cap is read in one call (the
 * runtime enforces the length); one without (chunked) is counted as it arrives.
 */
export async function readBodyText(request: Request): Promise<string | undefined> {
  const length = request.headers.get('Content-Length');
  const declared = length === null ? undefined : Number(length);
  if (declared !== undefined && declared > MAX_BODY_BYTES) fail({ kind: 'bodyTooLarge', limitBytes: MAX_BODY_BYTES });
  let bytes: Uint8Array;
  if (declared !== undefined && Number.isInteger(declared)) {
    try {
      bytes = new Uint8Array(await request.arrayBuffer());
    } catch {
      // The client stopped sending before the end (a cut-off upload): its request, not our fault.
      fail({ kind: 'bodyIncomplete' });
    }
  } else {
    bytes = await readCapped(request.body, MAX_BODY_BYTES);
  }
  try {
    return UTF8_STRICT.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Reads what is left of a body the answer did not need (up to the cap), so that the client's
 * keep-alive connection stays usable: a server that answers a POST without reading its body has
 * to close the connection. A larger or broken body is cancelled instead.
 */
export async function drainBody(request: Request): Promise<void> {
  if (request.body === null || request.bodyUsed) return;
  const length = Number(request.headers.get('Content-Length') ?? 'NaN');
  try {
    if (Number.isInteger(length) && length <= MAX_BODY_BYTES) await request.arrayBuffer();
    else await request.body.cancel();
  } catch {
    // A client that went away: nothing to keep alive.
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
