import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { threeDsTransactionName } from '../../src/threeds/transaction-api';
import type { ThreeDsTransaction } from '../../src/threeds/transaction/transaction-object';
import { sessionKey, type SessionScope } from '../../src/threeds/session-record';
import { toBase64, toBase64Url, toHex } from '../../src/bytes';

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

/**
 * Every text an object stores, to scan for what must never be kept (a card number, a key,
 * `encData`): its tables' text cells, and each BLOB as hex, base64, base64url and UTF-8 text (the
 * runtime's own `_cf` tables left out).
 */
export function storedTexts(owner: DurableObjectStub): Promise<string[]> {
  return runInDurableObject(owner, (_o, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'",
      )
      .toArray();
    return tables.flatMap(({ name }) =>
      sql
        .exec(`SELECT * FROM "${name}"`)
        .toArray()
        .flatMap((row) => Object.values(row))
        .flatMap((v): string[] => {
          if (typeof v === 'string') return [v];
          if (!(v instanceof ArrayBuffer)) return [];
          const b = new Uint8Array(v);
          return [toHex(b), toBase64(b), toBase64Url(b), new TextDecoder().decode(b)];
        }),
    );
  });
}

/**
 * The paths of every `d` member of a key-shaped object (one with `kty`, `crv` or `x`) in a JSON
 * value, looking into strings that hold JSON themselves (a key stored as a JSON string in JSON).
 */
export function jwkPrivateMembers(value: unknown, path = '$'): string[] {
  if (typeof value === 'string') {
    const inner = /^\s*[[{]/.test(value) ? parsedOrUndefined(value) : undefined;
    return inner === undefined ? [] : jwkPrivateMembers(inner, `${path}(json)`);
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => jwkPrivateMembers(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  const own = ('kty' in record || 'crv' in record || 'x' in record) && 'd' in record ? [`${path}.d`] : [];
  return [...own, ...Object.entries(record).flatMap(([k, v]) => jwkPrivateMembers(v, `${path}.${k}`))];
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
