import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LATE_LANDING_DEADLINES } from '../../src/storage/projection-outbox';
import { restoreObjects, StorageHarness } from './faulty-env';
import { quiet } from './helpers';
import {
  createToken,
  freshCard,
  projectionSettled,
  putAttribute,
  storedToken,
  tokenBody,
  tokenCall,
  tokenGroupOf,
} from './token-helpers';

/**
 * A projection write held out when its object is reset (a deployment): what guards the writes is
 * kept in the object's storage, not in the instance's memory (docs/storage.md "Projections"). The
 * new instance treats the write it finds marked sent as unanswered, and once that write can no
 * longer land writes the newest value once more, so a put that lands after the deletion of its
 * token cannot bring the token's KV copy back for its whole TTL.
 */

type Json = Record<string, any>;

/** The objects' own KV deadline here: a late landing is possible for 12 of them (3.6 s). */
const DEADLINE = 300;

afterEach(() => {
  restoreObjects();
  vi.restoreAllMocks();
});

describe('a projection write out when its object is reset', () => {
  it("never brings a deleted token's KV copy back: the write that lands late is overwritten", async () => {
    quiet();
    const token = await (await createToken(tokenBody({ cardNumber: freshCard(), name: 'Ada' }))).json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    await projectionSettled(token);
    const key = `token:${token.tokenId as string}`;
    const h = new StorageHarness().throughObjects(DEADLINE, 50).holdNextKvWriteUntilLater(key);
    // An update: its put to KV goes out and is held (it has not landed, and nobody hears of it).
    expect((await putAttribute(href, 'cardHolderName', 'Ada B', {}, (r) => h.fetch(r))).status).toBe(204);
    await vi.waitFor(() => expect(h.calls.some((c) => c.by === 'object' && c.key === key)).toBe(true), {
      timeout: 20_000,
      interval: 20,
    });
    // The object is reset (a deployment): the instance that sent the put is gone.
    await abortAllDurableObjects();
    // The token is deleted by the new instance, and its KV copy with it.
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    const stub = tokenGroupOf(token);
    await vi.waitFor(
      async () => {
        await runDurableObjectAlarm(stub);
        expect(await storedToken(token.tokenId as string)).toBeNull();
      },
      { timeout: 20_000, interval: 100 },
    );
    // The held put lands now, late (past KV's one write a second to the key, which the harness keeps):
    // KV holds the deleted token's record for a moment...
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await h.landHeldWrites();
    expect(await storedToken(token.tokenId as string)).not.toBeNull();
    // ...until the newest state (deleted) is written once more, when the put could no longer land.
    await vi.waitFor(
      async () => {
        await runDurableObjectAlarm(stub);
        expect(await storedToken(token.tokenId as string)).toBeNull();
      },
      { timeout: LATE_LANDING_DEADLINES * DEADLINE + 20_000, interval: 100 },
    );
    expect((await tokenCall('GET', href)).status).toBe(404);
    expect(
      await runInDurableObject(stub, (_o, state) =>
        state.storage.sql.exec('SELECT 1 FROM outbox WHERE recheck_at IS NOT NULL').toArray(),
      ).catch(() => []),
    ).toEqual([]);
  });
});
