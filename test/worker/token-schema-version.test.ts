import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { TOKEN_TABLES_VERSION } from '../../src/tokens/token-group';
import { schemaLayoutOf } from './projection-helpers';
import { expectConsistent, newToken, putAttribute, tokenGroupOf, tokenRow } from './token-helpers';

/**
 * A token object knows the version of its tables from one row (src/storage/schema-version.ts),
 * as a transaction's does (threeds-schema-version.test.ts), instead of running every CREATE and
 * the outbox's column check at every start. An object made before that row, with the layout of an
 * earlier version (no row, the outbox's guards missing), is upgraded once at its next start and
 * goes on working.
 */

describe("a token object's tables", () => {
  it('are created with their version row by the first token', async () => {
    const { href } = await newToken();
    const layout = await schemaLayoutOf(tokenGroupOf(href));
    expect(layout.version).toBe(TOKEN_TABLES_VERSION);
    expect(layout.tables).toEqual(
      expect.arrayContaining(['owner', 'tokens', 'updates', 'conflicts', 'outbox', 'events_out', 'schema_version']),
    );
    expect(layout.outbox).toEqual(expect.arrayContaining(['sent_at', 'recheck_at']));
  });

  it('of an earlier layout (no version row, the outbox without its guards) are upgraded once, and the token is updated', async () => {
    const { href } = await newToken();
    const stub = tokenGroupOf(href);
    await expectConsistent(href);
    // The object's storage as an earlier version left it.
    await runInDurableObject(stub, (_o, state) => {
      const sql = state.storage.sql;
      sql.exec('DROP TABLE schema_version');
      sql.exec('ALTER TABLE outbox DROP COLUMN sent_at');
      sql.exec('ALTER TABLE outbox DROP COLUMN recheck_at');
    });
    expect((await schemaLayoutOf(stub)).version).toBeNull();
    // A deployment: the object starts again, under this code.
    await abortAllDurableObjects();
    // A stub from before the reset fails every call: a new one.
    const layout = await schemaLayoutOf(tokenGroupOf(href));
    expect(layout.version).toBe(TOKEN_TABLES_VERSION);
    expect(layout.outbox).toEqual(expect.arrayContaining(['sent_at', 'recheck_at']));
    const updated = await putAttribute(href, 'cardHolderName', 'Grace Hopper');
    expect(updated.status, await updated.clone().text()).toBe(204);
    expect((await tokenRow(href))!.record.version).toBe(2);
    expect(await expectConsistent(href)).toMatchObject({ version: 2 });
  });
});
