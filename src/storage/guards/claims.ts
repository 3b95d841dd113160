/**
 * First-body claims inside a Durable Object: the strongly consistent "compare-and-set" that
 * Workers KV lacks. A claim names a step (`auth`, `token`...), keeps the keyed hash of the first
 * request body that reached it and that body's answer (with everything needed to write its KV
 * record), and tells every later caller whether it sent the same body (`conflict: false`: the
 * same answer, byte for byte) or another one (`conflict: true`).
 *
 * Where the step also writes a KV record, the claim hands out one write lease at a time
 * (single flight): a caller that gets `write` writes the record of the claim's answer and
 * confirms it with its lease id; callers that arrive meanwhile wait inside the object until the
 * record is confirmed (`done`), or take the lease over when the writer released it (its KV write
 * failed) or went silent past {@link LEASE_MS}, whichever body they sent. So every answer means
 * the record is in KV, a burst of identical requests writes KV once (KV allows one write per
 * second per key), and a stalled write is finished by the next caller, never left behind.
 *
 * The object runs one event at a time and SQL calls are synchronous, so a read followed by a
 * write without an `await` in between cannot interleave with another request.
 */

/** How long a writer may take to confirm its KV write (KV times out at 5 s) before another takes over. */
export const LEASE_MS = 10_000;

export interface ClaimOutcome<A> {
  /** `write`: write the record of `answer`, then `recorded` (or `released` on failure). */
  kind: 'write' | 'done';
  /** The claim's answer: this body's, or the first body's when `conflict`. */
  answer: A;
  decidedAt: number;
  /** Another body claimed the step first. */
  conflict: boolean;
  /** The retired claim this one replaced (a deleted token), for its caller to finish retiring. */
  retired?: A;
}

export interface ClaimOptions {
  /** When the claim stops counting (it is then treated as absent). */
  expiresAt: number;
  /** Whether the step writes a KV record that must exist before anyone answers (token claims). */
  writesRecord?: boolean;
  /** The caller's own id for the write lease, so that only it can confirm or release it. */
  leaseId?: string;
}

interface ClaimRow extends Record<string, SqlStorageValue> {
  request_hash: string;
  answer: string;
  decided_at: number;
  expires_at: number;
  recorded: number;
  lease_id: string;
  lease_until: number;
  retired: number;
}

