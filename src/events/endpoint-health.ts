import { describeError, logLine } from '../log';
import { ENDPOINT_FAILING_MS } from './delivery-rules';
import type { EventLogApi } from './event-log-api';
import type { DisabledReason } from './endpoint-rules';
import type { EndpointTable } from './endpoint-table';
import type { Audience, EventStore } from './event-store';
import type { EndpointReport } from './event-shards';
import type { NewEvent } from './event-types';

/**
 * When an endpoint is disabled for its failures (docs/events.md "Endpoint health"): one that
 * answers `410`, or has had no success for 3 days, is disabled by shard 0 alone, which owns the
 * endpoints; another shard tells shard 0 what it met there (and, now and then, of a success) and
 * counts its failures again from the last success shard 0 knows. A disabled endpoint's deliveries
 * are held, and the merchant's other endpoints are told.
 */

/** A shard other than 0 tells shard 0 of a success at most this often per endpoint. */
const SUCCESS_REPORT_MS = 60 * 60 * 1000;

/** What the health of endpoints needs of its log shard. */
export interface HealthHost {
  /** The shard's merchant (set by its first write). */
  owner(): string | undefined;
  /** Another shard of the merchant's log. */
  shard(index: number): EventLogApi;
  /** Adds an event and its deliveries (event-log.ts); false when it was there already. */
  add(event: NewEvent, audience: Audience, now: number): boolean;
  /** Shard 0: sends the endpoints to the shards that have an older set (endpoint-copies.ts). */
  copyToShards(): Promise<void>;
  /** Sends what is due after the answer, with the alarm as the safety net. */
  deliverSoon(): Promise<void>;
}

export class EndpointHealth {
  /** When this shard last told shard 0 of a success, per endpoint (kept in memory: a reset only reports again). */
  private readonly successReported = new Map<string, number>();

  constructor(
    private readonly endpoints: EndpointTable,
    private readonly store: EventStore,
    private readonly host: HealthHost,
  ) {}

  /**
   * Shard 0: what another shard met at an endpoint. `gone` disables it; `failing` (3 days there)
   * disables it unless a success is known since; `delivered` is such a success. Answers the last
   * success known, from which the shard counts its failures again.
   */
  async reported(endpointId: string, report: EndpointReport, now: number): Promise<{ lastSuccessAt?: number }> {
    if (report.kind === 'delivered') this.endpoints.delivered(endpointId, report.at);
    else if (report.kind === 'gone' || this.failingLongEnough(endpointId, report.since, now))
      await this.disable(endpointId, report.kind, now);
    const lastSuccessAt = this.endpoints.lastSuccessAt(endpointId);
    return lastSuccessAt !== undefined ? { lastSuccessAt } : {};
  }

  /** Shard 0: an endpoint failing since `since` (in some shard) with no success known for 3 days. */
  failingLongEnough(endpointId: string, since: number, now: number): boolean {
    const lastSuccess = this.endpoints.lastSuccessAt(endpointId) ?? -Infinity;
    return now - since >= ENDPOINT_FAILING_MS && now - lastSuccess >= ENDPOINT_FAILING_MS;
  }

  /** Another shard: whether a success at an endpoint is to be told to shard 0 (at most once an hour). */
  successToReport(endpointId: string, now: number): boolean {
    const reported = this.successReported.get(endpointId);
    return reported === undefined || now - reported >= SUCCESS_REPORT_MS;
  }

  /**
   * Tells shard 0 what this shard met at an endpoint (shard 0 acts on it itself); a report that
   * fails is made again at the next attempt's outcome. Never throws.
   */
  async report(endpointId: string, report: EndpointReport): Promise<void> {
    const username = this.host.owner()!;
    try {
      const answer = await this.host.shard(0).reportEndpoint(username, endpointId, report);
      if (report.kind === 'delivered') this.successReported.set(endpointId, report.at);
      if (answer.lastSuccessAt !== undefined) this.endpoints.failingNoEarlierThan(endpointId, answer.lastSuccessAt);
    } catch (e) {
      logLine({ level: 'warn', event: 'event.endpoint.report', endpointId, cause: describeError(e) });
    }
  }

  /**
   * Shard 0: disables an endpoint for the log's own reason: its deliveries are held (here, and in
   * the other shards once they have the new set), and the merchant's other endpoints get an
   * `events.endpoint.disabled` event (one per disabling).
   */
  async disable(endpointId: string, reason: DisabledReason, now: number): Promise<void> {
    if (!this.endpoints.disable(endpointId, reason)) return;
    this.store.hold(endpointId);
    const endpoint = this.endpoints.get(endpointId)!;
    const event: NewEvent = {
      eventId: `evt_disabled_${endpointId}_${now}`,
      eventType: 'events.endpoint.disabled',
      subject: `endpoint:${endpointId}`,
      createdAt: now,
      entity: '',
      data: { endpointId, url: endpoint.url, disabledReason: reason },
    };
    this.host.add(event, { except: endpointId }, now);
    logLine({
      level: 'warn',
      event: 'event.endpoint.disabled',
      endpointId,
      reason,
      endpoint: new URL(endpoint.url).origin,
    });
    await this.host.copyToShards();
    await this.host.deliverSoon();
  }
}
