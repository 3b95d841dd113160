import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Outbox } from '../../src/storage/projection-outbox';
import { quiet } from './helpers';
import { threeDsObject } from './projection-helpers';
import { authenticateBody, threeDs } from './threeds-helpers';
import { createToken, freshCard, putAttribute, tokenBody, tokenGroupOf } from './token-helpers';

/**
 * The objects' alarms (docs/storage.md "Alarms"): an alarm whose work throws is set again with
 * backoff (Cloudflare would retry a throwing handler a few times and then drop it: the object's
 * projections, events and wipe would never happen), and a change's write never moves an earlier
 * alarm (a challenge's deadline) later.
 */

type Json = Record<string, any>;

afterEach(() => {
  vi.restoreAllMocks();
});

const alarmOf = (stub: DurableObjectStub): Promise<number | null> =>
  runInDurableObject(stub, (_o, state) => state.storage.getAlarm());

describe('an alarm whose work throws', () => {
  it("is set again with backoff, not dropped, and the next one does the work (a token's object)", async () => {
    quiet();
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const stub = tokenGroupOf(token);
    const flush = vi.spyOn(Outbox.prototype, 'flush').mockRejectedValueOnce(new Error('injected: flush failed'));
    const before = Date.now();
    // The handler does not throw: the runtime would retry it a few times, then drop it.
    await expect(runDurableObjectAlarm(stub)).resolves.toBe(true);
    const alarm = await alarmOf(stub);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeGreaterThanOrEqual(before);
    // The next alarm runs the work as usual.
    await expect(runDurableObjectAlarm(stub)).resolves.toBe(true);
    expect(flush).toHaveBeenCalledTimes(2);
  });

  it("is set again with backoff, not dropped (a 3DS transaction's object)", async () => {
    quiet();
    const body = authenticateBody();
    expect((await threeDs('authenticate', body)).status).toBe(200);
    const stub = threeDsObject(body.transactionReference as string);
    vi.spyOn(Outbox.prototype, 'flush').mockRejectedValueOnce(new Error('injected: flush failed'));
    await expect(runDurableObjectAlarm(stub)).resolves.toBe(true);
    expect(await alarmOf(stub)).not.toBeNull();
  });
});

describe("a change's write after the answer", () => {
  it('leaves an alarm set sooner where it is', async () => {
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const stub = tokenGroupOf(token);
    const soon = Date.now() + 300;
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(soon));
    // The write after the answer does not come back (so the object does not set its alarm anew):
    // what is left is what the change itself did to the alarm.
    vi.spyOn(Outbox.prototype, 'flush').mockReturnValue(new Promise<void>(() => {}));
    expect((await putAttribute(token.tokenPaymentInstrument.href as string, 'cardHolderName', 'Ada B')).status).toBe(
      204,
    );
    // Not moved to the write's safety net 2 s ahead.
    expect(await alarmOf(stub)).toBe(soon);
  });
});
