/**
 * First-body claims inside a Durable Object: the strongly consistent "compare-and-set" that
 * Workers KV lacks. A claim names a step (`init`, `auth`), keeps the keyed hash of the first
 * request body that reached it and that body's answer, and tells every later caller whether it
 * sent the same body (`conflict: false`: the same answer, byte for byte) or another one
 * (`conflict: true`).
 *
 * The object runs one event at a time and SQL calls are synchronous, so the read and the insert
 * of a claim, with no `await` between them, cannot interleave with another request: the first
 * body wins, whatever arrives at once, and nobody waits for anybody.
 */

export interface ClaimOutcome<A> {
  kind: 'done';
  /** The claim's answer: this body's, or the first body's when `conflict`. */
  answer: A;
  decidedAt: number;
  /** Another body claimed the step first. */
  conflict: boolean;
}

interface ClaimRow extends Record<string, SqlStorageValue> {
  request_hash: string;
  answer: string;
  decided_at: number;
  expires_at: number;
}

export class ClaimTable {
  /**
   * `atomically` runs a claim's writes (its row and `onFirst`'s) as one storage transaction
   * (`ctx.storage.transactionSync`): a throw midway commits none of them.
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly atomically: <T>(writes: () => T) => T,
  ) {}

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed").
   */
  createTables(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS first_bodies (name TEXT PRIMARY KEY, request_hash TEXT NOT NULL,
      answer TEXT NOT NULL, decided_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
  }

  /**
   * Claims step `name` for the body hashed as `requestHash`, offering `candidate` as its answer,
   * until `expiresAt`. The first claim wins; see {@link ClaimOutcome}. `onFirst` runs in the same
   * synchronous block as the winning insert (for state that must appear together with the claim).
   */
  claim<A>(
    name: string,
    requestHash: string,
    candidate: A,
    now: number,
    expiresAt: number,
    onFirst?: () => void,
  ): ClaimOutcome<A> {
    const row = this.live(name, now);
    if (row) {
      return {
        kind: 'done',
        answer: JSON.parse(row.answer) as A,
        decidedAt: row.decided_at,
        conflict: row.request_hash !== requestHash,
      };
    }
    this.atomically(() => {
      this.sql.exec(
        'INSERT INTO first_bodies (name, request_hash, answer, decided_at, expires_at) VALUES (?, ?, ?, ?, ?)',
        ...[name, requestHash, JSON.stringify(candidate), now, expiresAt],
      );
      onFirst?.();
    });
    return { kind: 'done', answer: candidate, decidedAt: now, conflict: false };
  }

  /** The claim's answer, if the step was claimed and the claim is live. */
  answerOf<A>(name: string, now: number): A | undefined {
    return this.entry<A>(name, now)?.answer;
  }

  /** The claim's answer and when it was decided, if the step was claimed and the claim is live. */
  entry<A>(name: string, now: number): { answer: A; decidedAt: number } | undefined {
    const row = this.live(name, now);
    return row && { answer: JSON.parse(row.answer) as A, decidedAt: row.decided_at };
  }

  /** The keyed hash of the body that claimed the step, if it was claimed and the claim is live. */
  hashOf(name: string, now: number): string | undefined {
    return this.live(name, now)?.request_hash;
  }

  /** Forgets every claim (the object's state is wiped). */
  wipe(): void {
    this.sql.exec('DELETE FROM first_bodies');
  }

  private live(name: string, now: number): ClaimRow | undefined {
    const row = this.sql.exec<ClaimRow>('SELECT * FROM first_bodies WHERE name = ?', name).toArray()[0];
    if (row && row.expires_at <= now) {
      this.sql.exec('DELETE FROM first_bodies WHERE name = ?', name);
      return undefined;
    }
    return row;
  }
}
