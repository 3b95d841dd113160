import { FailureError, type Failure } from '../failures';
import { withDeadline } from './storage-error';

/**
 * The client of every Durable Object of the service (the model: a generic stub accessor below
 * every class). A call that fails (the object is overloaded, reset, unreachable) or outlasts its
 * deadline becomes a StorageError, answered 503 with Retry-After like a KV failure: the step's
 * state is then either unchanged or the change its retry finds done (docs/storage.md "Deadlines
 * and failures"). Each domain types its object's client by the RPC interface in its own
 * `*-api.ts`; nothing here knows a domain.
 */

/**
 * A Durable Object namespace as the clients use it, whatever class it holds: typed without the
 * class, so that no caller imports an object's class to reach it.
 */
export interface ObjectNamespace {
  idFromName(name: string): DurableObjectId;
  idFromString(id: string): DurableObjectId;
  get(id: DurableObjectId): object;
}

/**
 * An object's RPC methods as a caller sees them: each answers a promise of its plain result. A
 * method the object declares as answering `X | FailedCall` (a domain failure sent back as a value)
 * answers `X` here: {@link objectClient} throws the FailedCall again as the FailureError it was.
 */
export type Remote<T> = {
  [M in keyof T]: T[M] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Exclude<Awaited<R>, FailedCall>>
    : never;
};

/** The deadline of a call to an object's method: the wait it may do inside the object (`waits`), plus the storage deadline. */
export function callDeadlineMs(
  method: string,
  timeoutMs: number,
  waits: Readonly<Record<string, number>> = {},
): number {
  return (waits[method] ?? 0) + timeoutMs;
}

/**
 * A client of one object: every method call gets a deadline (`waits` lengthens it for the calls
 * that may wait inside the object), and a failure becomes a StorageError naming the call.
 *
 * Each call takes a new stub from `stubOf` (`namespace.get(id)`, which costs no round trip):
 * Cloudflare documents that once a stub has thrown, every later call on it fails too, so a retry
 * on the same stub could never succeed (docs/storage.md "Deadlines and failures").
 */
export function objectClient<T extends object>(
  stubOf: () => object,
  what: string,
  timeoutMs: number,
  waits: Readonly<Record<string, number>> = {},
): T {
  return new Proxy({} as T, {
    get(_target, property) {
      // Never thenable: an RPC stub answers any property name, `then` included.
      if (property === 'then' || typeof property !== 'string') return undefined;
      const deadline = callDeadlineMs(property, timeoutMs, waits);
      return async (...args: unknown[]) => {
        const answer = await withDeadline(
          Promise.resolve().then(() => {
            const stub = stubOf();
            // Reflect.apply, not method.apply: on an RPC stub, `.apply` would name a remote property.
            return Reflect.apply(Reflect.get(stub, property) as (...a: unknown[]) => unknown, stub, args);
          }),
          deadline,
          `${what}.${property}`,
          // An exception thrown by the object's own code is a bug, not an outage: it stays a 500.
          isOwnException,
        );
        if (isFailed(answer)) throw new FailureError(answer[FAILED], `${what}.${property}: ${answer[FAILED].kind}`);
        return answer;
      };
    },
  });
}

/**
 * A domain failure an object met (a token sealed with a key no longer configured), sent back as
 * a value: an exception's class does not cross RPC, so the Worker could not tell it from a bug.
 * The client throws it again as the FailureError it was ({@link objectClient}).
 */
export interface FailedCall {
  [FAILED]: Failure;
}

/** The key of a failure sent back as a value: a name no object's answer has (`~`, like the outage mark). */
const FAILED = '~failed';

/** The answer an object gives for a FailureError its code threw. */
export function failedCall(e: FailureError): FailedCall {
  return { [FAILED]: e.failure };
}

/**
 * An object's call that may throw a domain failure, answering it as a value instead (which the
 * client throws again); any other error is thrown as it is.
 */
export async function failureAsValue<T>(work: Promise<T>): Promise<T | FailedCall> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof FailureError) return failedCall(e);
    throw e;
  }
}

function isFailed(answer: unknown): answer is FailedCall {
  return typeof answer === 'object' && answer !== null && FAILED in answer;
}

/**
 * Whether an error is an exception the object's own code threw (the runtime marks those
 * `remote`), rather than the platform failing to reach or run the object (`retryable`,
 * `overloaded`, or no mark).
 */
function isOwnException(e: unknown): boolean {
  const flags = e as { remote?: boolean; retryable?: boolean; overloaded?: boolean } | null;
  return flags?.remote === true && flags.retryable !== true && flags.overloaded !== true;
}
