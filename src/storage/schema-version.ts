/**
 * Which version of its tables an object's storage holds: one row, written in the same synchronous
 * block as the tables, so that a start reads that row instead of re-running every part's
 * `CREATE TABLE IF NOT EXISTS` and column checks (docs/storage.md "Storage freed").
 *
 * - No tables at all (a new object, or one whose storage was freed by `deleteAll`, which takes
 *   the row with it): `none`; the object creates its tables, and the row, when a call first
 *   records something.
 * - Tables of the current version: `current`; nothing to do.
 * - Tables without the row (made before it existed), or of an earlier version: `older`; the
 *   object runs its idempotent creation and upgrades once, and records the current version.
 *
 * Raise the owner's version with every change to its tables (a new table, a new column), and
 * keep the upgrade of the older layouts in its creation.
 */

export type TablesFound = 'none' | 'current' | 'older';

const TABLE = 'schema_version';

export class SchemaVersion {
  constructor(
    private readonly sql: SqlStorage,
    /** The version of the owner's tables this code writes. */
    private readonly current: number,
    /** A table every layout of the owner's has had: tables without the row are an older layout. */
    private readonly marker: string,
  ) {}

  /** What a start finds: at most two statements (the catalogue, then the row). */
  found(): TablesFound {
    const tables = this.sql
      .exec<{ name: string }>(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)`,
        TABLE,
        this.marker,
      )
      .toArray()
      .map((t) => t.name);
    if (!tables.includes(TABLE)) return tables.length === 0 ? 'none' : 'older';
    const row = this.sql.exec<{ version: number }>(`SELECT version FROM ${TABLE}`).toArray()[0];
    return row !== undefined && row.version >= this.current ? 'current' : 'older';
  }

  /** Records that the tables are of the current version: in the same synchronous block as their creation. */
  record(): void {
    // One statement run (the version is the code's own integer, written out).
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
      INSERT OR REPLACE INTO ${TABLE} (id, version) VALUES (1, ${Math.trunc(this.current)})`);
  }
}
