import { seriesEnd, useProblem, type SeriesRecord, type SeriesUseOutcome, type ThreeRiUse } from '../series-rules';

/**
 * The series a transaction set up (docs/threeds.md "Series and 3RI"): kept by the customer-present
 * transaction's object from its final `Y` or `A` until the series' expiry, past the session's end
 * (the session's wipe leaves it), and every 3RI that used it, by the 3RI's own reference. A use
 * is checked and counted in one synchronous block before the 3RI's AReq, so 20 concurrent 3RIs
 * never overshoot; the 3RI's own object releases it when its 3RI ends not authenticated
 * (series-hold.ts). A retried 3RI (same reference and body) finds its use.
 */

export class Series {
  private holderChecked = false;

  constructor(
    private readonly sql: SqlStorage,
    /** Whether the object has its tables (its schema version says: no catalogue look per call). */
    private readonly hasTables: () => boolean,
  ) {}

  createTables(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY CHECK (id = 1), record TEXT NOT NULL,
        ends_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS series_uses (reference TEXT PRIMARY KEY, request_hash TEXT NOT NULL,
        amount INTEGER NOT NULL, type TEXT NOT NULL, counted INTEGER NOT NULL, at INTEGER NOT NULL, holder TEXT)`);
  }

  /**
   * A table made before the holder column (by an object whose series was set up then) gets it:
   * checked once per instance, by the calls that use it, not at every object's start.
   */
  private withHolder(): void {
    if (this.holderChecked) return;
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(series_uses)').toArray();
    if (!columns.some((c) => c.name === 'holder')) this.sql.exec('ALTER TABLE series_uses ADD COLUMN holder TEXT');
    this.holderChecked = true;
  }

  /** Keeps the series (the first one: a later session under the same reference sets up none). */
  record(series: SeriesRecord): void {
    this.sql.exec(
      'INSERT OR IGNORE INTO series (id, record, ends_at) VALUES (1, ?, ?)',
      JSON.stringify(series),
      seriesEnd(series.terms),
    );
  }

  get(now: number): SeriesRecord | undefined {
    if (!this.hasTables()) return undefined;
    const row = this.sql.exec<{ record: string; ends_at: number }>('SELECT record, ends_at FROM series').toArray()[0];
    return row && row.ends_at > now ? (JSON.parse(row.record) as SeriesRecord) : undefined;
  }

  /**
   * A 3RI's use of the series: checked against its terms and the uses counted so far, and counted
   * unless refused, for `holder` (the 3RI object's hold, which alone may release it). A retry with
   * the same reference and body finds its use (now the new holder's: a hold of an earlier session
   * of that reference can no longer release it); the same reference with another body, `conflict`.
   */
  use(reference: string, requestHash: string, use: ThreeRiUse, holder: string, now: number): SeriesUseOutcome {
    const series = this.get(now);
    const prior = '$.priorTransactionReference';
    if (!series)
      return {
        kind: 'refused',
        error: {
          errorName: 'fieldHasInvalidValue',
          message: 'The prior transaction set up no series.',
          jsonPath: prior,
        },
      };
    this.withHolder();
    const known = this.sql
      .exec<{ request_hash: string }>('SELECT request_hash FROM series_uses WHERE reference = ?', reference)
      .toArray()[0];
    if (known) {
      if (known.request_hash !== requestHash) return { kind: 'conflict' };
      this.sql.exec('UPDATE series_uses SET holder = ? WHERE reference = ?', holder, reference);
      return { kind: 'allowed', series };
    }
    const counted = this.sql
      .exec<{ amount: number | null; instalments: number }>(
        "SELECT SUM(amount) AS amount, SUM(type = 'instalment') AS instalments FROM series_uses WHERE counted = 1",
      )
      .one();
    const problem = useProblem(
      series,
      use,
      { amount: counted.amount ?? 0, instalments: counted.instalments ?? 0 },
      now,
    );
    if (problem) return { kind: 'refused', error: problem };
    this.sql.exec(
      'INSERT INTO series_uses (reference, request_hash, amount, type, counted, at, holder) VALUES (?, ?, ?, ?, 1, ?, ?)',
      ...[reference, requestHash, use.amount, use.type, now, holder],
    );
    return { kind: 'allowed', series };
  }

  /** Forgets a use whose 3RI ended not authenticated: its holder's only (a no-op once another holds it, or again). */
  release(reference: string, holder: string): void {
    if (!this.hasTables()) return;
    this.withHolder();
    this.sql.exec('DELETE FROM series_uses WHERE reference = ? AND holder = ?', reference, holder);
  }

  /** When the series ends (the alarm drops it then), undefined when there is none. */
  endsAt(): number | undefined {
    if (!this.hasTables()) return undefined;
    return this.sql.exec<{ ends_at: number }>('SELECT ends_at FROM series').toArray()[0]?.ends_at;
  }

  /** Drops the series and its uses once it has ended. */
  dropIfEnded(now: number): void {
    const end = this.endsAt();
    if (end === undefined || end > now) return;
    this.sql.exec('DELETE FROM series');
    this.sql.exec('DELETE FROM series_uses');
  }
}
