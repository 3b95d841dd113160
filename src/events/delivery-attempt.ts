import { describeError, logLine } from '../log';
import { afterFailure, ENDPOINT_FAILING_MS, RETRY_WINDOW_MS, type AttemptOutcome } from './delivery-rules';
import type { EndpointHealth } from './endpoint-health';
import type { EndpointTable } from './endpoint-table';
import type { EventStore, SendableRow } from './event-store';
import type { EndpointReport } from './event-shards';
import { eventTransport } from './event-transport';
import { sendEvent } from './send-event';

/**
 * One attempt of one delivery (docs/events.md "Delivery", "Retries"), and what its outcome makes
 * of the delivery: delivered; tried again with backoff and jitter (longer when the endpoint says
 * `Retry-After`) within its 3 days, then failed; or held, its endpoint disabled
 * (endpoint-health.ts decides when). The delivery loop (delivery-loop.ts) starts the attempts.
 */

/** A delivery being sent is not due again before its deadline and this margin (also after a reset). */
const SENDING_MARGIN_MS = 5_000;

/** What an attempt needs of its log shard. */
export interface AttemptHost {
  /** The shard's merchant (set by its first write). */
  owner(): string | undefined;
  /** This object's shard. */
  shardIndex(): number;
}

export class DeliveryAttempts {
  constructor(
    private readonly endpoints: EndpointTable,
    private readonly store: EventStore,
    private readonly health: EndpointHealth,
    private readonly host: AttemptHost,
  ) {}

  /**
   * One attempt of one delivery: the delivery and its endpoint read in one synchronous block (one
   * version of the endpoint: its URL and secrets), marked as being sent, sent, and its outcome
   * recorded. Never throws for the endpoint's sake.
   */
  async attempt(seq: number, endpointId: string): Promise<void> {
    const username = this.host.owner();
    const row = this.store.sendable(seq, endpointId);
    const now = eventTransport.now();
    const endpoint = row && username !== undefined ? this.endpoints.sending(username, endpointId, now) : undefined;
    if (!row || !endpoint) return;
    this.store.sending(row, now + eventTransport.timeoutMs + SENDING_MARGIN_MS);
    let keys: CryptoKey[];
    try {
      keys = await endpoint.keys;
    } catch (e) {
      // The token keys that seal the secret are missing or broken: the Worker is misconfigured. The
      // delivery waits a minute at a time, within its 3 days (then it fails: `recover` resends it).
      logLine({ level: 'error', event: 'event.secrets', cause: describeError(e) });
      const at = eventTransport.now();
      if (at - row.window_start >= RETRY_WINDOW_MS) this.store.failed(row, at);
      else this.store.retryAt(row, at + 60_000);
      return;
    }
    const outcome = await sendEvent(endpoint.endpoint.url, row.event_id, row.body, keys);
    await this.record(row, endpoint.endpoint.version, outcome);
  }

  /**
   * Records an attempt's outcome on its delivery and its endpoint's health. A `410`, or 3 days
   * of failures here, disables the endpoint: shard 0 does it, another shard asks shard 0 (whose
   * new set then holds the deliveries here); meanwhile the delivery goes on with its backoff.
   */
  private async record(row: SendableRow, version: number, outcome: AttemptOutcome): Promise<void> {
    const now = eventTransport.now();
    const status = outcome.status;
    const error = outcome.delivered ? undefined : outcome.error;
    const current = this.store.attempted(row, version, {
      at: now,
      ...(status !== undefined ? { status } : {}),
      ...(error !== undefined ? { error } : {}),
      durationMs: outcome.durationMs ?? 0,
    });
    let state: string = 'stale';
    if (outcome.delivered) {
      this.endpoints.health(row.endpoint_id, true, now);
      if (current) this.store.delivered(row, now);
      state = 'delivered';
    } else if (current) {
      const failingSince = this.endpoints.health(row.endpoint_id, false, now) ?? now;
      const report: EndpointReport | undefined =
        status === 410
          ? { kind: 'gone' }
          : now - failingSince >= ENDPOINT_FAILING_MS
            ? { kind: 'failing', since: failingSince }
            : undefined;
      if (
        report &&
        this.host.shardIndex() === 0 &&
        (report.kind === 'gone' || this.health.failingLongEnough(row.endpoint_id, failingSince, now))
      ) {
        // Disabled here: the delivery is held with the endpoint's others, not failed.
        await this.health.disable(row.endpoint_id, report.kind, now);
        state = 'held';
      } else {
        // Another shard asks shard 0 first: once disabled, shard 0's new set has held it here.
        if (report && this.host.shardIndex() !== 0) await this.health.report(row.endpoint_id, report);
        const next = afterFailure(
          { windowStart: row.window_start, failures: row.failures + 1, retryAfterMs: outcome.retryAfterMs },
          now,
          eventTransport.random(),
        );
        if (next.state === 'failed') this.store.failed(row, now);
        else this.store.retryAt(row, next.nextAt);
        state = next.state;
      }
    }
    if (outcome.delivered && this.host.shardIndex() !== 0 && this.health.successToReport(row.endpoint_id, now))
      await this.health.report(row.endpoint_id, { kind: 'delivered', at: now });
    const url = this.endpoints.get(row.endpoint_id)?.url;
    // The endpoint's origin only: a URL's path or query may hold the merchant's own secret.
    logLine({
      level: outcome.delivered ? 'info' : 'warn',
      event: 'event.delivery',
      eventId: row.event_id,
      eventType: row.event_type,
      endpointId: row.endpoint_id,
      ...(url !== undefined ? { endpoint: new URL(url).origin } : {}),
      attempts: row.attempts + 1,
      state,
      ...(status !== undefined ? { status } : {}),
      ...(error !== undefined ? { error } : {}),
    });
  }
}