export class ClaimTable {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS claims (
      name TEXT PRIMARY KEY, request_hash TEXT NOT NULL, answer TEXT NOT NULL, decided_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, recorded INTEGER NOT NULL, lease_id TEXT NOT NULL, lease_until INTEGER NOT NULL,
      retired INTEGER NOT NULL DEFAULT 0)`);
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
      const wallClock = Date.now();
      if (!row || row.retired === 1) {
        const recorded = options.writesRecord ? 0 : 1;
        this.sql.exec(
          `INSERT OR REPLACE INTO claims (name, request_hash, answer, decided_at, expires_at, recorded, lease_id, lease_until, retired)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)`,
          ...[name, requestHash, JSON.stringify(candidate), now, options.expiresAt, recorded],
          ...[options.leaseId ?? '', wallClock + LEASE_MS],
        );
        onFirst?.();
        const retired = row ? { retired: JSON.parse(row.answer) as A } : {};
        return { kind: recorded ? 'done' : 'write', answer: candidate, decidedAt: now, conflict: false, ...retired };
      }
      const stored = {
        answer: JSON.parse(row.answer) as A,
        decidedAt: row.decided_at,
        conflict: row.request_hash !== requestHash,
      };
      if (row.recorded === 1) return { kind: 'done', ...stored };
      if (row.lease_until <= wallClock) {
        this.sql.exec(
          'UPDATE claims SET lease_id = ?, lease_until = ? WHERE name = ?',
          options.leaseId ?? '',
          wallClock + LEASE_MS,
          name,
        );
        return { kind: 'write', ...stored };
      }
      // Someone is writing this claim's record: answer once it is there (or the lease ends).
      await this.waitFor(name, row.lease_until - wallClock);
    }
  }

  /**
   * The lease holder's record is in KV: later callers get `done` at once. False when the lease
   * is no longer this caller's or the claim was retired meanwhile (its caller then undoes what
   * it wrote, if it must).
   */
  recorded(name: string, leaseId: string): boolean {
    const cursor = this.sql.exec(
      'UPDATE claims SET recorded = 1 WHERE name = ? AND lease_id = ? AND retired = 0',
      name,
      leaseId,
    );
    this.wake(name);
    return cursor.rowsWritten > 0;
  }

  /** The lease holder failed: the next caller takes the lease at once. Only the holder can. */
  released(name: string, leaseId: string): void {
    this.sql.exec('UPDATE claims SET lease_until = 0 WHERE name = ? AND lease_id = ? AND recorded = 0', name, leaseId);
    this.wake(name);
  }

  /**
   * A live, unretired claim's answer once no other caller is writing its record: waits while
   * another caller's write lease is live and unconfirmed, so that writes of one claim never
   * overlap (a newer answer is written only after the older write ended, or its lease ran out).
   */
  async settled<A>(name: string, now: number, leaseId = ''): Promise<A | undefined> {
    for (;;) {
      const row = this.live(name, now);
      if (!row || row.retired === 1) return undefined;
      const wallClock = Date.now();
      if (row.recorded === 1 || row.lease_until <= wallClock || row.lease_id === leaseId) {
        return JSON.parse(row.answer) as A;
      }
      await this.waitFor(name, row.lease_until - wallClock);
    }
  }

  /**
   * A live, unretired claim's answer, with its write lease given to `leaseId` (to change the
   * answer and write it: token updates), once no other caller holds the lease. `accept` says
   * whether this answer is the caller's to change; if not, nothing is taken. Callers queue here,
   * one at a time; the holder releases with `released` (changing nothing), writes the answer as
   * it is and confirms with `recorded`, or hands the lease to a new answer with `replace`.
   */
  async hold<A>(
    name: string,
    now: number,
    leaseId: string,
    accept: (answer: A) => boolean,
    options: { unlessRecorded?: boolean } = {},
  ): Promise<{ answer: A; recorded: boolean; wasRecorded: boolean } | undefined> {
    for (;;) {
      // The check and the taking are one synchronous block: two callers woken together cannot
      // both find the lease free.
      const row = this.live(name, now);
      if (!row || row.retired === 1) return undefined;
      const wallClock = Date.now();
      if (row.recorded === 1 || row.lease_until <= wallClock || row.lease_id === leaseId) {
        const answer = JSON.parse(row.answer) as A;
        if (!accept(answer)) return undefined;
        // `unlessRecorded`: a caller that only makes sure the answer is written needs no lease.
        if (options.unlessRecorded && row.recorded === 1) return { answer, recorded: true, wasRecorded: true };
        this.sql.exec(
          'UPDATE claims SET lease_id = ?, lease_until = ?, recorded = 0 WHERE name = ?',
          ...[leaseId, wallClock + LEASE_MS, name],
        );
        return { answer, recorded: false, wasRecorded: row.recorded === 1 };
      }
      await this.waitFor(name, row.lease_until - wallClock);
    }
  }

  /**
   * Replaces a live claim's answer and gives its write lease to `leaseId`: the answer must be
   * written again (its caller checked, in the same event, that it may: see `settled`).
   */
  replace<A>(name: string, answer: A, expiresAt: number, leaseId: string): void {
    this.sql.exec(
      'UPDATE claims SET answer = ?, expires_at = ?, recorded = 0, lease_id = ?, lease_until = ? WHERE name = ?',
      ...[JSON.stringify(answer), expiresAt, leaseId, Date.now() + LEASE_MS, name],
    );
  }

  /** The claim's answer, if the step was claimed, is live and not retired. */
  answerOf<A>(name: string, now: number): A | undefined {
    const row = this.live(name, now);
    return row && row.retired === 0 ? (JSON.parse(row.answer) as A) : undefined;
  }

  /**
   * Retires a claim (a deleted token) whose answer `isIt` recognises, with one write lease for its
   * deletion record (a tombstone): the first caller retires it and gets `write`; callers that
   * arrive while it writes wait, then get `done` once it confirmed (`retirementRecorded`), or take
   * the lease over when it released it or went silent past {@link LEASE_MS}. So a burst of
   * identical deletions writes KV once (KV allows one write per second per key). A claim that is
   * not (or no longer) the one `isIt` recognises gives `write` without a lease: the caller's
   * deletion is of a claim this object no longer holds, and it writes as asked. The next claim
   * replaces a retired one and is told what it replaced.
   */
  async retire<A>(name: string, isIt: (answer: A) => boolean, now: number, leaseId: string): Promise<'write' | 'done'> {
    for (;;) {
      const row = this.live(name, now);
      if (!row || !isIt(JSON.parse(row.answer) as A)) return 'write';
      const wallClock = Date.now();
      if (row.retired === 0 || (row.recorded === 0 && (row.lease_until <= wallClock || row.lease_id === leaseId))) {
        this.sql.exec(
          'UPDATE claims SET retired = 1, recorded = 0, lease_id = ?, lease_until = ? WHERE name = ?',
          ...[leaseId, wallClock + LEASE_MS, name],
        );
        // Whoever waited for the record's lease finds the claim retired.
        this.wake(name);
        return 'write';
      }
      if (row.recorded === 1) return 'done';
      await this.waitFor(name, row.lease_until - wallClock);
    }
  }

  /** The retirement's record is in KV: later deletions get `done` at once. Only the lease holder can. */
  retirementRecorded(name: string, leaseId: string): void {
    this.sql.exec('UPDATE claims SET recorded = 1 WHERE name = ? AND lease_id = ? AND retired = 1', name, leaseId);
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
