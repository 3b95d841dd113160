import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { namespaceGuardName } from '../../src/storage/guards/clients';
import { StorageHarness, type Fault, type StorageCall } from './faulty-env';
import { call, TEST_AUTH, type Fetch } from './helpers';
import {
  countedUpdates,
  createToken,
  expectConsistent,
  freshCard,
  putAttribute,
  tokenBody,
  tokenCall,
  TOKENS_MEDIA,
} from './token-helpers';

/**
 * The token life cycle when any one storage call fails (before it reaches storage, after it did,
 * or never answers): an update, the acceptance of a conflict and a POST into a namespace each
 * answer their success or 503 with Retry-After, the client's retry completes, and what is left is
 * one consistent version of the token, the same in KV and in the card's guard.
 */

type Json = Record<string, any>;

/** Storage calls get a short deadline where one hangs, so that a hang costs a fraction of a second. */
const SHORT = { STORAGE_TIMEOUT_MS: '300' } as Partial<Env>;
const WHEN = ['before', 'after', 'hang'] as const;
/** A test that waits for a write lease (10 s) once or twice, on a busy machine. */
const LEASE_WAIT = { timeout: 120_000 };

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const label = (c: StorageCall | undefined): string => `${c?.store}.${c?.op}`;
const via =
  (h: StorageHarness): Fetch =>
  (r) =>
    h.fetch(r);

async function expect503(response: Response): Promise<void> {
  const body = await response.json<Json>();
  expect(response.status, JSON.stringify(body)).toBe(503);
  expect(response.headers.get('Retry-After')).toMatch(/^\d+$/);
  expect(body.errorName).toBe('serviceUnavailable');
}

/** Sends again while the answer is a 503 with Retry-After (at most `tries` times); answers the last answer. */
async function retried(send: () => Promise<Response>, tries = 3): Promise<Response> {
  for (let i = 1; ; i++) {
    const response = await send();
    if (response.status !== 503 || i === tries) return response;
    await expect503(response.clone());
  }
}

async function newToken(name = 'Ada Lovelace', extra: Json = {}): Promise<{ token: Json; href: string; card: string }> {
  const card = freshCard();
  const response = await createToken(tokenBody({ cardNumber: card, name, extra }));
  expect(response.status).toBe(201);
  const token = await response.json<Json>();
  return { token, href: token.tokenPaymentInstrument.href as string, card };
}

/** The calls a clean run of `send` makes, in order (background work included). */
async function callsOf(send: (h: StorageHarness) => Promise<Response>): Promise<string[]> {
  const h = new StorageHarness();
  const response = await send(h);
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  await h.settled();
  return h.calls.map(label);
}

const WHEN_TEXT: Record<(typeof WHEN)[number], string> = {
  before: 'failing before it reaches storage',
  after: 'failing after it did',
  hang: 'hanging',
};

/** Every (call, when) pair of a run, each call failing in turn, each way: `[title, call, when, nth]`. */
function matrix(calls: readonly string[]): [string, string, Fault['when'], number][] {
  return calls.flatMap((name, nth) =>
    WHEN.map((when): [string, string, Fault['when'], number] => [`${name} ${WHEN_TEXT[when]}`, name, when, nth]),
  );
}

/** A harness whose `nth` storage call fails `when`; a short deadline when it hangs. */
function failing(nth: number, when: Fault['when']): StorageHarness {
  return new StorageHarness(when === 'hang' ? SHORT : {}).failOn({ nth, of: 'any', when });
}

// --- an update -----------------------------------------------------------------------------------

const UPDATE_CALLS = ['kv.get', 'do.current', 'do.update', 'kv.put', 'do.recorded'] as const;

