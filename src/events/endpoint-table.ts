import { open, seal, tokenKeys } from '../cards/card-crypto';
import { settingsOf } from '../config/settings';
import type { SealedValue } from '../records/sealed-value';
import {
  DEFAULT_PREVIOUS_VALID_S,
  MAX_EVENT_ENDPOINTS,
  type DisabledReason,
  type EndpointChange,
  type EndpointState,
  type EndpointView,
  type NewEndpoint,
  type Subscription,
  takes,
} from './endpoint-rules';
import type { EndpointSet } from './event-shards';
import { newSecret, signingKey } from './webhook-signature';

/**
 * A merchant's endpoints, kept by its EventLog object (docs/events.md "Endpoints"): one row each,
 * its secret sealed with the token encryption keys (AES-256-GCM, bound to the merchant and the
 * endpoint), opened only to sign. Every change is one synchronous block, so a delivery reads
 * one consistent version of its endpoint; a secret is shown once, in the answer that made it.
 */

interface EndpointRow extends Record<string, SqlStorageValue> {
  endpoint_id: string;
  url: string;
  events: string;
  description: string | null;
  state: EndpointState;
  disabled_reason: DisabledReason | null;
  created_at: number;
  /** Bumped by every change: what a delivery was sent under, and the key cache's check. */
  version: number;
  secret: string;
  previous_secret: string | null;
  previous_expires_at: number | null;
  /** The first failure here since the last success (none: the last attempt succeeded, or none was made). */
  failing_since: number | null;
  /** The last success known (shard 0: its own and those the other shards report). */
  last_success_at: number | null;
}

/** An endpoint as a delivery uses it: one version, its signing keys (current first). */
export interface SendingEndpoint {
  endpointId: string;
  url: string;
  version: number;
  keys: CryptoKey[];
}

export const ENDPOINT_TABLES = `CREATE TABLE IF NOT EXISTS endpoints (endpoint_id TEXT PRIMARY KEY, url TEXT NOT NULL,
    events TEXT NOT NULL, description TEXT, state TEXT NOT NULL, disabled_reason TEXT, created_at INTEGER NOT NULL,
    version INTEGER NOT NULL, secret TEXT NOT NULL, previous_secret TEXT, previous_expires_at INTEGER,
    failing_since INTEGER, last_success_at INTEGER);
  CREATE TABLE IF NOT EXISTS endpoint_set (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS endpoint_copies (shard INTEGER PRIMARY KEY, version INTEGER NOT NULL)`;

/** What a change to an endpoint did to its deliveries: the event log holds or releases them. */
export type StateChange = 'disabled' | 'enabled' | undefined;

