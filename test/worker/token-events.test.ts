import { afterEach, describe, expect, it, vi } from 'vitest';
import { objectStorage } from '../../src/storage/object-storage';
import { restoreObjects } from './faulty-env';
import { webhookProblems } from './openapi-compat';
import { burst } from './helpers';
import {
  failingAppends,
  receivingAtTestEndpoint as receiving,
  restoreSink,
  restoreTransport,
  settledOwner,
  TEST_ENDPOINT as ENDPOINT,
  type Receiver,
  type Received,
} from './event-helpers';
import { newToken, putAttribute, tokenCall, tokenGroupOf } from './token-helpers';

/**
 * The events a token's object emits (docs/events.md "Types"): `tokens.token.updated` for each
 * version an update makes, `tokens.token.extended` for an extension, `tokens.token.deleted` for a
 * deletion; each staged with the change it reports, appended to the merchant's event log after
 * the answer, and delivered signed to the test merchant's endpoint (`data/merchants.json`) with
 * the token as GET shows it, its card number masked. The endpoint is an in-test receiver
 * (`eventTransport`).
 */

type Json = Record<string, any>;

afterEach(async () => {
  restoreSink();
  await restoreTransport();
  restoreObjects();
  vi.restoreAllMocks();
});

/** The events a token's deliveries carried, in the order they arrived. */
const eventsOf = (receiver: Receiver, tokenId: string): Received[] =>
  receiver.received.filter((r) => r.url === ENDPOINT && r.event.data?.tokenId === tokenId);

/** Until the token's object has no event staged, and the log nothing in flight. */
const settled = (href: string): Promise<void> => settledOwner(tokenGroupOf(href));

describe("a token's events", () => {
  it('emits updated for an update and deleted for a deletion, in order, signed, with the token as GET showed it', async () => {
    const receiver = await receiving();
    const { token, href, cardNumber } = await newToken();
    expect((await putAttribute(href, 'cardHolderName', 'Augusta Ada King')).status).toBe(204);
    const shown = await (await tokenCall('GET', href)).json<Json>();
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    await receiver.until(() => eventsOf(receiver, token.tokenId).length >= 2);
    await settled(href);
    expect(eventsOf(receiver, token.tokenId)).toHaveLength(2);
    const [updated, deleted] = eventsOf(receiver, token.tokenId);
    expect(updated!.event).toMatchObject({
      eventId: `tok_${token.tokenId}_v2`,
      eventType: 'tokens.token.updated',
      merchant: { entity: 'default' },
      data: shown,
    });
    expect(deleted!.event).toMatchObject({
      eventId: `tok_${token.tokenId}_deleted`,
      eventType: 'tokens.token.deleted',
      data: shown,
    });
    for (const r of [updated!, deleted!]) {
      expect(webhookProblems(r.headers, r.body)).toEqual([]);
      expect(r.verifiedWith).toHaveLength(1);
      expect(r.body).not.toContain(cardNumber);
      expect(r.body).toContain(`${cardNumber.slice(0, 6)}******${cardNumber.slice(-4)}`);
    }
  });

  it('emits one event for 20 identical updates at once, and none for a value the token holds', async () => {
    const receiver = await receiving();
    const { token, href } = await newToken();
    const responses = await burst(20, () => putAttribute(href, 'description', 'Same for all'));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
    expect((await putAttribute(href, 'description', 'Same for all')).status).toBe(204);
    // The next change is the next version, its own event.
    expect((await putAttribute(href, 'description', 'Then this')).status).toBe(204);
    await receiver.until(() => eventsOf(receiver, token.tokenId).length >= 2);
    // Then nothing more is on its way (the object has nothing staged, the log nothing in flight):
    // exactly these two.
    await settled(href);
    expect(eventsOf(receiver, token.tokenId).map((r) => r.event.eventId)).toEqual([
      `tok_${token.tokenId}_v2`,
      `tok_${token.tokenId}_v3`,
    ]);
  });

  it('emits one deleted event for 20 identical deletions at once', async () => {
    const receiver = await receiving();
    const { token, href } = await newToken();
    const responses = await burst(20, () => tokenCall('DELETE', href));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
    await receiver.until(() => eventsOf(receiver, token.tokenId).length >= 1);
    await settled(href);
    expect(eventsOf(receiver, token.tokenId).map((r) => r.event.eventId)).toEqual([`tok_${token.tokenId}_deleted`]);
  });

  it("emits each of 20 different updates at once, in the order the token's object applied them", async () => {
    const receiver = await receiving();
    const { token, href } = await newToken();
    const responses = await burst(20, (i) => putAttribute(href, 'description', `Update ${i}`));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(204));
    await receiver.until(() => eventsOf(receiver, token.tokenId).length >= 20);
    await settled(href);
    const events = eventsOf(receiver, token.tokenId).map((r) => r.event);
    expect(events.map((e) => e.eventId)).toEqual(
      Array.from({ length: 20 }, (_, i) => `tok_${token.tokenId}_v${i + 2}`),
    );
    // The last one holds what GET shows.
    expect(events[19]!.data.description).toBe((await (await tokenCall('GET', href)).json<Json>()).description);
  });

  it("keeps the events while the merchant's event log cannot be reached, and appends them once it can", async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const receiver = await receiving();
    const { token, href } = await newToken();
    // The token's object's own appends to the event log fail three times, then go through.
    objectStorage.retryBaseMs = 20;
    const appends = failingAppends('refused', 3);
    const answered = await putAttribute(href, 'description', 'Kept');
    expect(answered.status).toBe(204);
    // Retried by the object (its alarm, with backoff) until the log has it: delivered once.
    await receiver.until(() => eventsOf(receiver, token.tokenId).length >= 1);
    await settled(href);
    expect(eventsOf(receiver, token.tokenId)).toHaveLength(1);
    expect(appends.faults).toBe(3);
    expect(eventsOf(receiver, token.tokenId)[0]!.event).toMatchObject({
      eventId: `tok_${token.tokenId}_v2`,
      data: { description: 'Kept' },
    });
  });
});
