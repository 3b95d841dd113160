import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TOKEN_PREFIX } from '../../src/storage/token-store';
import { StorageHarness, type Fault } from './faulty-env';
import { burst, luhnComplete, panLookup } from './helpers';
import { createToken, liveTokenIds, putAttribute, tokenBody, tokenCall } from './token-helpers';

/** Tests that wait out a real 10 s write lease: generous, for a busy machine. */
const LEASE_WAIT = { timeout: 120_000 };

type Json = Record<string, any>;

const N = 20;
let cardSeed = 0;

/** A card no other test tokenizes (Visa, Danske Bank range). */
function newCard(): string {
  cardSeed += 1;
  return luhnComplete(`45713684${String(Date.now() % 1e5).padStart(5, '0')}${String(cardSeed).padStart(2, '0')}`, 16);
}

async function expect503(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get('Retry-After')).toMatch(/^\d+$/);
  expect((await response.json<Json>()).errorName).toBe('serviceUnavailable');
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every storage call a clean run of `send` makes: the calls to fail, one in turn. */
async function callsOf(send: (harness: StorageHarness) => Promise<Response>): Promise<number> {
  const harness = new StorageHarness();
  expect((await send(harness)).status).toBeLessThan(300);
  return harness.calls.length;
}

const faults = (n: number): [string, Fault][] =>
  Array.from({ length: n }, (_, nth) =>
    (['before', 'after'] as const).map((when): [string, Fault] => [
      `call ${nth + 1} fails ${when} it reaches storage`,
      { nth, of: 'any', when },
    ]),
  ).flat();

describe('POST /tokens under bursts', () => {
  it(`gives one token for ${N} identical requests at once: one 201, one KV write`, async () => {
    const harness = new StorageHarness();
    const body = tokenBody({ cardNumber: newCard(), name: 'Ada Lovelace' });
    const responses = await burst(N, () => createToken(body, {}, (r) => harness.fetch(r)));
    const answers = await Promise.all(responses.map((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => a.tokenId)).size).toBe(1);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(N - 1);
    expect(harness.count((c) => c.store === 'kv' && c.op === 'put')).toBe(1);
    expect((await tokenCall('GET', answers[0]!.tokenPaymentInstrument.href)).status).toBe(200);
  });

  it('answers a burst of the same card with different details with the one token that won', async () => {
    const cardNumber = newCard();
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        createToken(tokenBody({ cardNumber, extra: { description: `try ${i}` } })).then((r) => r.json<Json>()),
      ),
    );
    expect(new Set(answers.map((a) => a.tokenId)).size).toBe(1);
    expect(new Set(answers.map((a) => a.description)).size).toBe(1);
  });
});

describe('POST /tokens under bursts of different details', () => {
  it(`gives one token for ${N} requests with other cardholder names at once: one 201, the rest 409 naming it`, async () => {
    const cardNumber = newCard();
    const responses = await Promise.all(
      Array.from({ length: N }, (_, i) => createToken(tokenBody({ cardNumber, name: `Holder ${i}` }))),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(N - 1);
    const answers = await Promise.all(responses.map((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => a.tokenId)).size).toBe(1);
    const winner = answers.find((_a, i) => responses[i]!.status === 201)!;
    for (const a of answers.filter((x) => x !== winner)) {
      expect(a.paymentInstrument.cardHolderName).toBe(winner.paymentInstrument.cardHolderName);
      expect(a.conflicts.paymentInstrument.cardHolderName).not.toBe(winner.paymentInstrument.cardHolderName);
    }
  });
});

describe('POST /tokens when any one storage call fails', () => {
  it.each(faults(3))('%s: nothing is orphaned and the retry completes with the same token', async (_name, fault) => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const body = tokenBody({ cardNumber: newCard(), name: 'Grace Hopper' });
    expect(await callsOf((h) => createToken(tokenBody({ cardNumber: newCard() }), {}, (r) => h.fetch(r)))).toBe(3);
    const harness = new StorageHarness().failOn(fault);
    const before = await liveTokenIds();
    const first = await createToken(body, {}, (r) => harness.fetch(r));
    const failedCall = `${harness.calls[fault.nth]?.store}.${harness.calls[fault.nth]?.op}`;
    // Telling the guard the record is written is best effort: the record is there, so 201 stands.
    if (failedCall === 'do.recorded') expect(first.status).toBe(201);
    else await expect503(first);
    const created = [...(await liveTokenIds())].filter((id) => !before.has(id));
    expect(created.length).toBeLessThanOrEqual(1);

    const retry = await createToken(body);
    expect([200, 201]).toContain(retry.status);
    const token = await retry.json<Json>();
    if (created.length === 1) expect(token.tokenId).toBe(created[0]);
    expect([...(await liveTokenIds())].filter((id) => !before.has(id))).toEqual([token.tokenId]);
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(200);
  });
});

