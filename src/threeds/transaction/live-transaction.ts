import type { SeriesSetup } from '../series-rules';
import {
  challengePage,
  type LiveChallenge,
  type LiveResult,
  type LiveRun,
  type LiveShow,
  type LiveStart,
  type MethodRecord,
  type PreparedCard,
  AREQ_ANSWER_WINDOW_MS,
} from '../live/live-state';
/**
 * The state of a live 3-D Secure transaction inside its Durable Object (docs/threeds.md "Live",
 * docs/storage.md "The objects"): what the 3DS Server provider prepared, what the browser
 * did (device facts, the 3DS Method), the one authentication, and the challenge with its one
 * result. The object's run (live-authentication.ts) makes the provider calls; this part makes
 * them single flight: one run per transaction, every identical request waits on it, and an AReq
 * that may have been sent is never sent again, whatever fails afterwards.
 *
 * The object runs one event at a time and SQL calls are synchronous, so a read followed by a
 * write without an `await` between them cannot interleave with another request.
 */

interface AuthRow extends Record<string, SqlStorageValue> {
  request_hash: string;
  lease_id: string;
  lease_until: number;
  sending_at: number | null;
  answer: string | null;
  lost: number;
  decided_at: number | null;
  series: string | null;
}

interface ChallengeRow extends Record<string, SqlStorageValue> {
  reference: string;
  data: string;
  shown_jti: string | null;
  md: string | null;
  result: string | null;
  decided_at: number | null;
}

export class LiveTransaction {
  private readonly waiters = new Set<() => void>();

