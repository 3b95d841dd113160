import { backoffMs } from '../backoff';
import { describeError, logLine } from '../log';
import { objectStorage, RETRY_MAX_MS } from './object-storage';

/** Where an object's alarm is read and set: its storage, or an {@link AlarmRunner} that remembers it. */
export interface AlarmSetting {
  getAlarm(): Promise<number | null>;
  setAlarm(at: number): Promise<void>;
}

/**
 * Every object's alarm runs through here, so that it is never dropped and never spins
 * (docs/storage.md "Alarms"). Cloudflare retries an alarm handler that throws a few times and then
 * drops it: an object whose alarm threw for good would never write its projections, send its
 * events or end its session. So a failure is caught, logged, and the alarm set again with backoff
 * (1 s doubling to a minute, with the objects' retry base); a success sets it to the object's next
 * due time. The count of failures in a row is this instance's: a reset starts it again at the base
 * delay, which is a retry a little sooner, never a spin.
 *
 * It also knows when the alarm is set, for an object that reads and sets it only through here
 * ({@link getAlarm}, {@link setAlarm}; the object is the only one that sets its alarm): read from
 * storage once per instance, then kept in memory, so that a change costs no `getAlarm` and setting
 * the time already set costs nothing. What the runtime does is followed: the alarm is cleared when
 * it fires (the handler starts with the time unknown, read again if asked), and by `deleteAll`
 * ({@link cleared}); a `setAlarm` is known once it has landed, and one that fails leaves the time
 * unknown (read again): with concurrent calls, and a setting that fails or hangs, memory never says
 * an alarm is set that storage does not have.
 */
export class AlarmRunner implements AlarmSetting {
  private failures = 0;
  /**
   * When the alarm is set (null: not set), as last read or as set by a setting that landed;
   * undefined: unknown (read it), as while a setting is on its way.
   */
  private scheduled: number | null | undefined;
  /** Counts the settings, so that a read or a setting answered after a newer setting does not overwrite it. */
  private settings = 0;
  /** The newest setting while it is on its way: a setting of the same time waits on it (and fails with it). */
  private pending: { at: number; done: Promise<void> } | undefined;

  constructor(
    private readonly ctx: DurableObjectState,
    /** The object's name in the log line (its class). */
    private readonly what: string,
  ) {}

  /** Runs the alarm's `work`, then `rearm` (the next due time); after a failure, the backoff instead. */
  async run(work: () => Promise<void>, rearm: () => Promise<void>): Promise<void> {
    // The alarm that fired is no longer set (the runtime clears it): read again if asked, which
    // also covers a setting made between its firing and this handler.
    this.forget(undefined);
    try {
      await work();
    } catch (e) {
      this.failures += 1;
      const delay = backoffMs(this.failures, objectStorage.retryBaseMs, RETRY_MAX_MS);
      logLine({
        level: 'error',
        event: 'alarm.failed',
        object: this.what,
        failures: this.failures,
        cause: describeError(e),
      });
      await this.setAlarm(Date.now() + delay);
      return;
    }
    this.failures = 0;
    await rearm();
  }

  /**
   * When the alarm is set (null: not set): from storage once per instance, then from memory. While
   * a setting is on its way, from storage: memory never claims a time that a setting may yet fail
   * to store.
   */
  async getAlarm(): Promise<number | null> {
    if (this.scheduled !== undefined) return this.scheduled;
    const settings = this.settings;
    const at = await this.ctx.storage.getAlarm();
    // A setting made meanwhile, or still on its way, is newer than what was read.
    if (this.settings === settings && this.pending === undefined) this.scheduled = at;
    return at;
  }

  /**
   * Sets the alarm to `at`: a storage write only when it is not set there already, or being set
   * to it (then this waits on that setting, and fails if it fails). Known once it landed; a
   * setting that fails leaves the time unknown (read again).
   */
  async setAlarm(at: number): Promise<void> {
    if (this.pending?.at === at) return this.pending.done;
    if (this.pending === undefined && this.scheduled === at) return;
    this.settings += 1;
    const settings = this.settings;
    this.scheduled = undefined;
    const done = this.ctx.storage.setAlarm(at).then(
      () => {
        // Storage applies the settings in order: the newest one's time is the alarm.
        if (this.settings === settings) this.scheduled = at;
      },
      (e: unknown) => {
        if (this.settings === settings) this.scheduled = undefined;
        throw e;
      },
    );
    const pending = { at, done };
    this.pending = pending;
    const settled = (): void => {
      if (this.pending === pending) this.pending = undefined;
    };
    done.then(settled, settled);
    return done;
  }

  /** The alarm is not set any more: it fired, or the object's storage was deleted (`deleteAll`). */
  cleared(): void {
    this.forget(null);
  }

  /** What is known from now (null: not set; undefined: read it), whatever a setting on its way says. */
  private forget(scheduled: null | undefined): void {
    this.settings += 1;
    this.pending = undefined;
    this.scheduled = scheduled;
  }
}
