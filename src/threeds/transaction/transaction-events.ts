import { settingsOf } from '../../config/settings';
import type { EventType } from '../../events/event-types';
import type { EventOutbox, StagedEvent } from '../../storage/event-outbox';
import type { EventScope, TransactionFacts } from '../transaction-api';
import { transactionOutcome, transactionState, withoutAuthenticationValue } from '../transaction-outcome';

/**
 * A transaction's `threeDS.authentication.completed` event (docs/events.md): whose transaction it
 * is (kept from its first authenticate), and the event staged once, in the same synchronous block
 * as the write that records the final outcome, so the outcome and its event commit together.
 */

/** The facts a transaction's event is rendered from, when it leaves. */
interface CompletedFacts {
  scope: EventScope;
  facts: TransactionFacts;
}

export class TransactionEvents {
  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly objectId: string,
    private readonly outbox: () => EventOutbox<EventType>,
  ) {}

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed").
   */
  createTables(): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS event_scope (id INTEGER PRIMARY KEY CHECK (id = 1), since INTEGER NOT NULL,
        scope TEXT NOT NULL, staged INTEGER NOT NULL DEFAULT 0)`);
  }

  /** Keeps who the transaction's event goes to, from its (first) authenticate. */
  keepScope(scope: EventScope, now: number): void {
    this.sql.exec('INSERT OR IGNORE INTO event_scope (id, since, scope) VALUES (1, ?, ?)', now, JSON.stringify(scope));
  }

  scope(): EventScope | undefined {
    const row = this.sql.exec<{ scope: string }>('SELECT scope FROM event_scope').toArray()[0];
    return row ? (JSON.parse(row.scope) as EventScope) : undefined;
  }

  /** The first authenticate's start (live: while its AReq is in flight, the transaction exists). */
  since(): number | undefined {
    return this.sql.exec<{ since: number }>('SELECT since FROM event_scope').toArray()[0]?.since;
  }

  /**
   * Stages the event once the final outcome is recorded (`factsNow` says what is recorded); once
   * per session (the state cannot leave `completed`). True when it staged it.
   */
  notice(factsNow: () => TransactionFacts | undefined): boolean {
    const row = this.sql
      .exec<{ since: number; scope: string; staged: number }>('SELECT since, scope, staged FROM event_scope')
      .toArray()[0];
    if (!row || row.staged === 1) return false;
    const facts = factsNow();
    if (!facts || transactionState(facts) !== 'completed') return false;
    const scope = JSON.parse(row.scope) as EventScope;
    this.sql.exec('UPDATE event_scope SET staged = 1');
    const completed: CompletedFacts = { scope, facts };
    this.outbox().stage(scope.username, {
      eventId: `3ds_${this.objectId}_${row.since}`,
      eventType: 'threeDS.authentication.completed',
      subject: `3ds:${this.objectId}`,
      createdAt: facts.updatedAt,
      entity: scope.entity,
      facts: completed,
    });
    return true;
  }

  /** The event's data: the outcome as `verification` shows it, without `authenticationValue`. */
  async render(event: StagedEvent<EventType>): Promise<Record<string, unknown>> {
    const { scope, facts } = event.facts as CompletedFacts;
    const context = { key: settingsOf(this.env).jwtKey, baseUrl: scope.baseUrl };
    const { result } = await transactionOutcome(context, facts, scope.transactionReference, scope.apiVersion);
    return withoutAuthenticationValue(result ?? {}) as Record<string, unknown>;
  }

  wipe(): void {
    this.sql.exec('DELETE FROM event_scope');
  }
}
