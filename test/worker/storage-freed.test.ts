import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it, vi } from 'vitest';
import { StorageHarness } from './faulty-env';
import { call, TEST_AUTH } from './helpers';
import { threeDsObject } from './projection-helpers';
import { authenticateBody, newReference, threeDs, THREEDS_MEDIA } from './threeds-helpers';
import { createToken, freshCard, tokenBody, tokenCall, tokenGroupOf } from './token-helpers';

/**
 * An object's storage is created only when a call records something, and freed once nothing is
 * left to do (docs/storage.md "Storage freed"): no tables, no alarm, no bytes. At internet scale,
 * objects that keep their storage after their transaction or their last token are millions of
 * dead databases, billed and (locally) woken by their alarms.
 */

type Json = Record<string, any>;

/** The object's own tables (the runtime's `_cf_…` ones aside) and its alarm. */
function storageOf(stub: DurableObjectStub): Promise<{ tables: string[]; alarm: number | null }> {
  return runInDurableObject(stub, async (_o, state) => ({
    tables: state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
      )
      .toArray()
      .map((r) => r.name),
    alarm: await state.storage.getAlarm(),
  }));
}

/**
 * Runs the object's alarms, as time passing would, until it has none left (its last KV write may
 * wait out KV's one write a second per key).
 */
async function runAlarms(stub: DurableObjectStub): Promise<void> {
  await vi.waitFor(
    async () => {
      await runDurableObjectAlarm(stub);
      expect((await storageOf(stub)).alarm).toBeNull();
    },
    { timeout: 30_000, interval: 200 },
  );
}

describe('a 3DS transaction object', () => {
  it('is not created by a GET of a reference nobody used (404, no table)', async () => {
    const reference = newReference();
    const reads = new StorageHarness();
    const response = await call(`/verifications/customers/3ds/authentications/${reference}?entity=default`, {
      method: 'GET',
      headers: { Authorization: TEST_AUTH, Accept: THREEDS_MEDIA },
      via: (r) => reads.fetch(r),
    });
    expect(response.status).toBe(404);
    // The transaction's 404: its object was asked, and answered that it knows nothing.
    expect(reads.calls.map((c) => `${c.store}.${c.op}`)).toEqual(['do.transaction']);
    expect(await storageOf(threeDsObject(reference))).toEqual({ tables: [], alarm: null });
  });

  it('frees its storage once its session ended and its projection and event are sent; the reference starts anew', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-frictionless' });
    const first = await threeDs('authenticate', body);
    expect(first.status).toBe(200);
    const stub = threeDsObject(body.transactionReference as string);
    expect((await storageOf(stub)).tables).toContain('session');
    // The session's hour passes.
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec('UPDATE session SET expires_at = ?', Date.now() - 120_000);
    });
    await runAlarms(stub);
    expect(await storageOf(stub)).toEqual({ tables: [], alarm: null });
    // The reference may start a new session.
    const again = await threeDs('authenticate', body);
    expect(again.status).toBe(200);
    expect((await again.json<Json>()).transactionReference).toBe(body.transactionReference);
    expect((await storageOf(stub)).tables).toContain('session');
  });
});

describe("a token group's object", () => {
  it('frees its storage once its last token ended and its projection and events are sent', async () => {
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const stub = tokenGroupOf(token);
    expect((await tokenCall('DELETE', token.tokenPaymentInstrument.href as string)).status).toBe(204);
    // The deleted token is kept until it would have expired: then it ends.
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec('UPDATE tokens SET expires_at = ?', Date.now() - 1);
    });
    await runAlarms(stub);
    expect(await storageOf(stub)).toEqual({ tables: [], alarm: null });
    // Reads of a token it no longer holds answer 404 and create nothing.
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href as string)).status).toBe(404);
    expect((await storageOf(stub)).tables).toEqual([]);
  });
});