export class EndpointTable {
  /**
   * Opened keys per endpoint and version: a delivery opens an endpoint's secrets once per version.
   * The keys themselves are kept, never a promise of them: a promise made in one request's context
   * and awaited in another's, once the first has ended, may never resume in workerd.
   */
  private readonly keys = new Map<string, { version: number; keys: CryptoKey[] }>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
  ) {}

  /** Creates the tables (an earlier layout's get the columns added since): once, as the log's version row says. */
  createTables(): void {
    this.sql.exec(ENDPOINT_TABLES);
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(endpoints)').toArray();
    if (!columns.some((c) => c.name === 'last_success_at'))
      this.sql.exec('ALTER TABLE endpoints ADD COLUMN last_success_at INTEGER');
  }

  /** The version of the set (shard 0: of its last change; another shard: of the copy it has), undefined before the first. */
  setVersion(): number | undefined {
    return this.sql.exec<{ version: number }>('SELECT version FROM endpoint_set').toArray()[0]?.version;
  }

  /** Every change to the set bumps its version, in the change's own synchronous block. */
  private changed(): void {
    this.sql.exec(
      'INSERT INTO endpoint_set (id, version) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET version = version + 1',
    );
  }

  /** The whole set as shard 0 sends it to the others (secrets sealed). */
  copy(): EndpointSet {
    return {
      version: this.setVersion() ?? 0,
      endpoints: this.sql
        .exec<EndpointRow>('SELECT * FROM endpoints ORDER BY created_at, endpoint_id')
        .toArray()
        .map((r) => ({
          endpointId: r.endpoint_id,
          url: r.url,
          events: r.events,
          description: r.description,
          state: r.state,
          disabledReason: r.disabled_reason,
          createdAt: r.created_at,
          version: r.version,
          secret: r.secret,
          previousSecret: r.previous_secret,
          previousExpiresAt: r.previous_expires_at,
        })),
    };
  }

  /** The version of the set a shard was last sent (shard 0), -1 when none. */
  copyVersion(shard: number): number {
    return (
      this.sql.exec<{ version: number }>('SELECT version FROM endpoint_copies WHERE shard = ?', shard).toArray()[0]
        ?.version ?? -1
    );
  }

  /** Shard `shard` has the set at `version` (or a newer one). */
  copied(shard: number, version: number): void {
    this.sql.exec(
      `INSERT INTO endpoint_copies (shard, version) VALUES (?, ?)
       ON CONFLICT (shard) DO UPDATE SET version = MAX(version, excluded.version)`,
      shard,
      version,
    );
  }

  /**
   * Takes shard 0's set in place of the copy here, unless this one is as new: returns what
   * changed for the deliveries (endpoints gone, disabled, enabled), or undefined when nothing was
   * taken. This shard's own health of each endpoint is kept (a new start once enabled again).
   */
  replace(set: EndpointSet): { removed: string[]; disabled: string[]; enabled: string[] } | undefined {
    const current = this.setVersion();
    if (current !== undefined && current >= set.version) return undefined;
    const before = new Map(
      this.sql
        .exec<EndpointRow>('SELECT * FROM endpoints')
        .toArray()
        .map((r) => [r.endpoint_id, r]),
    );
    const kept = new Set(set.endpoints.map((e) => e.endpointId));
    const removed = [...before.keys()].filter((id) => !kept.has(id));
    const disabled: string[] = [];
    const enabled: string[] = [];
    for (const id of removed) this.delete(id);
    for (const e of set.endpoints) {
      const old = before.get(e.endpointId);
      if (old?.state === 'enabled' && e.state === 'disabled') disabled.push(e.endpointId);
      if (old?.state === 'disabled' && e.state === 'enabled') enabled.push(e.endpointId);
      const failingSince = old && !enabled.includes(e.endpointId) ? old.failing_since : null;
      this.sql.exec(
        `INSERT OR REPLACE INTO endpoints (endpoint_id, url, events, description, state, disabled_reason, created_at,
           version, secret, previous_secret, previous_expires_at, failing_since, last_success_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ...[e.endpointId, e.url, e.events, e.description, e.state, e.disabledReason, e.createdAt, e.version],
        ...[e.secret, e.previousSecret, e.previousExpiresAt, failingSince, old?.last_success_at ?? null],
      );
    }
    this.sql.exec(
      'INSERT INTO endpoint_set (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version',
      set.version,
    );
    return { removed, disabled, enabled };
  }

  count(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM endpoints').one().n;
  }

  list(): EndpointView[] {
    return this.sql.exec<EndpointRow>('SELECT * FROM endpoints ORDER BY created_at, endpoint_id').toArray().map(view);
  }

  get(endpointId: string): EndpointView | undefined {
    const row = this.row(endpointId);
    return row && view(row);
  }

  /** The endpoints that take an event of this type, enabled or not (a disabled one holds it). */
  subscribers(eventType: string): { endpointId: string; state: EndpointState }[] {
    return this.sql
      .exec<EndpointRow>('SELECT endpoint_id, events, state FROM endpoints')
      .toArray()
      .filter((r) => takes(JSON.parse(r.events) as Subscription, eventType))
      .map((r) => ({ endpointId: r.endpoint_id, state: r.state }));
  }

  /**
   * Seals a new secret, then adds the endpoint unless the merchant has its ten already (checked
   * and written in one synchronous block: twenty creates at once make at most ten).
   */
  async create(
    username: string,
    input: NewEndpoint,
    now: number,
  ): Promise<{ endpoint: EndpointView; secret: string } | 'tooMany'> {
    const endpointId = newEndpointId();
    const secret = newSecret();
    const sealed = await this.seal(username, endpointId, secret);
    if (this.count() >= MAX_EVENT_ENDPOINTS) return 'tooMany';
    this.sql.exec(
      `INSERT INTO endpoints (endpoint_id, url, events, description, state, created_at, version, secret)
       VALUES (?, ?, ?, ?, 'enabled', ?, 1, ?)`,
      ...[endpointId, input.url, JSON.stringify(input.events), input.description ?? null, now, sealed],
    );
    this.changed();
    return { endpoint: view(this.row(endpointId)!), secret };
  }

  /** Applies a PATCH; `state` says whether its deliveries are to be held or released. */
  update(endpointId: string, change: EndpointChange): { endpoint: EndpointView; stateChange: StateChange } | undefined {
    const row = this.row(endpointId);
    if (!row) return undefined;
    const stateChange: StateChange =
      change.state !== undefined && change.state !== row.state
        ? change.state === 'enabled'
          ? 'enabled'
          : 'disabled'
        : undefined;
    this.sql.exec(
      `UPDATE endpoints SET url = ?, events = ?, description = ?, state = ?, disabled_reason = ?,
         failing_since = ?, version = version + 1 WHERE endpoint_id = ?`,
      ...[
        change.url ?? row.url,
        change.events !== undefined ? JSON.stringify(change.events) : row.events,
        change.description ?? row.description,
        change.state ?? row.state,
        stateChange === 'disabled' ? 'merchant' : stateChange === 'enabled' ? null : row.disabled_reason,
        // Enabled again: its 3 days without a success start over.
        stateChange === 'enabled' ? null : row.failing_since,
        endpointId,
      ],
    );
    this.changed();
    return { endpoint: view(this.row(endpointId)!), stateChange };
  }

  /** Disables an endpoint for a reason of the log's own (`gone`, `failing`); false when it was not enabled. */
  disable(endpointId: string, reason: DisabledReason): boolean {
    const changed = this.sql.exec(
      `UPDATE endpoints SET state = 'disabled', disabled_reason = ?, version = version + 1
       WHERE endpoint_id = ? AND state = 'enabled'`,
      reason,
      endpointId,
    ).rowsWritten;
    if (changed > 0) this.changed();
    return changed > 0;
  }

  /** Deletes an endpoint (shard 0: a change of the set). */
  remove(endpointId: string): boolean {
    const removed = this.delete(endpointId);
    if (removed) this.changed();
    return removed;
  }

  private delete(endpointId: string): boolean {
    this.keys.delete(endpointId);
    return this.sql.exec('DELETE FROM endpoints WHERE endpoint_id = ?', endpointId).rowsWritten > 0;
  }

  /**
   * A new secret; the current one goes on signing for `previousValidForSeconds` (24 h by default,
   * at most 7 days; 0: not at all). A rotation during a rotation drops the oldest secret.
   */
  async rotate(
    username: string,
    endpointId: string,
    previousValidForSeconds: number | undefined,
    now: number,
  ): Promise<{ endpoint: EndpointView; secret: string } | undefined> {
    if (!this.row(endpointId)) return undefined;
    const secret = newSecret();
    const sealed = await this.seal(username, endpointId, secret);
    const validMs = (previousValidForSeconds ?? DEFAULT_PREVIOUS_VALID_S) * 1000;
    // Read again after the await: the row as it is now, in the same block as the write.
    const row = this.row(endpointId);
    if (!row) return undefined;
    this.sql.exec(
      `UPDATE endpoints SET secret = ?, previous_secret = ?, previous_expires_at = ?, version = version + 1
       WHERE endpoint_id = ?`,
      ...[sealed, validMs > 0 ? row.secret : null, validMs > 0 ? now + validMs : null, endpointId],
    );
    this.changed();
    return { endpoint: view(this.row(endpointId)!), secret };
  }

  /**
   * The endpoint as a delivery sends to it now: its URL, version and keys (the previous secret's
   * too until it expires), or undefined when it is gone or disabled. Read in one synchronous
   * block; the keys are opened once per version.
   */
  sending(
    username: string,
    endpointId: string,
    now: number,
  ): { endpoint: Omit<SendingEndpoint, 'keys'>; keys: Promise<CryptoKey[]> } | undefined {
    const row = this.row(endpointId);
    if (!row || row.state !== 'enabled') return undefined;
    const previousValid = row.previous_secret !== null && (row.previous_expires_at ?? 0) > now;
    // The previous secret's expiry changes the keys without a change of the row.
    const version = previousValid ? row.version : -row.version;
    const cached = this.keys.get(endpointId);
    const endpoint = { endpointId, url: row.url, version: row.version };
    if (cached?.version === version) return { endpoint, keys: Promise.resolve(cached.keys) };
    const sealed = [row.secret, ...(previousValid ? [row.previous_secret!] : [])];
    const keys = Promise.all(sealed.map((s) => this.open(username, endpointId, s).then(signingKey))).then((opened) => {
      this.keys.set(endpointId, { version, keys: opened });
      return opened;
    });
    return { endpoint, keys };
  }

  /**
   * Records an attempt's outcome on the endpoint's health here: a success clears it; a failure
   * starts (or continues) its run of failures. Returns since when the endpoint has failed here
   * without a success (undefined after a success).
   */
  health(endpointId: string, delivered: boolean, now: number): number | undefined {
    if (delivered) {
      this.delivered(endpointId, now);
      return undefined;
    }
    this.sql.exec(
      'UPDATE endpoints SET failing_since = ? WHERE endpoint_id = ? AND failing_since IS NULL',
      now,
      endpointId,
    );
    return this.row(endpointId)?.failing_since ?? now;
  }

  /** A success at `at` (here, or reported by another shard): the run of failures is over. */
  delivered(endpointId: string, at: number): void {
    this.sql.exec(
      `UPDATE endpoints SET last_success_at = MAX(COALESCE(last_success_at, 0), ?),
         failing_since = CASE WHEN failing_since <= ? THEN NULL ELSE failing_since END
       WHERE endpoint_id = ?`,
      ...[at, at, endpointId],
    );
  }

  /** The last success known, if any. */
  lastSuccessAt(endpointId: string): number | undefined {
    return this.row(endpointId)?.last_success_at ?? undefined;
  }

  /** Shard 0 knew of a success at `at`: the run of failures here counts from then at the earliest. */
  failingNoEarlierThan(endpointId: string, at: number): void {
    this.sql.exec(
      'UPDATE endpoints SET failing_since = MAX(failing_since, ?) WHERE endpoint_id = ? AND failing_since IS NOT NULL',
      at,
      endpointId,
    );
  }

  private row(endpointId: string): EndpointRow | undefined {
    return this.sql.exec<EndpointRow>('SELECT * FROM endpoints WHERE endpoint_id = ?', endpointId).toArray()[0];
  }

  private async seal(username: string, endpointId: string, secret: string): Promise<string> {
    const keys = await tokenKeys(settingsOf(this.env));
    return JSON.stringify(await seal(keys, secret, aadOf(username, endpointId)));
  }

  private async open(username: string, endpointId: string, sealed: string): Promise<string> {
    const keys = await tokenKeys(settingsOf(this.env));
    return open(keys, JSON.parse(sealed) as SealedValue, aadOf(username, endpointId));
  }
}

/** A sealed secret opens only for its merchant and endpoint. */
const aadOf = (username: string, endpointId: string): string => `event-endpoint:${username}:${endpointId}`;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `ep_` and 26 base32 characters (130 random bits). */
function newEndpointId(): string {
  return 'ep_' + [...crypto.getRandomValues(new Uint8Array(26))].map((b) => BASE32[b & 31]).join('');
}

function view(row: EndpointRow): EndpointView {
  return {
    endpointId: row.endpoint_id,
    url: row.url,
    events: JSON.parse(row.events) as Subscription,
    ...(row.description !== null ? { description: row.description } : {}),
    state: row.state,
    ...(row.disabled_reason !== null ? { disabledReason: row.disabled_reason } : {}),
    createdAt: new Date(row.created_at).toISOString(),
    ...(row.previous_secret !== null && row.previous_expires_at !== null
      ? { previousSecretExpiresAt: new Date(row.previous_expires_at).toISOString() }
      : {}),
  };
}
