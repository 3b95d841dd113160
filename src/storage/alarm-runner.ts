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
 * ({@link cleared}); a `setAlarm` that fails leaves the time unknown (read again).
 */
export class AlarmRunner implements AlarmSetting {
  private failures = 0;
  /** When the alarm is set (null: not set), as last read or set; undefined: unknown, read it. */
  private scheduled: number | null | undefined;
  /** Counts the settings, so that a read answered after a setting does not overwrite it. */
  private settings = 0;

  constructor(
    private readonly ctx: DurableObjectState,
    /** The object's name in the log line (its class). */
    private readonly what: string,
  ) {}

  /** Runs the alarm's `work`, then `rearm` (the next due time); after a failure, the backoff instead. */
  async run(work: () => Promise<void>, rearm: () => Promise<void>): Promise<void> {
    // The alarm that fired is no longer set (the runtime clears it): read again if asked, which
    // also covers a setting made between its firing and this handler.
    this.settings += 1;
    this.scheduled = undefined;
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

  /** When the alarm is set (null: not set): from storage once per instance, then from memory. */
  async getAlarm(): Promise<number | null> {
    if (this.scheduled !== undefined) return this.scheduled;
    const settings = this.settings;
    const at = await this.ctx.storage.getAlarm();
    // A setting made meanwhile is newer than what was read.
    if (this.settings === settings) this.scheduled = at;
    return this.scheduled === undefined ? at : this.scheduled;
  }

  /** Sets the alarm to `at`: a storage write only when it is not set there already. */
  async setAlarm(at: number): Promise<void> {
    if (this.scheduled === at) return;
    this.settings += 1;
    // Known from now: a later read or setting sees it (storage applies the settings in order).
    this.scheduled = at;
    try {
      await this.ctx.storage.setAlarm(at);
    } catch (e) {
      this.scheduled = undefined;
      throw e;
    }
  }

  /** The alarm is not set any more: it fired, or the object's storage was deleted (`deleteAll`). */
  cleared(): void {
    this.settings += 1;
    this.scheduled = null;
  }
}
