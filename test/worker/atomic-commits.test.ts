import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventOutbox } from '../../src/storage/event-outbox';
import { Outbox } from '../../src/storage/projection-outbox';
import { quiet } from './helpers';
import { threeDsObject } from './projection-helpers';
import { authenticateBody, threeDs } from './threeds-helpers';
import {
  countedUpdates,
  createToken,
  expectConsistent,
  freshCard,
  putAttribute,
  tokenBody,
  tokenCall,
} from './token-helpers';
import { runInDurableObject } from 'cloudflare:test';

/**
 * A decision that writes more than one row commits all of them or none (docs/storage.md
 * "Guarantees"): an exception midway (here, staging the change's event or projection throws once)
 * leaves the object as it was, and the retry decides afresh. Without one storage transaction
 * around the writes, the rows written before the throw would stay.
 */

type Json = Record<string, any>;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The next staging of an event (or a projection) throws, once. */
function failNextStage(of: typeof EventOutbox | typeof Outbox): void {
  vi.spyOn(of.prototype, 'stage').mockImplementationOnce(() => {
    throw new Error('injected: staging failed');
  });
}

describe('one storage transaction per decision', () => {
  it('an update whose event cannot be staged: 500, nothing counted, the token unchanged; the retry applies it once', async () => {
    quiet();
    const made = await createToken(tokenBody({ cardNumber: freshCard(), name: 'Ada Lovelace' }));
    expect(made.status).toBe(201);
    const token = await made.json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    failNextStage(EventOutbox);
    const failed = await putAttribute(href, 'cardHolderName', 'Grace Hopper');
    expect(failed.status).toBe(500);
    // Nothing of the update stayed: not its count, not its version.
    expect(await countedUpdates(token)).toBe(0);
    expect((await expectConsistent(token))?.version).toBe(1);
    expect((await (await tokenCall('GET', href)).json<Json>()).paymentInstrument.cardHolderName).toBe('Ada Lovelace');

    expect((await putAttribute(href, 'cardHolderName', 'Grace Hopper')).status).toBe(204);
    expect(await countedUpdates(token)).toBe(1);
    expect((await expectConsistent(token))?.version).toBe(2);
    expect((await (await tokenCall('GET', href)).json<Json>()).paymentInstrument.cardHolderName).toBe('Grace Hopper');
  });

  it('a deletion whose projection cannot be staged: 500, the token still live; the retry deletes it', async () => {
    quiet();
    const token = await (await createToken(tokenBody({ cardNumber: freshCard() }))).json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    failNextStage(Outbox);
    expect((await tokenCall('DELETE', href)).status).toBe(500);
    expect((await tokenCall('GET', href)).status).toBe(200);
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    expect((await tokenCall('GET', href)).status).toBe(404);
  });

  it("authenticate whose projection cannot be staged: 500 and no claim left; the retry gets its answer, and it is the transaction's one", async () => {
    quiet();
    const body = authenticateBody();
    failNextStage(Outbox);
    expect((await threeDs('authenticate', body)).status).toBe(500);
    const claims = await runInDurableObject(
      threeDsObject(body.transactionReference as string),
      (_o, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM first_bodies WHERE name = 'auth'").one().n,
    );
    expect(claims).toBe(0);
    const answered = await threeDs('authenticate', body);
    expect(answered.status).toBe(200);
    const answer = await answered.json<Json>();
    expect(answer.transactionReference).toBe(body.transactionReference);
    expect(await (await threeDs('authenticate', body)).json<Json>()).toEqual(answer);
  });
});
