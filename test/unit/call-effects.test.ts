import { describe, expect, it, vi } from 'vitest';
import { CallEffects } from '../../src/threeds/transaction/call-effects';
import type { Outbox } from '../../src/storage/projection-outbox';
import type { EventOutbox } from '../../src/storage/event-outbox';
import type { EventType } from '../../src/events/event-types';
import type { SessionRecord } from '../../src/threeds/session-record';

/**
 * What a call leaves to do once it commits (src/threeds/transaction/call-effects.ts): the
 * projection's write, the event's append and one setting of the alarm after both, whatever
 * became of the safety alarm's setting.
 */
function effects(writeSoon: Outbox['writeSoon']) {
  const outbox = { stage: vi.fn(), writeSoon: vi.fn(writeSoon) };
  const events = { flush: vi.fn(() => Promise.resolve()) };
  const scheduleAlarm = vi.fn(() => Promise.resolve());
  const e = new CallEffects(outbox as unknown as Outbox, events as unknown as EventOutbox<EventType>, scheduleAlarm);
  return { e, outbox, events, scheduleAlarm };
}

const record = { expiresAt: Date.now() + 60_000 } as SessionRecord;

describe('CallEffects.around', () => {
  it('writes, appends and sets the alarm once after a call that staged a projection', async () => {
    const { e, outbox, events, scheduleAlarm } = effects(() => Promise.resolve({ written: Promise.resolve() }));
    await expect(e.around(() => (e.project('k', record), 'answer'))).resolves.toBe('answer');
    expect(outbox.writeSoon).toHaveBeenCalledOnce();
    expect(events.flush).toHaveBeenCalledWith(false);
    await vi.waitFor(() => expect(scheduleAlarm).toHaveBeenCalledOnce());
  });

  it("still appends the event and sets the alarm again when the safety alarm's setting failed", async () => {
    const { e, events, scheduleAlarm } = effects(() => Promise.reject(new Error('injected: setAlarm failed')));
    await expect(e.around(() => (e.project('k', record), 'answer'))).rejects.toThrow('injected: setAlarm failed');
    expect(events.flush).toHaveBeenCalledOnce();
    await vi.waitFor(() => expect(scheduleAlarm).toHaveBeenCalledOnce());
  });

  it('sets the alarm again, and nothing else, after a call that only moved a time', async () => {
    const { e, outbox, events, scheduleAlarm } = effects(() => Promise.resolve({ written: Promise.resolve() }));
    await e.around(() => e.keepAlarm());
    expect(outbox.writeSoon).not.toHaveBeenCalled();
    expect(events.flush).not.toHaveBeenCalled();
    expect(scheduleAlarm).toHaveBeenCalledOnce();
  });
});