describe('PUT of an attribute when any one storage call fails', () => {
  it('makes these storage calls when nothing fails', async () => {
    const { href } = await newToken();
    expect(await callsOf((h) => putAttribute(href, 'cardHolderName', 'Grace Hopper', {}, via(h)))).toEqual(
      UPDATE_CALLS,
    );
  });

  it.each(matrix(UPDATE_CALLS))(
    '%s: 204 or 503, the retry completes, and one consistent version holds the value',
    LEASE_WAIT,
    async (_title, name, when, nth) => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const { token, href } = await newToken();
      const h = failing(nth, when);
      const first = await putAttribute(href, 'cardHolderName', 'Grace Hopper', {}, via(h));
      expect(label(h.calls[nth])).toBe(name);
      // Telling the guard the record is written is best effort, after the answer: 204 stands.
      if (name === 'do.recorded') expect(first.status).toBe(204);
      else await expect503(first);
      await h.settled();

      const clean = new StorageHarness();
      const retry = await retried(() => putAttribute(href, 'cardHolderName', 'Grace Hopper', {}, via(clean)));
      expect(retry.status, await retry.clone().text()).toBe(204);
      await clean.settled();
      expect((await (await tokenCall('GET', href)).json<Json>()).paymentInstrument.cardHolderName).toBe('Grace Hopper');
      const stored = await expectConsistent(token.tokenId);
      // One version and one update counted: a failed attempt whose change reached the guard made
      // it, and the retry found the value held (changing nothing, writing it if it was not in KV).
      expect(stored.version).toBe(2);
      expect(await countedUpdates(stored)).toBe(1);
    },
  );
});

// --- accepting a conflict ------------------------------------------------------------------------

const ACCEPT_CALLS = ['kv.get', 'do.getConflict', 'do.current', 'do.update', 'kv.put', 'do.recorded'] as const;

/** A token with a conflict: its href, its conflict link, and what accepting it changes. */
async function withConflict(): Promise<{ token: Json; href: string; link: string }> {
  const { token, href, card } = await newToken('Ada');
  const conflict = await createToken(tokenBody({ cardNumber: card, name: 'Ada L', year: 2036 }));
  expect(conflict.status).toBe(409);
  return { token, href, link: (await conflict.json<Json>())._links['tokens:conflicts'].href as string };
}

describe('PUT on a conflict link when any one storage call fails', () => {
  it('makes these storage calls when nothing fails', async () => {
    const { link } = await withConflict();
    expect(await callsOf((h) => tokenCall('PUT', link, {}, via(h)))).toEqual(ACCEPT_CALLS);
  });

  it.each(matrix(ACCEPT_CALLS))(
    '%s: 204 or 503, the retry completes, and the token holds the conflicting values once',
    LEASE_WAIT,
    async (_title, name, when, nth) => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const { token, href, link } = await withConflict();
      const h = failing(nth, when);
      const first = await tokenCall('PUT', link, {}, via(h));
      expect(label(h.calls[nth])).toBe(name);
      if (name === 'do.recorded') expect(first.status).toBe(204);
      else await expect503(first);
      await h.settled();

      const clean = new StorageHarness();
      if (first.status === 503) {
        const retry = await retried(() => tokenCall('PUT', link, {}, via(clean)));
        expect(retry.status, `retry after ${name} failing ${when}: ${await retry.clone().text()}`).toBe(204);
        await clean.settled();
      }
      const shown = await (await tokenCall('GET', href)).json<Json>();
      expect(shown.paymentInstrument.cardHolderName).toBe('Ada L');
      expect(shown.paymentInstrument.cardExpiryDate).toEqual({ month: 12, year: 2036 });
      expect((await expectConsistent(token.tokenId)).version).toBe(2);
      // Accepted once: another PUT answers 204 and changes nothing; GET no longer shows the conflict.
      expect((await tokenCall('PUT', link)).status).toBe(204);
      expect((await expectConsistent(token.tokenId)).version).toBe(2);
      expect((await tokenCall('GET', link)).status).toBe(404);
    },
  );
});

// --- a POST into a namespace ---------------------------------------------------------------------