describe('DELETE /tokens/{id} when any one storage call fails', () => {
  it.each(faults(4))(
    '%s: the retry ends in the token being gone with 204, and the card is free again',
    async (_name, fault) => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const body = tokenBody({ cardNumber: newCard() });
      const token = await (await createToken(body)).json<Json>();
      const href = token.tokenPaymentInstrument.href as string;
      const harness = new StorageHarness().failOn(fault);
      await expect503(await tokenCall('DELETE', href, {}, (r) => harness.fetch(r)));
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      expect((await tokenCall('GET', href)).status).toBe(404);
      const again = await createToken(body);
      expect(again.status).toBe(201);
      expect((await again.json<Json>()).tokenId).not.toBe(token.tokenId);
    },
  );

  it(`answers ${N} identical DELETEs at once with 204 and writes KV once (one tombstone, one record deleted)`, async () => {
    const token = await (await createToken(tokenBody({ cardNumber: newCard() }))).json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    const harness = new StorageHarness();
    const statuses = (await burst(N, () => tokenCall('DELETE', href, {}, (r) => harness.fetch(r)))).map(
      (r) => r.status,
    );
    expect(statuses).toEqual(Array(N).fill(204));
    // KV allows one write per second to a key: the burst's others wait for the one writer.
    expect(harness.count((c) => c.store === 'kv' && c.op === 'put')).toBe(1);
    expect(harness.count((c) => c.store === 'kv' && c.op === 'delete')).toBe(1);
    expect((await tokenCall('GET', href)).status).toBe(404);
    // Repeated once the tombstone is there: 204, and nothing left to write.
    const again = new StorageHarness();
    const repeated = await burst(N, () => tokenCall('DELETE', href, {}, (r) => again.fetch(r)));
    expect(repeated.map((r) => r.status)).toEqual(Array(N).fill(204));
    expect(again.count((c) => c.store === 'kv' && (c.op === 'put' || c.op === 'delete'))).toBe(0);
  });
});

describe('POST /tokens after a failure, with other details', () => {
  it('answers the token the failed request claimed (its record written by this request) rather than blocking the card', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const cardNumber = newCard();
    const harness = new StorageHarness().failOn({ nth: 0, of: 'kvWrite', when: 'before' });
    await expect503(
      await createToken(tokenBody({ cardNumber, extra: { description: 'first' } }), {}, (r) => harness.fetch(r)),
    );
    const other = await createToken(tokenBody({ cardNumber, extra: { description: 'second' } }));
    expect(other.status).toBe(200);
    const token = await other.json<Json>();
    expect(token.description).toBe('first');
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(200);
  });

  it('answers once the lease runs out when both confirmations of a written token were lost', LEASE_WAIT, async () => {
    const cardNumber = newCard();
    // Calls: claim, record write, then the confirmation twice (both lost).
    const harness = new StorageHarness().failOn({ nth: 2, of: 'any', when: 'before', times: 2 });
    const first = await createToken(tokenBody({ cardNumber, extra: { description: 'first' } }), {}, (r) =>
      harness.fetch(r),
    );
    expect(first.status).toBe(201);
    await harness.settled();
    const other = await createToken(tokenBody({ cardNumber, extra: { description: 'second' } }));
    expect(other.status).toBe(200);
    expect((await other.json<Json>()).tokenId).toBe((await first.json<Json>()).tokenId);
  });
});

describe('DELETE whose tombstone write fails, then POST of the same card', () => {
  it('makes a new token and finishes the deletion: the card never has two live tokens', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const body = tokenBody({ cardNumber: newCard() });
    const old = await (await createToken(body)).json<Json>();
    const harness = new StorageHarness().failOn({ nth: 0, of: 'kvWrite', when: 'before' });
    await expect503(await tokenCall('DELETE', old.tokenPaymentInstrument.href, {}, (r) => harness.fetch(r)));
    const fresh = await createToken(body);
    expect(fresh.status).toBe(201);
    const token = await fresh.json<Json>();
    expect(token.tokenId).not.toBe(old.tokenId);
    expect((await tokenCall('GET', old.tokenPaymentInstrument.href)).status).toBe(404);
    expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(200);
    expect((await tokenCall('DELETE', old.tokenPaymentInstrument.href)).status).toBe(204);
  });
});

