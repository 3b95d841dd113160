import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_LOG_TABLES_VERSION } from '../../src/events/event-log';
import { schemaLayoutOf } from './projection-helpers';
import { Clock, logStub, newEvent, Receiver, restoreTransport, testMerchant } from './event-helpers';

/**
 * A merchant's event log knows the version of its tables from one row (src/storage/schema-version.ts),
 * as the transaction's and the token's objects do, instead of running every CREATE and three
 * catalogue checks at every start. A log made before that row, with the layout of an earlier
 * version (no row, columns added since missing), is upgraded once at its next start and goes on
 * delivering.
 */

afterEach(restoreTransport);

/** The columns of one of the log's tables. */
function columnsOf(stub: DurableObjectStub, table: string): Promise<string[]> {
  return runInDurableObject(stub, (_o, state) =>
    state.storage.sql
      .exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
      .toArray()
      .map((c) => c.name),
  );
}

describe("a merchant's event log's tables", () => {
  it('are created with their version row at its first start', async () => {
    const { object } = await testMerchant(new Receiver(), new Clock());
    const layout = await schemaLayoutOf(object);
    expect(layout.version).toBe(EVENT_LOG_TABLES_VERSION);
    expect(layout.tables).toEqual(expect.arrayContaining(['owner', 'events', 'deliveries', 'endpoints']));
  });

  it('of an earlier layout (no version row, columns added since missing) are upgraded once, and events go on being delivered', async () => {
    const receiver = new Receiver();
    const clock = new Clock();
    const { object, stub, username, endpoints } = await testMerchant(receiver, clock);
    await stub.append(username, [newEvent(clock)]);
    await stub.whenIdle();
    expect(receiver.received).toHaveLength(1);
    // The log's storage as an earlier version left it: no version row, endpoints without
    // last_success_at, owner without its shard.
    await runInDurableObject(object, (_o, state) => {
      const sql = state.storage.sql;
      sql.exec('DROP TABLE schema_version');
      sql.exec('ALTER TABLE endpoints DROP COLUMN last_success_at');
      sql.exec('ALTER TABLE owner DROP COLUMN shard');
    });
    expect(await columnsOf(object, 'endpoints')).not.toContain('last_success_at');
    // A deployment: the object starts again, under this code (a stub from before the reset fails every call).
    await abortAllDurableObjects();
    const again = env.EVENT_LOG.get(env.EVENT_LOG.idFromName(username));
    const upgraded = logStub(again);
    await upgraded.append(username, [newEvent(clock)]);
    await upgraded.whenIdle();
    expect(receiver.received.filter((r) => r.url === endpoints[0]!.url)).toHaveLength(2);
    expect((await schemaLayoutOf(again)).version).toBe(EVENT_LOG_TABLES_VERSION);
    expect(await columnsOf(again, 'endpoints')).toContain('last_success_at');
    expect(await columnsOf(again, 'owner')).toContain('shard');
  });
});
