import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { TABLES_VERSION } from '../../src/threeds/transaction/session-end';
import { projected, schemaLayoutOf, sessionKeyOf, threeDsObject } from './projection-helpers';
import {
  authenticateBody,
  completeChallenge,
  deviceDataInitialize,
  newReference,
  postForm,
  threeDs,
} from './threeds-helpers';

/**
 * A transaction's object knows the version of its tables from one row (src/storage/schema-version.ts)
 * instead of checking the catalogue at every start. An object made before that row, with the
 * layout of an earlier version (no row, a table and columns added since missing), is upgraded
 * once at its next start and goes on working; an object with no tables creates them, and the row,
 * on its first recording call (a freed one has none: test/worker/storage-freed.test.ts).
 */

type Json = Record<string, any>;

describe("a transaction object's tables", () => {
  it('are created with their version row by the first call that records something', async () => {
    const reference = newReference();
    expect((await deviceDataInitialize(reference)).status).toBe(200);
    const layout = await schemaLayoutOf(threeDsObject(reference));
    expect(layout.version).toBe(TABLES_VERSION);
    expect(layout.tables).toEqual(expect.arrayContaining(['session', 'outbox', 'series_hold', 'schema_version']));
    expect(layout.outbox).toEqual(expect.arrayContaining(['sent_at', 'recheck_at']));
  });

  it('of an earlier layout (no version row, a table and columns added since missing) are upgraded once, and the flow completes', async () => {
    const reference = newReference();
    const stub = threeDsObject(reference);
    const init: Json = await (await deviceDataInitialize(reference)).json();
    // The object's storage as an earlier version left it: no version row, no series_hold table, an
    // outbox without the guards kept in storage since, a live_auth without its series.
    await runInDurableObject(stub, (_o, state) => {
      const sql = state.storage.sql;
      sql.exec('DROP TABLE schema_version');
      sql.exec('DROP TABLE series_hold');
      sql.exec('DROP TABLE app_challenge');
      sql.exec('ALTER TABLE outbox DROP COLUMN sent_at');
      sql.exec('ALTER TABLE outbox DROP COLUMN recheck_at');
      sql.exec('ALTER TABLE live_auth DROP COLUMN series');
    });
    expect((await schemaLayoutOf(stub)).outbox).not.toContain('sent_at');
    // A deployment: the object starts again, under this code.
    await abortAllDurableObjects();
    const ddc = await (
      await postForm('/3ds/ddc', { JWT: init.deviceDataCollection.jwt as string, Bin: '457173' })
    ).text();
    const sessionId = /"SessionId":"([^"]+)"/.exec(ddc)![1]!;
    // A stub from before the reset fails every call: a new one.
    const layout = await schemaLayoutOf(threeDsObject(reference));
    expect(layout.version).toBe(TABLES_VERSION);
    expect(layout.tables).toEqual(expect.arrayContaining(['series_hold', 'app_challenge']));
    expect(layout.outbox).toEqual(expect.arrayContaining(['sent_at', 'recheck_at']));
    // The rest of a challenged flow, on the upgraded tables: the projection (with its guards) and the one result.
    const auth = await threeDs(
      'authenticate',
      authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified', collectionReference: sessionId }),
    );
    expect(auth.status).toBe(200);
    const challenge = (await auth.json<Json>()).challenge as { jwt: string; reference: string };
    await completeChallenge(challenge.jwt, ['1234']);
    const verified = await threeDs('verification', {
      transactionReference: reference,
      merchant: { entity: 'default' },
      challenge: { reference: challenge.reference },
    });
    expect((await verified.json<Json>()).outcome).toBe('authenticated');
    expect((await projected(sessionKeyOf(reference), (record) => record.result !== undefined)).result).toMatchObject({
      outcome: 'passed',
    });
    const live = await runInDurableObject(threeDsObject(reference), (_o, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('live_auth')")
        .toArray()
        .map((c) => c.name),
    );
    expect(live).toContain('series');
  });
});