describe('storage calls that hang or land late', () => {
  /** Storage calls get a short deadline here, so that a hang costs the test a fraction of a second. */
  const SHORT = { STORAGE_TIMEOUT_MS: '300' } as Partial<Env>;

  it('never brings a deleted token back when its record write lands after the DELETE', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const body = tokenBody({ cardNumber: newCard() });
    // The first POST's record write is held back: the request times out, releasing its lease.
    const slow = new StorageHarness(SHORT).holdNextKvWriteUntilLater();
    await expect503(await createToken(body, {}, (r) => slow.fetch(r)));
    // Its retry writes the record of the same token, which is then deleted.
    const token = await (await createToken(body)).json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    expect((await tokenCall('GET', href)).status).toBe(200);
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    expect((await tokenCall('GET', href)).status).toBe(404);
    // The first write lands now, late: the token stays deleted, for GET and for lookups by token.
    await slow.landHeldWrites();
    expect(await env.SESSIONS.get(`${TOKEN_PREFIX}${token.tokenId}`)).not.toBeNull();
    expect((await tokenCall('GET', href)).status).toBe(404);
    const lookup = await panLookup({ merchant: { entity: 'default' }, token: href });
    expect(lookup.status).toBe(404);
    expect((await lookup.json<Json>()).errorName).toBe('tokenNotFound');
    expect((await tokenCall('DELETE', href)).status).toBe(204);
  });

  it("never brings a deleted token back when an update's record write lands after the DELETE", LEASE_WAIT, async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const token = await (await createToken(tokenBody({ cardNumber: newCard() }))).json<Json>();
    const href = token.tokenPaymentInstrument.href as string;
    // The update's record write is held back: the request times out; its version stands in the guard.
    const slow = new StorageHarness(SHORT).holdNextKvWriteUntilLater();
    await expect503(await putAttribute(href, 'description', 'written late', {}, (r) => slow.fetch(r)));
    expect((await tokenCall('DELETE', href)).status).toBe(204);
    // The update's write lands now, after the deletion: the token stays deleted.
    await slow.landHeldWrites();
    expect((await env.SESSIONS.get<Json>(`${TOKEN_PREFIX}${token.tokenId}`, 'json'))?.description).toBe('written late');
    expect((await tokenCall('GET', href)).status).toBe(404);
    const lookup = await panLookup({ merchant: { entity: 'default' }, token: href });
    expect((await lookup.json<Json>()).errorName).toBe('tokenNotFound');
    expect((await putAttribute(href, 'description', 'again')).status).toBe(404);
  });

  it.each(['do', 'kvWrite'] as const)(
    'answers 503 with Retry-After when a %s call of DELETE hangs, and the retry deletes the token',
    async (of) => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const token = await (await createToken(tokenBody({ cardNumber: newCard() }))).json<Json>();
      const href = token.tokenPaymentInstrument.href as string;
      const hung = new StorageHarness(SHORT).failOn({ nth: 0, of, when: 'hang' });
      await expect503(await tokenCall('DELETE', href, {}, (r) => hung.fetch(r)));
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      expect((await tokenCall('GET', href)).status).toBe(404);
    },
  );

  it('answers 503 when a KV read hangs', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const token = await (await createToken(tokenBody({ cardNumber: newCard() }))).json<Json>();
    const hung = new StorageHarness(SHORT).failOn({ nth: 0, of: 'any', when: 'hang' });
    await expect503(await tokenCall('GET', token.tokenPaymentInstrument.href, {}, (r) => hung.fetch(r)));
  });

  it(
    'answers 503 when the card guard hangs while a token is claimed (after its lease time), and the retry makes the token',
    LEASE_WAIT,
    async () => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const body = tokenBody({ cardNumber: newCard() });
      const hung = new StorageHarness(SHORT).failOn({ nth: 0, of: 'do', when: 'hang' });
      await expect503(await createToken(body, {}, (r) => hung.fetch(r)));
      expect((await createToken(body)).status).toBe(201);
    },
  );
});
