/**
 * First-body claims inside a Durable Object: the strongly consistent "compare-and-set" that
 * Workers KV lacks. A claim names a step (`auth`, `token`...), keeps the keyed hash of the first
 * request body that reached it and that request's answer, and tells every later caller whether
 * it sent the same body (same answer, byte for byte) or another one (a conflict).
 *
 * Where the step also writes a KV record, the claim hands out one write lease at a time
 * (single flight): the first caller gets `write`, writes the record and confirms it; identical
 * callers that arrive meanwhile wait inside the object until the record is confirmed (`done`),
 * or take the lease over when the writer released it (its KV write failed) or went silent past
 * {@link LEASE_MS}. So every successful answer means the record is in KV, and a burst of
 * identical requests writes KV once (KV allows one write per second per key).
 *
 * The object runs one event at a time and SQL calls are synchronous, so a read followed by a
 * write without an `await` in between cannot interleave with another request.
 */

/** How long a writer may take to confirm its KV write (KV times out at 5 s) before another takes over. */
export const LEASE_MS = 10_000;

export type ClaimOutcome<A> =
  /** This caller holds the write lease: write the records, then `recorded` (or `released` on failure). */
  | { kind: 'write'; answer: A; decidedAt: number }
  /** The same body was claimed before and its records are written. */
  | { kind: 'done'; answer: A; decidedAt: number }
  /**
   * Another body claimed the step first; `answer` is that body's. `recorded` is false only when
   * that body's writer gave up without writing its records (its client was answered 503).
   */
  | { kind: 'conflict'; answer: A; decidedAt: number; recorded: boolean };

export interface ClaimOptions {
  /** When the claim stops counting (it is then treated as absent). */
  expiresAt: number;
  /** Whether the step writes a KV record that must exist before anyone answers. */
  writesRecord: boolean;
}

interface ClaimRow extends Record<string, SqlStorageValue> {
  request_hash: string;
  answer: string;
  decided_at: number;
  expires_at: number;
  recorded: number;
  lease_until: number;
}

export class ClaimTable {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS claims (
      name TEXT PRIMARY KEY, request_hash TEXT NOT NULL, answer TEXT NOT NULL, decided_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, recorded INTEGER NOT NULL, lease_until INTEGER NOT NULL)`);
  }

  /**
   * Claims step `name` for the body hashed as `requestHash`, offering `candidate` as its answer.
   * The first claim wins; see {@link ClaimOutcome}. `onFirst` runs in the same atomic block as
   * the winning insert (for state that must appear together with the claim).
   */
  async claim<A>(
    name: string,
    requestHash: string,
    candidate: A,
    now: number,
    options: ClaimOptions,
    onFirst?: () => void,
  ): Promise<ClaimOutcome<A>> {
    for (;;) {
      const row = this.live(name, now);
      if (!row) {
        const recorded = options.writesRecord ? 0 : 1;
        this.sql.exec(
          'INSERT INTO claims (name, request_hash, answer, decided_at, expires_at, recorded, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?)',
          name,
          requestHash,
          JSON.stringify(candidate),
          now,
          options.expiresAt,
          recorded,
          Date.now() + LEASE_MS,
        );
        onFirst?.();
        return { kind: recorded ? 'done' : 'write', answer: candidate, decidedAt: now };
      }
      const stored = { answer: JSON.parse(row.answer) as A, decidedAt: row.decided_at };
      const wallClock = Date.now();
      const writing = row.recorded === 0 && row.lease_until > wallClock;
      if (row.request_hash !== requestHash && !writing)
        return { kind: 'conflict', ...stored, recorded: row.recorded === 1 };
      if (row.recorded === 1) return { kind: 'done', ...stored };
      if (!writing) {
        this.sql.exec('UPDATE claims SET lease_until = ? WHERE name = ?', wallClock + LEASE_MS, name);
        return { kind: 'write', ...stored };
      }
      // Someone is writing this claim's records: answer once they are there (or the lease ends).
      await this.waitFor(name, row.lease_until - wallClock);
    }
  }

  /** The writer's records are in KV: later callers get `done` at once. */
  recorded(name: string, requestHash: string): void {
    this.sql.exec('UPDATE claims SET recorded = 1 WHERE name = ? AND request_hash = ?', name, requestHash);
    this.wake(name);
  }

  /** The writer failed: the next identical caller takes the lease at once. */
  released(name: string, requestHash: string): void {
    this.sql.exec(
      'UPDATE claims SET lease_until = 0 WHERE name = ? AND request_hash = ? AND recorded = 0',
      name,
      requestHash,
    );
    this.wake(name);
  }

  /** The claim's answer, if the step was claimed and has not expired. */
  answerOf<A>(name: string, now: number): A | undefined {
    const row = this.live(name, now);
    return row ? (JSON.parse(row.answer) as A) : undefined;
  }

  /** Forgets a claim (a deleted token frees its card for a new one). */
  drop(name: string): void {
    this.sql.exec('DELETE FROM claims WHERE name = ?', name);
    this.wake(name);
  }

  private live(name: string, now: number): ClaimRow | undefined {
    const row = this.sql.exec<ClaimRow>('SELECT * FROM claims WHERE name = ?', name).toArray()[0];
    if (row && row.expires_at <= now) {
      this.sql.exec('DELETE FROM claims WHERE name = ?', name);
      return undefined;
    }
    return row;
  }

  private waitFor(name: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(name) ?? new Set<() => void>();
      this.waiters.set(name, set);
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      set.add(done);
    });
  }

  private wake(name: string): void {
    for (const done of [...(this.waiters.get(name) ?? [])]) done();
  }
}
