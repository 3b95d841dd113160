import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AlarmRunner } from '../../src/storage/alarm-runner';
import { threeDsObject } from './projection-helpers';
import { authenticateBody, newReference, threeDs } from './threeds-helpers';

/**
 * A transaction's object knows when its alarm is set (src/storage/alarm-runner.ts): read from
 * storage once per instance, then kept in memory, so that a change costs no `getAlarm`. What it
 * knows must never differ from storage: not after the alarm fires (the runtime clears it), not
 * after a `setAlarm` that fails.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

/** What the object's runner says its alarm is, and what storage says. */
function alarmsOf(stub: DurableObjectStub): Promise<[number | null, number | null]> {
  return runInDurableObject(stub, async (instance, state) => [
    await (instance as unknown as { alarms: AlarmRunner }).alarms.getAlarm(),
    await state.storage.getAlarm(),
  ]);
}

describe("a transaction object's alarm in memory", () => {
  it('is the alarm in storage after a change, and after the alarm fired', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    expect((await threeDs('authenticate', body)).status).toBe(200);
    const stub = threeDsObject(body.transactionReference as string);
    await vi.waitFor(
      async () => {
        const [known, stored] = await alarmsOf(stub);
        expect(stored).not.toBeNull();
        expect(known).toBe(stored);
      },
      { timeout: 10_000, interval: 50 },
    );
    await runDurableObjectAlarm(stub);
    const [known, stored] = await alarmsOf(stub);
    expect(known).toBe(stored);
  });

  it('is read again after a setAlarm that failed, and a setting of the time already set costs nothing', async () => {
    const [before, afterFailure, read, calls] = await runInDurableObject(
      threeDsObject(newReference()),
      async (_o, state) => {
        const runner = new AlarmRunner(state, 'test');
        const at = Date.now() + 60_000;
        await runner.setAlarm(at);
        const set = vi.spyOn(state.storage, 'setAlarm');
        await runner.setAlarm(at);
        const unchanged = set.mock.calls.length;
        set.mockRejectedValueOnce(new Error('injected: setAlarm failed'));
        await expect(runner.setAlarm(at + 1_000)).rejects.toThrow('injected');
        const get = vi.spyOn(state.storage, 'getAlarm');
        const known = await runner.getAlarm();
        const stored = await state.storage.getAlarm();
        await state.storage.deleteAlarm();
        return [unchanged, known, stored, get.mock.calls.length];
      },
    );
    // The same time again: no storage write.
    expect(before).toBe(0);
    // After the failure, the runner read storage: the time set before, not the one that failed.
    expect(afterFailure).toBe(read);
    expect(calls).toBe(2);
  });
});
