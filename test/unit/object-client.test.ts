import { describe, expect, expectTypeOf, it } from 'vitest';
import { FailureError } from '../../src/failures';
import {
  callDeadlineMs,
  failedCall,
  objectClient,
  type FailedCall,
  type Remote,
} from '../../src/storage/object-client';
import { StorageError } from '../../src/storage/storage-error';

/**
 * The client of every Durable Object (src/storage/object-client.ts): a new stub for every call
 * (Cloudflare documents that a stub that has thrown fails every later call), a deadline, and a
 * platform failure as a StorageError (503) while the object's own exception stays what it is.
 */

/** A stub as the runtime gives it: once one of its calls has thrown, every later call on it throws. */
class BreakingStub {
  private broken = false;
  constructor(private readonly failFirst: boolean) {}
  ping(): Promise<string> {
    if (this.broken) return Promise.reject(new Error('this stub is broken'));
    if (this.failFirst) {
      this.broken = true;
      return Promise.reject(Object.assign(new Error('disconnected'), { retryable: true }));
    }
    return Promise.resolve('pong');
  }
}

interface Ping {
  ping(): Promise<string>;
}

describe('objectClient', () => {
  it('takes a new stub for every call: a call after one that threw reaches the object', async () => {
    let made = 0;
    const client = objectClient<Ping>(() => new BreakingStub(++made === 1), 'Test', 1_000);
    await expect(client.ping()).rejects.toBeInstanceOf(StorageError);
    // On the stub that threw, this would fail for good.
    await expect(client.ping()).resolves.toBe('pong');
    expect(made).toBe(2);
  });

  it('marks an overloaded object, which callers then do not ask again', async () => {
    const overloaded = Object.assign(new Error('overloaded'), { overloaded: true });
    const client = objectClient<Ping>(() => ({ ping: () => Promise.reject(overloaded) }), 'Test', 1_000);
    const error = await client.ping().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).overloaded).toBe(true);
  });

  it("keeps the object's own exception (a bug: 500), and turns a domain failure sent back as a value into its FailureError", async () => {
    const own = Object.assign(new Error('bug'), { remote: true });
    const buggy = objectClient<Ping>(() => ({ ping: () => Promise.reject(own) }), 'Test', 1_000);
    await expect(buggy.ping()).rejects.toBe(own);
    const failing = objectClient<Ping>(
      () => ({ ping: () => Promise.resolve({ '~failed': { kind: 'tokenNotFound' } }) }),
      'Test',
      1_000,
    );
    const error = await failing.ping().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FailureError);
    expect((error as FailureError).failure).toEqual({ kind: 'tokenNotFound' });
  });

  it('types a method an object declares as answering `X | FailedCall` as answering X, and throws the failure it answered', async () => {
    interface Reading {
      read(): Promise<{ n: number } | FailedCall>;
    }
    const answer: FailedCall = failedCall(new FailureError({ kind: 'tokenNotFound' }));
    const client = objectClient<Remote<Reading>>(() => ({ read: () => Promise.resolve(answer) }), 'Test', 1_000);
    expectTypeOf(client.read).returns.resolves.toEqualTypeOf<{ n: number }>();
    const error = await client.read().catch((e: unknown) => e);
    expect((error as FailureError).failure).toEqual({ kind: 'tokenNotFound' });
  });

  it('ends a call that hangs at its deadline, which a wait inside the object lengthens', async () => {
    const client = objectClient<Ping>(() => ({ ping: () => new Promise<string>(() => {}) }), 'Test', 20);
    await expect(client.ping()).rejects.toThrow(/Test\.ping timed out after 20 ms/);
    expect(callDeadlineMs('ping', 20, { ping: 1_000 })).toBe(1_020);
  });
});
