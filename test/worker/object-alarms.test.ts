import { merchantEventLog } from '../../src/events/event-log-api';
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FailureError } from '../../src/failures';
import { MAX_RENDER_FAILURES } from '../../src/storage/event-outbox';
import { Outbox } from '../../src/storage/projection-outbox';
import { TokenGroup } from '../../src/tokens/token-group';
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

  it("is set again with backoff when a token object's queued work meets a domain failure (not taken as done)", async () => {
    quiet();
    const errors = vi.spyOn(console, 'error');
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const stub = tokenGroupOf(token);
    // The pruning, run in the object's queue, meets a failure of the service's own format.
    vi.spyOn(TokenGroup.prototype as unknown as { prune(now: number): void }, 'prune').mockImplementationOnce(() => {
      throw new FailureError({ kind: 'storageUnavailable' }, 'injected: prune failed');
    });
    const before = Date.now();
    await expect(runDurableObjectAlarm(stub)).resolves.toBe(true);
    // Logged, and the alarm set to the retry's time, not to the token's end (a year or more away).
    expect(errors.mock.calls.map((c) => String(c[0])).join('\n')).toContain('alarm.failed');
    const alarm = await alarmOf(stub);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThan(before + 5 * 60_000);
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
    // Inside the object, in one event (its alarm cannot fire meanwhile, however slow the machine):
    // an alarm due sooner than the write's 2 s safety net, then a change's write after the answer,
    // which does not come back (so nothing sets the alarm anew).
    const [soon, after] = await runInDurableObject(tokenGroupOf(token), async (_o, state) => {
      const due = Date.now() + 300;
      await state.storage.setAlarm(due);
      vi.spyOn(Outbox.prototype, 'flush').mockReturnValue(new Promise<void>(() => {}));
      await new Outbox({ ctx: state, env, reschedule: () => Promise.resolve() }).writeSoon();
      return [due, await state.storage.getAlarm()];
    });
    expect(after).toBe(soon);
  });
});

describe('an event that can never be rendered', () => {
  it('goes to the dead letters after its tries, and the events after it are sent', async () => {
    quiet();
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const stub = tokenGroupOf(token);
    // An event whose facts no code can render (a token record without its card), staged first.
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec(
        `INSERT INTO events_out (event_id, username, event_type, subject, created_at, entity, facts)
         VALUES ('tok_broken_v1', 'test-merchant', 'tokens.token.updated', 'broken', ?, 'default', '{}')`,
        Date.now(),
      );
    });
    // A real event after it.
    const href = token.tokenPaymentInstrument.href as string;
    expect((await putAttribute(href, 'cardHolderName', 'After The Broken One')).status).toBe(204);
    for (let i = 0; i < MAX_RENDER_FAILURES; i++) {
      // Each try as soon as the alarm comes (the test does not wait out the backoff).
      await runInDurableObject(stub, (_o, state) => state.storage.sql.exec('DELETE FROM events_out_backoff'));
      await runDurableObjectAlarm(stub);
    }
    const { dead, staged } = await runInDurableObject(stub, (_o, state) => ({
      dead: state.storage.sql
        .exec<{ event_id: string; stage: string }>('SELECT event_id, stage FROM events_dead')
        .toArray(),
      staged: state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM events_out').one().n,
    }));
    expect(dead).toEqual([{ event_id: 'tok_broken_v1', stage: 'render' }]);
    expect(staged).toBe(0);
    const page = await merchantEventLog(env, 'test-merchant', 5_000).list({});
    const ids = page.events.map((e) => e.eventId);
    expect(ids).toContain(`tok_${token.tokenId}_v2`);
    expect(ids).not.toContain('tok_broken_v1');
  });
});
