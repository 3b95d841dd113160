import { FailureError } from '../failures';

/**
 * Storage failing: KV or a Durable Object threw, timed out, hung, or held something that is not
 * ours. Answered 503 serviceUnavailable with Retry-After (docs/errors.md); the message names the
 * call for the log (never a key's card data: keys hold none).
 */
export class StorageError extends FailureError {
  constructor(message: string, options?: { cause?: unknown }) {
    super({ kind: 'storageUnavailable' }, message, options);
    this.name = 'StorageError';
  }

  /**
   * The object said it is overloaded: Cloudflare's guidance is not to retry such an error (a
   * retry adds to the load), so callers that retry stop here.
   */
  get overloaded(): boolean {
    return (this.cause as { overloaded?: unknown } | undefined)?.overloaded === true;
  }
}

/**
 * The operation's result, or a {@link StorageError} when it fails or outlasts `ms`. The operation
 * itself cannot be cancelled and may still land later: every write path is built to tolerate
 * that (docs/storage.md "Deadlines and failures").
 */
export async function withDeadline<T>(
  operation: Promise<T>,
  ms: number,
  what: string,
  /** Errors to rethrow as they are (a Durable Object's own exception is a bug: a 500, not a 503). */
  passThrough: (e: unknown) => boolean = () => false,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageError(`${what} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([operation, timeout]);
  } catch (e) {
    if (e instanceof StorageError || passThrough(e)) throw e;
    throw new StorageError(`${what} failed`, { cause: e });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
