import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { threeDsTransactionName } from '../../src/threeds/transaction-api';
import type { ThreeDsTransaction } from '../../src/threeds/transaction/transaction-object';
import { sessionKey, type SessionScope } from '../../src/threeds/session-record';

type Json = Record<string, any>;

/**
 * Waits until KV holds the projection of `key` that `accept` takes (by default, any value): the
 * object writes it from its alarm, after the answer, so a test reads it when it is there. Fails
 * after `ms` (generous: a busy machine delays alarms, never breaks them).
 */
export async function projected(
  key: string,
  accept: (value: Json) => boolean = () => true,
  ms = 20_000,
): Promise<Json> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await env.SESSIONS.get<Json>(key, 'json');
    if (value !== null && accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`no projection of ${key} within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The scope of a test-merchant transaction on the default entity. */
export const scopeOf = (transactionReference: string): SessionScope => ({
  username: 'test-merchant',
  entity: 'default',
  transactionReference,
});

/** The session record's KV key of a test-merchant transaction on the default entity. */
export const sessionKeyOf = (transactionReference: string): string => sessionKey(scopeOf(transactionReference));

/** The transaction's object. */
export function threeDsObject(transactionReference: string): DurableObjectStub<ThreeDsTransaction> {
  return env.THREEDS_TRANSACTION.get(
    env.THREEDS_TRANSACTION.idFromName(threeDsTransactionName(scopeOf(transactionReference))),
  );
}

/** Runs the transaction object's alarm now, if one is set (its projections that are due). */
export function runAlarmOf(transactionReference: string): Promise<boolean> {
  return runDurableObjectAlarm(threeDsObject(transactionReference));
}

/** The attempts at writing `key` in an object's outbox (white-box): 0 while none failed, or when it has no such row. */
export function outboxAttempts(owner: DurableObjectStub, key: string): Promise<number> {
  return runInDurableObject(
    owner,
    (_g, state) =>
      state.storage.sql.exec<{ attempts: number }>('SELECT attempts FROM outbox WHERE key = ?', key).toArray()[0]
        ?.attempts ?? 0,
  );
}

/** When the object sent the write of `key` still out (the outbox's `sent_at`), or null when none is out. */
export function outboxSentAt(owner: DurableObjectStub, key: string): Promise<number | null> {
  return runInDurableObject(
    owner,
    (_g, state) =>
      state.storage.sql.exec<{ sent_at: number | null }>('SELECT sent_at FROM outbox WHERE key = ?', key).toArray()[0]
        ?.sent_at ?? null,
  );
}

/** An object's tables, its outbox's columns, and its schema version row (null: none). */
export function schemaLayoutOf(
  stub: DurableObjectStub,
): Promise<{ outbox: string[]; tables: string[]; version: unknown }> {
  return runInDurableObject(stub, (_o, state) => {
    const sql = state.storage.sql;
    const names = (query: string): string[] =>
      sql
        .exec<{ name: string }>(query)
        .toArray()
        .map((t) => t.name);
    const tables = names("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    return {
      outbox: names("SELECT name FROM pragma_table_info('outbox')"),
      tables,
      version: tables.includes('schema_version')
        ? sql.exec<{ version: number }>('SELECT version FROM schema_version').one().version
        : null,
    };
  });
}
