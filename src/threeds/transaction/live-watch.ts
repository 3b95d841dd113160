import { describeError, logLine } from '../../log';
import { endedUnwatched, look, nextLookAt, objectProvider } from '../live/challenge-watch';
import type { LiveTransaction } from './live-transaction';

/**
 * The object watches an open live challenge (docs/threeds.md "The object watches an open
 * challenge"): from its alarm it asks the 3DS Server provider for the RReq when a look is due
 * (src/threeds/live/challenge-watch.ts says when), and records what it says; the first result
 * recorded stays, whoever recorded it. Once no RReq can come, the challenge ends as not completed.
 */
export class LiveWatch {
  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly live: LiveTransaction,
  ) {}

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed").
   */
  createTables(): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS live_watch (id INTEGER PRIMARY KEY CHECK (id = 1), asked_at INTEGER NOT NULL,
        failed INTEGER NOT NULL)`);
  }

  /** Asks the provider for an open challenge's RReq when a look is due. */
  async watch(now: number, baseUrl: string): Promise<void> {
    const open = this.live.challenge();
    if (!open || open.result || now < this.nextLook()!) return;
    const { challenge } = open;
    try {
      const answer = await look(objectProvider.of(this.env), challenge, baseUrl, now);
      // The session may have ended (and been wiped) while the provider answered: then nothing stays.
      if (!this.stillOpen(challenge.reference)) return;
      this.sql.exec('INSERT OR REPLACE INTO live_watch (id, asked_at, failed) VALUES (1, ?, 0)', now);
      if (answer) this.live.decide(challenge.reference, answer, Date.now());
    } catch (e) {
      if (this.stillOpen(challenge.reference))
        this.sql.exec('INSERT OR REPLACE INTO live_watch (id, asked_at, failed) VALUES (1, ?, 1)', now);
      logLine({ level: 'warn', event: 'challenge.watch', cause: describeError(e) });
    }
  }

  /** The session ends: an open challenge whose RReq can no longer come ends as not completed. */
  closeIfUnwatched(now: number, baseUrl: string): void {
    const open = this.live.challenge();
    if (!open || open.result) return;
    const ended = endedUnwatched(open.challenge, baseUrl, now);
    if (ended) this.live.decide(open.challenge.reference, ended, now);
  }

  /** When the watch looks next; undefined without an open live challenge. */
  nextLook(): number | undefined {
    const open = this.live.challenge();
    if (!open || open.result) return undefined;
    const row = this.sql.exec<{ asked_at: number; failed: number }>('SELECT * FROM live_watch').toArray()[0];
    return nextLookAt(open.challenge, row ? { at: row.asked_at, failed: row.failed === 1 } : undefined);
  }

  wipe(): void {
    this.sql.exec('DELETE FROM live_watch');
  }

  private stillOpen(reference: string): boolean {
    const open = this.live.challenge();
    return open !== undefined && !open.result && open.challenge.reference === reference;
  }
}
