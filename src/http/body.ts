import { fail } from '../failures';

/** Largest accepted request body (docs/pipeline.md step 4). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * How much of a body the Worker reads and throws away when it answers without needing it (an
 * error before the body, a body over MAX_BODY_BYTES). A server that answers a request without
 * reading its body breaks the client's connection, and under `wrangler dev` the next request as
 * well; reading the rest keeps both. Past this much the body is cancelled instead: the platform
 * then closes the connection (Cloudflare accepts bodies of 100 MB and more, which are not worth
 * reading to refuse).
 */
const MAX_DISCARDED_BYTES = 10 * 1024 * 1024;

/**
 * Reads the body as a JSON object, refusing more than MAX_BODY_BYTES without buffering it all:
 * the declared Content-Length is checked first, then the stream is counted as it arrives
 * (a chunked body has no Content-Length).
 */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const parsed = await readJsonValue(request);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail({ kind: 'bodyNotJson' });
  return parsed as Record<string, unknown>;
}

/**
 * Reads the body as any JSON value (a token update's body is a bare JSON string for some
 * attributes), with the same limits as {@link readJsonObject}.
 */
export async function readJsonValue(request: Request): Promise<unknown> {
  const text = await readBodyText(request);
  if (text === undefined) fail({ kind: 'bodyNotJson' });
  if (text.trim() === '') fail({ kind: 'bodyEmpty' });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    fail({ kind: 'bodyNotJson' });
  }
}

const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The body as UTF-8 text, at most MAX_BODY_BYTES (else bodyIsTooLarge, once the rest is
 * discarded); undefined when it is not valid UTF-8. A body with a declared Content-Length within
 * the cap is read in one call (the runtime enforces the length); one without (chunked) is
 * counted as it arrives.
 */
export async function readBodyText(request: Request): Promise<string | undefined> {
  const length = request.headers.get('Content-Length');
  const declared = length === null ? undefined : Number(length);
  if (declared !== undefined && declared > MAX_BODY_BYTES) {
    await drainBody(request);
    fail({ kind: 'bodyTooLarge', limitBytes: MAX_BODY_BYTES });
  }
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
 * Reads what is left of a body the answer did not need and throws it away (up to
 * MAX_DISCARDED_BYTES, then cancels it), so that the client's connection stays usable.
 */
export async function drainBody(request: Request): Promise<void> {
  if (request.bodyUsed || request.body === null) return; // `bodyUsed` first: reading `body` makes the stream's object
  await discard(request.body.getReader() as ReadableStreamDefaultReader<Uint8Array>, 0);
}

async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, readSoFar: number): Promise<void> {
  let total = readSoFar;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      total += value.byteLength;
      if (total > MAX_DISCARDED_BYTES) {
        await reader.cancel();
        return;
      }
    }
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
      await discard(reader, total);
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
