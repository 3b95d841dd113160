import { settingsOf } from '../config/settings';
import { describeError, logLine } from '../log';
import type { EventLogApi } from './event-log-api';
import type { EndpointTable } from './endpoint-table';
import type { EventStore } from './event-store';
import type { EndpointSet } from './event-shards';
import { eventTransport } from './event-transport';

/**
 * Which shards hold shard 0's endpoints (docs/events.md "Endpoints"): shard 0 owns the merchant's
 * endpoints and sends the whole set to every other shard after each change, before the answer; a
 * shard it could not reach is sent it again from shard 0's alarm, a moment later. Another shard
 * takes a set unless its copy is as new, holding, releasing or ending its deliveries to match.
 */

/** Shard 0 sends the endpoints again this long after a shard could not take them. */
export const COPY_RETRY_MS = 5_000;

/** What the copies need of their log shard. */
export interface CopiesHost {
  /** The shard's merchant (set by its first write). */
  owner(): string | undefined;
  /** Another shard of the merchant's log. */
  shard(index: number): EventLogApi;
  /** The alarm at `at` at the latest. */
  alarmBy(at: number): Promise<void>;
}

export class EndpointCopies {
  constructor(
    private readonly env: Env,
    private readonly endpoints: EndpointTable,
    private readonly store: EventStore,
    private readonly host: CopiesHost,
  ) {}

  /**
   * Shard 0, after each change of the endpoints (and from its alarm): sends the set to every shard
   * that has an older one, at once, and waits for them. A shard it cannot reach gets it from the
   * alarm, a moment later; the change itself is made, and answered, either way.
   */
  async copyToShards(): Promise<void> {
    const username = this.host.owner();
    const shards = settingsOf(this.env).eventLogShards;
    // No change yet (none made, or a log from before the split): the shards ask for it instead.
    if (username === undefined || shards <= 1 || this.endpoints.setVersion() === undefined) return;
    const set = this.endpoints.copy();
    const behind = this.shardsBehind(set.version);
    const sent = await Promise.allSettled(behind.map((i) => this.host.shard(i).syncEndpoints(username, i, set)));
    let missed = 0;
    sent.forEach((r, k) => {
      if (r.status === 'fulfilled') this.endpoints.copied(behind[k]!, set.version);
      else {
        missed++;
        logLine({ level: 'warn', event: 'event.endpoints.copy', shard: behind[k], cause: describeError(r.reason) });
      }
    });
    if (missed > 0) await this.host.alarmBy(eventTransport.now() + COPY_RETRY_MS);
  }

  /** Shard 0: the other shards that have not taken the set at `version` (none before the first change). */
  shardsBehind(version = this.endpoints.setVersion()): number[] {
    if (version === undefined) return [];
    const shards = settingsOf(this.env).eventLogShards;
    return Array.from({ length: shards - 1 }, (_, i) => i + 1).filter((i) => this.endpoints.copyVersion(i) < version);
  }

  /** Another shard: takes shard 0's set here; true when deliveries were released (to be sent). */
  take(set: EndpointSet): boolean {
    const change = this.endpoints.replace(set);
    if (!change) return false;
    const now = eventTransport.now();
    for (const id of change.removed) this.store.endAll(id);
    for (const id of change.disabled) this.store.hold(id);
    for (const id of change.enabled) this.store.release(id, now);
    return change.enabled.length > 0;
  }
}