  /**
   * `onDecided` runs in the same synchronous block as each write that decides the transaction's
   * outcome (its answer, its loss, its challenge's result): the owner stages its event there.
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly onDecided: () => void = () => undefined,
  ) {}

  /**
   * Creates this part's tables (if not there yet): when its object first needs them, never for a
   * call that only reads (docs/storage.md "Storage freed"). `fresh`: the object has no tables yet,
   * so no older live_auth to upgrade.
   */
  createTables(fresh = false): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS live_prepared (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS live_method (id INTEGER PRIMARY KEY CHECK (id = 1), url TEXT, started_at INTEGER, completed_at INTEGER);
      CREATE TABLE IF NOT EXISTS live_facts (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS live_auth (id INTEGER PRIMARY KEY CHECK (id = 1), request_hash TEXT NOT NULL,
        lease_id TEXT NOT NULL, lease_until INTEGER NOT NULL, sending_at INTEGER, answer TEXT, lost INTEGER NOT NULL DEFAULT 0,
        decided_at INTEGER, series TEXT);
      CREATE TABLE IF NOT EXISTS live_challenge (reference TEXT PRIMARY KEY, data TEXT NOT NULL, shown_jti TEXT, md TEXT,
        result TEXT, decided_at INTEGER)`);
    if (fresh) return;
    // An object made before the series column (a live_auth of an open session) gets it.
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(live_auth)').toArray();
    if (!columns.some((c) => c.name === 'series')) this.sql.exec('ALTER TABLE live_auth ADD COLUMN series TEXT');
  }

  /** Forgets everything (the session ended). */
  wipe(): void {
    this.sql.exec(
      'DELETE FROM live_prepared; DELETE FROM live_method; DELETE FROM live_facts; DELETE FROM live_auth; DELETE FROM live_challenge',
    );
    this.wake();
  }

  // --- preparation and the browser ---------------------------------------------------------

  prepared(): PreparedCard | undefined {
    const row = this.sql.exec<{ data: string }>('SELECT data FROM live_prepared').toArray()[0];
    return row ? (JSON.parse(row.data) as PreparedCard) : undefined;
  }

  /**
   * Keeps a prepared card. `replace` is for authenticate, which prepares again when the card
   * changed or the preparation aged: the method then starts over (it ran for the old one).
   */
  storePrepared(card: PreparedCard, replace: boolean): PreparedCard {
    const current = this.prepared();
    if (current && !replace) return current;
    this.sql.exec('INSERT OR REPLACE INTO live_prepared (id, data) VALUES (1, ?)', JSON.stringify(card));
    this.sql.exec(
      'INSERT OR REPLACE INTO live_method (id, url) VALUES (1, ?)',
      (card.kind === 'prepared' && card.methodUrl) || null,
    );
    return card;
  }

  method(): MethodRecord {
    const row = this.sql
      .exec<{ url: string | null; started_at: number | null; completed_at: number | null }>(
        'SELECT url, started_at, completed_at FROM live_method',
      )
      .toArray()[0];
    return {
      ...(row?.url ? { url: row.url } : {}),
      ...(row?.started_at != null ? { startedAt: row.started_at } : {}),
      ...(row?.completed_at != null ? { completedAt: row.completed_at } : {}),
    };
  }

  /**
   * The DDC page in the cardholder's browser: keeps what it learned of the browser and, when the
   * prepared card's ACS has a 3DS Method, marks the method started (once) and says where it runs.
   */
  collect(facts: Record<string, unknown>, now: number): { prepared?: PreparedCard; method: MethodRecord } {
    const known = this.facts();
    this.sql.exec('INSERT OR REPLACE INTO live_facts (id, data) VALUES (1, ?)', JSON.stringify({ ...known, ...facts }));
    const prepared = this.prepared();
    if (prepared?.kind === 'prepared' && prepared.methodUrl) {
      this.sql.exec('UPDATE live_method SET started_at = ? WHERE id = 1 AND started_at IS NULL', now);
    }
    return { ...(prepared ? { prepared } : {}), method: this.method() };
  }

  /** What the DDC page's script learned later (screen, time zone...), merged into the facts. */
  addFacts(facts: Record<string, unknown>): void {
    this.sql.exec(
      'INSERT OR REPLACE INTO live_facts (id, data) VALUES (1, ?)',
      JSON.stringify({ ...this.facts(), ...facts }),
    );
  }

  facts(): Record<string, unknown> {
    const row = this.sql.exec<{ data: string }>('SELECT data FROM live_facts').toArray()[0];
    return row ? (JSON.parse(row.data) as Record<string, unknown>) : {};
  }

  /** The ACS told the browser the method completed (the first notice counts). */
  methodCompleted(now: number): boolean {
    const written = this.sql.exec(
      'UPDATE live_method SET completed_at = ? WHERE id = 1 AND started_at IS NOT NULL AND completed_at IS NULL',
      now,
    ).rowsWritten;
    this.wake();
    return written > 0;
  }

  /** Waits until the method completed or `until` (ms since the epoch), whichever first. */
  async awaitMethod(until: number): Promise<MethodRecord> {
    while (this.method().completedAt === undefined && Date.now() < until) await this.waitFor(until - Date.now());
    return this.method();
  }

  // --- the one authentication ----------------------------------------------------------------

  /**
   * authenticate's one AReq (live-authentication.ts runs it, inside this object). The first body
   * starts it, marked with `instance` (this object instance's id); an identical body finds it
   * answered, lost, or running here (`running`: the caller waits on the run in memory); another
   * body is a conflict. A start left by an instance that is gone (the object was reset) is taken
   * over when its AReq was never sent, and is lost for good when it was: whether that AReq
   * reached the Directory Server is unknown, and the provider never takes a second AReq for the
   * transaction (docs/threeds.md "authenticate: one AReq per transaction, ever").
   */
  start(requestHash: string, instance: string, now: number): LiveStart {
    const row = this.auth();
    if (!row) {
      this.sql.exec(
        'INSERT INTO live_auth (id, request_hash, lease_id, lease_until) VALUES (1, ?, ?, 0)',
        requestHash,
        instance,
      );
      return this.run();
    }
    if (row.request_hash !== requestHash) return { kind: 'conflict' };
    if (row.answer !== null) {
      return {
        kind: 'answered',
        answer: JSON.parse(row.answer) as Record<string, unknown>,
        decidedAt: row.decided_at!,
      };
    }
    if (row.lost === 1) return { kind: 'lost', decidedAt: row.decided_at! };
    if (row.lease_id === instance) return { kind: 'running' };
    if (row.sending_at !== null) {
      this.markLost(now);
      return { kind: 'lost', decidedAt: now };
    }
    this.sql.exec('UPDATE live_auth SET lease_id = ? WHERE id = 1', instance);
    return this.run();
  }

  /**
   * The AReq is about to go out: from now on it is never sent again. Until its answer is recorded,
   * `AREQ_ANSWER_WINDOW_MS` from now is an alarm time ({@link sendingLeaseEnd}), for an instance
   * reset meanwhile.
   */
  sending(now: number): void {
    this.sql.exec(
      'UPDATE live_auth SET sending_at = ?, lease_until = ? WHERE id = 1 AND answer IS NULL AND lost = 0',
      ...[now, now + AREQ_ANSWER_WINDOW_MS],
    );
  }

  /**
   * The answer, with the challenge it opened, recorded in one synchronous block with its event;
   * the first answer stays, and is the one answered. Undefined when none can be recorded: the
   * authentication was lost meanwhile, and is `unavailable` to all.
   */
  complete(
    answer: Record<string, unknown>,
    now: number,
    challenge?: LiveChallenge,
    series?: SeriesSetup,
  ): Record<string, unknown> | undefined {
    const row = this.auth();
    if (row && row.answer === null && row.lost === 0) {
      this.sql.exec(
        'UPDATE live_auth SET answer = ?, decided_at = ?, series = ? WHERE id = 1',
        ...[JSON.stringify(answer), now, series ? JSON.stringify(series) : null],
      );
      if (challenge) {
        this.sql.exec(
          'INSERT OR IGNORE INTO live_challenge (reference, data) VALUES (?, ?)',
          challenge.reference,
          JSON.stringify(challenge),
        );
      }
      this.onDecided();
    }
    const stored = this.auth();
    return stored?.answer ? (JSON.parse(stored.answer) as Record<string, unknown>) : undefined;
  }

  /**
   * When an AReq that went out has no answer recorded yet: the alarm then marks it lost if its
   * instance is gone ({@link loseIfOrphaned}), so a reset after sending leaves an outcome (and its
   * event) even when nobody calls again. Undefined otherwise.
   */
  sendingLeaseEnd(): number | undefined {
    return this.sql
      .exec<{ lease_until: number }>(
        'SELECT lease_until FROM live_auth WHERE sending_at IS NOT NULL AND answer IS NULL AND lost = 0',
      )
      .toArray()[0]?.lease_until;
  }

  /**
   * The alarm's side of {@link sendingLeaseEnd}: an AReq sent by an instance that is gone (or past
   * the longest it could take) has an unknown answer, and is lost.
   */
  loseIfOrphaned(instance: string, wall: number): void {
    const row = this.auth();
    if (!row || row.sending_at === null || row.answer !== null || row.lost === 1) return;
    if (row.lease_id !== instance || row.lease_until <= wall) this.markLost(wall);
  }

  /** The AReq went out and its answer is unknown: the authentication is lost, for good. */
  lose(now: number): void {
    const row = this.auth();
    if (row && row.answer === null && row.lost === 0) this.markLost(now);
  }

  /**
   * The run ends with no AReq having reached a Directory Server (the provider was unavailable,
   * even to the AReq, or the request cannot make a valid AReq): the next request starts afresh,
   * with any body.
   */
  abandon(): void {
    this.sql.exec('DELETE FROM live_auth WHERE id = 1 AND answer IS NULL AND lost = 0');
  }

  /** The keyed hash of the body whose authentication this is (undefined before any). */
  requestHash(): string | undefined {
    return this.auth()?.request_hash;
  }

  private markLost(now: number): void {
    this.sql.exec('UPDATE live_auth SET lost = 1, decided_at = ? WHERE id = 1', now);
    this.onDecided();
  }

  // --- the challenge ---------------------------------------------------------------------------

  /**
   * The challenge page relays the CReq: shown from its JWT while no result is decided (the same JWT
   * may show it again: the ACS decides about a repeated CReq), with the merchant's MD kept for the
   * return.
   */
  show(reference: string, jti: string, md: string): LiveShow {
    const row = this.challengeRow(reference);
    // An app's challenge and a decoupled authentication have no page (no JWT names them either).
    const page = row && challengePage(JSON.parse(row.data) as LiveChallenge);
    if (!row || !page) return { kind: 'unknown' };
    if (row.result !== null) return { kind: row.shown_jti !== null ? 'used' : 'ended' };
    if (row.shown_jti !== null && row.shown_jti !== jti) return { kind: 'used' };
    this.sql.exec('UPDATE live_challenge SET shown_jti = ?, md = ? WHERE reference = ?', jti, md, reference);
    return { kind: 'shown', page };
  }

  /** The transaction's challenge (there is at most one), with its MD and result if decided. */
  challenge(): { challenge: LiveChallenge; md: string; result?: LiveResult } | undefined {
    const row = this.sql.exec<ChallengeRow>('SELECT * FROM live_challenge').toArray()[0];
    if (!row) return undefined;
    return {
      challenge: JSON.parse(row.data) as LiveChallenge,
      md: row.md ?? '',
      ...(row.result !== null
        ? { result: { answer: JSON.parse(row.result) as Record<string, unknown>, decidedAt: row.decided_at! } }
        : {}),
    };
  }

  /**
   * What is known of the authentication, for the transaction's description: its answer and when it
   * was decided, or `lost` (the AReq went out and its answer is unknown); undefined while none.
   */
  authentication():
    { answer?: Record<string, unknown>; lost: boolean; decidedAt: number; series?: SeriesSetup } | undefined {
    const row = this.auth();
    if (!row || row.decided_at === null) return undefined;
    return {
      ...(row.answer !== null ? { answer: JSON.parse(row.answer) as Record<string, unknown> } : {}),
      lost: row.lost === 1,
      decidedAt: row.decided_at,
      ...(row.series ? { series: JSON.parse(row.series) as SeriesSetup } : {}),
    };
  }

  /** Records the challenge's one result; the first one decided stays, and is returned. */
  decide(reference: string, answer: Record<string, unknown>, now: number): LiveResult | undefined {
    const decided = this.sql.exec(
      'UPDATE live_challenge SET result = ?, decided_at = ? WHERE reference = ? AND result IS NULL',
      JSON.stringify(answer),
      now,
      reference,
    ).rowsWritten;
    if (decided > 0) this.onDecided();
    const row = this.challengeRow(reference);
    return row?.result
      ? { answer: JSON.parse(row.result) as Record<string, unknown>, decidedAt: row.decided_at! }
      : undefined;
  }

  // --- inside ------------------------------------------------------------------------------------

  private run(): LiveRun {
    const prepared = this.prepared();
    return { kind: 'run', ...(prepared ? { prepared } : {}), method: this.method(), facts: this.facts() };
  }

  private auth(): AuthRow | undefined {
    return this.sql.exec<AuthRow>('SELECT * FROM live_auth').toArray()[0];
  }

  private challengeRow(reference: string): ChallengeRow | undefined {
    return this.sql.exec<ChallengeRow>('SELECT * FROM live_challenge WHERE reference = ?', reference).toArray()[0];
  }

  private waitFor(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.waiters.add(done);
    });
  }

  private wake(): void {
    for (const done of [...this.waiters]) done();
  }
}
