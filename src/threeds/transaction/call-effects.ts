import type { EventOutbox } from '../../storage/event-outbox';
import type { Outbox } from '../../storage/projection-outbox';
import type { EventType } from '../../events/event-types';
import type { SessionRecord } from '../session-record';

/**
 * What a call to the transaction's object leaves to do once its state has committed: the session
 * record's projection to write, the event to send, the alarm to set again. A decision stages its
 * effect in the same synchronous block as its write ({@link project}, {@link eventStaged},
 * {@link keepAlarm}); {@link around} carries them out when the call ends, whether it succeeded or
 * not, so none is left waiting for the alarm's wipe.
 */
export class CallEffects {
  /** A projection or an event was staged: tried when the call ends. */
  private staged = false;
  /** A time the alarm must keep moved (a challenge's watch, an AReq's answer, a hold): set it again. */
  private rearm = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly events: EventOutbox<EventType>,
    private readonly scheduleAlarm: () => Promise<void>,
  ) {}

  /** Stages the session record as the next projection of its key. */
  project(key: string, record: SessionRecord): void {
    this.outbox.stage(key, record, record.expiresAt);
    this.staged = true;
  }

  /** The transaction's event was staged in this call's block. */
  eventStaged(): void {
    this.staged = true;
  }

  /** This call moved a time the alarm must keep. */
  keepAlarm(): void {
    this.rearm = true;
  }

  /** The alarm is running: it writes, sends and sets itself again, whatever was staged. */
  takenByAlarm(): void {
    this.staged = this.rearm = false;
  }

  /**
   * Runs a call that may change the state; a projection it staged is then tried at once, after
   * the state committed, and its event sent after the answer (the alarm set by the write retries it).
   */
  async around<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      // Also after a call that failed midway: what it changed before (a 3RI's open hold) keeps its alarm.
      if (this.staged) {
        this.staged = this.rearm = false;
        // The projection's write and the event's append, both after the answer (the safety alarm
        // set now retries either); the alarm is set again once, when both have ended. A safety
        // alarm that failed to be set fails the call, but the append and the setting still go.
        let written: Promise<void> = Promise.resolve();
        try {
          ({ written } = await this.outbox.writeSoon(false));
        } finally {
          const sent = this.events.flush(false);
          void Promise.allSettled([written, sent]).then(() => this.scheduleAlarm().catch(() => undefined));
        }
      } else if (this.rearm) {
        this.rearm = false;
        await this.scheduleAlarm();
      }
    }
  }
}