const NAMESPACE_POST_CALLS = ['do.reserve', 'do.claim', 'kv.put', 'do.recorded', 'do.confirm'] as const;

/** The entries of a merchant namespace's guard (card hashes, token ids), white-box. */
function namespaceEntries(namespace: string): Promise<{ fingerprint: string; token_id: string | null }[]> {
  const stub = env.NAMESPACE_GUARD.get(env.NAMESPACE_GUARD.idFromName(namespaceGuardName('test-merchant', namespace)));
  return runInDurableObject(stub, (_guard, state) =>
    state.storage.sql.exec<{ fingerprint: string; token_id: string | null }>('SELECT * FROM entries').toArray(),
  );
}

async function listedIds(namespace: string): Promise<string[]> {
  const response = await call(`/tokens?namespace=${namespace}`, {
    method: 'GET',
    headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA },
  });
  expect(response.status).toBe(200);
  return ((await response.json<Json>())._embedded.tokens as Json[]).map((t) => t.tokenId as string);
}

describe('POST /tokens into a namespace when any one storage call fails', () => {
  it('makes these storage calls when nothing fails', async () => {
    const body = tokenBody({ cardNumber: freshCard(), extra: { namespace: `ns-${crypto.randomUUID()}` } });
    expect(await callsOf((h) => createToken(body, {}, via(h)))).toEqual(NAMESPACE_POST_CALLS);
  });

  it.each(matrix(NAMESPACE_POST_CALLS))(
    '%s: 201 or 503, the retry gives the one token, listed once, holding one place',
    LEASE_WAIT,
    async (_title, name, when, nth) => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const namespace = `ns-${crypto.randomUUID()}`;
      const body = tokenBody({ cardNumber: freshCard(), extra: { namespace } });
      const h = failing(nth, when);
      const first = await createToken(body, {}, via(h));
      expect(label(h.calls[nth])).toBe(name);
      if (name === 'do.recorded') expect(first.status).toBe(201);
      else await expect503(first);
      await h.settled();

      const clean = new StorageHarness();
      const retry = await retried(() => createToken(body, {}, via(clean)));
      expect([200, 201]).toContain(retry.status);
      const token = await retry.json<Json>();
      if (first.status === 201) expect(token.tokenId).toBe((await first.json<Json>()).tokenId);
      await clean.settled();
      expect(token.namespace).toBe(namespace);
      expect(await listedIds(namespace)).toEqual([token.tokenId]);
      const entries = await namespaceEntries(namespace);
      expect(entries.map((e) => e.token_id)).toEqual([token.tokenId]);
      await expectConsistent(token.tokenId);
      expect((await tokenCall('GET', token.tokenPaymentInstrument.href)).status).toBe(200);
    },
  );

  it('keeps the place of a card whose confirmation failed and was not retried within the reservation time (60 s)', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const namespace = `ns-${crypto.randomUUID()}`;
    const body = tokenBody({ cardNumber: freshCard(), extra: { namespace } });
    const h = new StorageHarness().failOn({ nth: 0, of: 'do', op: 'confirm', when: 'before' });
    await expect503(await createToken(body, {}, via(h)));
    await h.settled();
    // The token exists (its record is in KV); the client comes back more than a minute later.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    const others: number[] = [];
    for (let i = 0; i < 16; i++) {
      others.push((await createToken(tokenBody({ cardNumber: freshCard(), extra: { namespace } }))).status);
    }
    const retry = await createToken(body);
    const answer = await retry.json<Json>();
    expect(retry.status, JSON.stringify(answer)).toBe(200);
    // At most 16 cards: the card whose token exists kept its place, so the 16th other one is refused.
    expect(others).toEqual([...Array<number>(15).fill(201), 403]);
    const ids = await listedIds(namespace);
    expect(ids).toHaveLength(16);
    expect(ids).toContain(answer.tokenId);
  });
});
