import { describeError, logLine } from '../log';
import { MAX_IN_FLIGHT, MAX_IN_FLIGHT_PER_ENDPOINT } from './delivery-rules';
import type { EndpointTable } from './endpoint-table';
import type { EventStore } from './event-store';
import { eventTransport } from './event-transport';

/**
 * Which of an event log shard's due deliveries are sent now (docs/events.md "Delivery"): one
 * loop per object, which every caller shares (an append, the alarm), each endpoint within its
 * share of the slots and the object within its own, the next attempt started as each ends (so the
 * next event of a subject follows its predecessor at once). A run is bounded; the alarm goes on
 * with the rest. The attempts themselves are delivery-attempt.ts's.
 */

/** Attempts one run starts at most; the alarm goes on with the rest at once (bounds an alarm's length). */
const MAX_ATTEMPTS_PER_RUN = 200;

export class DeliveryLoop {
  /** Deliveries being sent (key → endpoint): the immediate run and the alarm's may overlap. */
  private readonly inFlight = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  /** The one run of {@link deliverDue} under way, if any: every caller shares it. */
  private run: Promise<void> | undefined;
  /** Wakes the run's wait: new work arrived while its attempts are out. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly endpoints: EndpointTable,
    private readonly store: EventStore,
    /** One attempt of one delivery (delivery-attempt.ts). */
    private readonly attempt: (seq: number, endpointId: string) => Promise<void>,
  ) {}

  /**
   * One delivery loop per object: a call while one runs wakes it (to look for what is due now)
   * and shares it, so appends in a burst never stack loops that each wake on every attempt.
   */
  deliverDue(): Promise<void> {
    if (this.run !== undefined) {
      this.wake?.();
      return this.run;
    }
    const run = this.deliverRun().finally(() => {
      if (this.run === run) this.run = undefined;
    });
    this.run = run;
    return run;
  }

  /** Resolves once no delivery is in flight (for the tests: the attempts an alarm or an append started are over). */
  async whenIdle(): Promise<void> {
    while (this.run !== undefined || this.running.size > 0)
      await Promise.allSettled([...(this.run ? [this.run] : []), ...this.running]);
  }

  /**
   * Sends what is due, each endpoint within its share of the slots, starting the next as each
   * ends (so the next event of a subject follows its predecessor at once); returns once nothing is
   * in flight and nothing more is due, or once it started {@link MAX_ATTEMPTS_PER_RUN} (its
   * attempts still out finish by themselves; the alarm, set for what is due, goes on).
   */
  private async deliverRun(): Promise<void> {
    let started = 0;
    for (;;) {
      const now = eventTransport.now();
      for (const endpoint of this.endpoints.list()) {
        if (endpoint.state !== 'enabled') continue;
        const busy = [...this.inFlight.values()].filter((e) => e === endpoint.endpointId).length;
        const room = Math.min(
          MAX_IN_FLIGHT_PER_ENDPOINT - busy,
          MAX_IN_FLIGHT - this.inFlight.size,
          MAX_ATTEMPTS_PER_RUN - started,
        );
        for (const { seq, endpointId } of this.store.due(endpoint.endpointId, now, room)) {
          const key = `${seq} ${endpointId}`;
          if (this.inFlight.has(key)) continue;
          started++;
          this.inFlight.set(key, endpointId);
          const attempt: Promise<void> = this.attempt(seq, endpointId)
            .catch((e: unknown) => logLine({ level: 'error', event: 'event.delivery', cause: describeError(e) }))
            .finally(() => {
              this.inFlight.delete(key);
              this.running.delete(attempt);
            });
          this.running.add(attempt);
        }
      }
      if (this.running.size === 0 || started >= MAX_ATTEMPTS_PER_RUN) return;
      const woken = new Promise<void>((resolve) => (this.wake = resolve));
      await Promise.race([...this.running, woken]);
      this.wake = undefined;
    }
  }
}
