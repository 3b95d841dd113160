import { backoffMs } from '../backoff';
import { describeError, logLine } from '../log';
import { objectStorage, RETRY_MAX_MS } from './object-storage';

/**
 * Every object's alarm runs through here, so that it is never dropped and never spins
 * (docs/storage.md "Alarms"). Cloudflare retries an alarm handler that throws a few times and then
 * drops it: an object whose alarm threw for good would never write its projections, send its
 * events or end its session. So a failure is caught, logged, and the alarm set again with backoff
 * (1 s doubling to a minute, with the objects' retry base); a success sets it to the object's next
 * due time. The count of failures in a row is this instance's: a reset starts it again at the base
 * delay, which is a retry a little sooner, never a spin.
 */
export class AlarmRunner {
  private failures = 0;

  constructor(
    private readonly ctx: DurableObjectState,
    /** The object's name in the log line (its class). */
    private readonly what: string,
  ) {}

  /** Runs the alarm's `work`, then `rearm` (the next due time); after a failure, the backoff instead. */
  async run(work: () => Promise<void>, rearm: () => Promise<void>): Promise<void> {
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
      await this.ctx.storage.setAlarm(Date.now() + delay);
      return;
    }
    this.failures = 0;
    await rearm();
  }
}
