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

  it('does not claim a setting still on its way: a read asks storage, and a setting of the same time fails with it', async () => {
    const [whileOnItsWay, second, afterFailure, stored, writes] = await runInDurableObject(
      threeDsObject(newReference()),
      async (_o, state) => {
        const runner = new AlarmRunner(state, 'test');
        const at = Date.now() + 60_000;
        let fail: (e: Error) => void = () => {};
        const set = vi
          .spyOn(state.storage, 'setAlarm')
          .mockImplementationOnce(() => new Promise<void>((_resolve, reject) => (fail = reject)));
        const first = runner.setAlarm(at);
        const again = runner.setAlarm(at).then(
          () => 'set',
          (e: Error) => e.message,
        );
        // The setting hangs: storage has no alarm, and neither does the runner.
        const known = await runner.getAlarm();
        fail(new Error('injected: setAlarm failed'));
        await expect(first).rejects.toThrow('injected');
        return [known, await again, await runner.getAlarm(), await state.storage.getAlarm(), set.mock.calls.length];
      },
    );
    expect(whileOnItsWay).toBeNull();
    // The same time again waited on the setting on its way, and was told it failed.
    expect(second).toMatch('injected');
    expect(afterFailure).toBeNull();
    expect(stored).toBeNull();
    expect(writes).toBe(1);
  });

  it('is what storage has after 20 concurrent settings and reads, some of them failing', async () => {
    const [known, stored] = await runInDurableObject(threeDsObject(newReference()), async (_o, state) => {
      const runner = new AlarmRunner(state, 'test');
      const base = Date.now() + 60_000;
      const setAlarm = state.storage.setAlarm.bind(state.storage);
      let n = 0;
      // Every third setting fails, after a turn of the event loop (as a storage write answers).
      vi.spyOn(state.storage, 'setAlarm').mockImplementation(async (at: number | Date) => {
        const failing = n++ % 3 === 2;
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (failing) throw new Error('injected: setAlarm failed');
        return setAlarm(at);
      });
      await Promise.allSettled(
        Array.from({ length: 20 }, async (_, i) => {
          await runner.getAlarm();
          await runner.setAlarm(base + (i % 7) * 1_000);
          await runner.getAlarm();
        }),
      );
      vi.restoreAllMocks();
      const result = [await runner.getAlarm(), await state.storage.getAlarm()];
      await state.storage.deleteAlarm();
      return result;
    });
    expect(known).toBe(stored);
  });
});
