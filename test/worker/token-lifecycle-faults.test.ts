import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorageHarness, type StorageCall, via } from './faulty-env';
import { expect503, expectNotFound, panLookup, type Fetch, quiet } from './helpers';
import {
  ATTRIBUTE_PATHS,
  type Attribute,
  countedUpdates,
  createToken,
  expectConsistent,
  freshCard,
  type Made,
  newToken,
  projectionSettled,
  putAttribute,
  queryTokens,
  tokenBody,
  tokenCall,
  liveTokensIn,
  listed,
  lookupByToken,
  newNamespace,
  authenticateWithToken,
} from './token-helpers';

/**
 * Each token request when its one storage call fails (docs/storage.md "Deadlines and failures"). A token's
 * object decides everything about it (src/tokens/token-group.ts), and the Worker makes
 * one call per request: `do.create` for POST /tokens, and on the token's href (which names its
 * object) `do.read`, `do.update`, `do.conflict`, `do.acceptConflict`, `do.remove`, or `do.list`
 * for a namespace; only a query by token id alone reads KV first, to locate the token's object.
 *
 * Each of those calls is failed in turn: before it reaches the object ("it never happened"),
 * after it did ("it happened, but the Worker saw an error"), hanging (the Worker's deadline ends
 * it), or answering late (it happened, and its answer came after the deadline). The request
 * answers 503 with Retry-After and `serviceUnavailable`, a plain retry completes as if the first
 * had never failed, and what is left is one consistent version of the token: the object's, which
 * KV's projection of it equals once it settles. An update is made and counted once, a POST gives
 * the card one token, and a deleted token is 404 on every exact path. The objects' own KV writes
 * failing are in tokens-faults.test.ts, bursts with faults in bursts-with-faults.test.ts.
 */

type Json = Record<string, any>;

/** The Worker's storage deadline where a call hangs or answers late: a fault costs a fraction of a second. */
const SHORT = { STORAGE_TIMEOUT_MS: '300' } as Partial<Env>;
/** A late answer comes this long after the call, past the short deadline. */
const LATE_MS = 600;
const WHEN = ['before', 'after', 'hang', 'late'] as const;
type When = (typeof WHEN)[number];

const WHEN_TEXT: Record<When, string> = {
  before: 'failing before it reaches storage',
  after: 'failing after it did',
  hang: 'hanging',
  late: 'answering after its deadline',
};

/** Whether the failed call did its work in the object all the same. */
const reached = (when: When): boolean => when === 'after' || when === 'late';

afterEach(() => {
  vi.restoreAllMocks();
});

const label = (c: StorageCall | undefined): string => `${c?.store}.${c?.op}`;

/** The Worker's storage calls in a clean run of `send`, in order (the objects' own writes are not the Worker's). */
async function callsOf(send: (v: Fetch) => Promise<Response>): Promise<string[]> {
  const h = new StorageHarness();
  const response = await send(via(h));
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  await h.settled();
  return h.calls.filter((c) => c.by !== 'object').map(label);
}

/** Each call of a clean run, failing each way in turn: `[title, call, nth, when]`. */
function matrix(calls: readonly string[]): [string, string, number, When][] {
  return calls.flatMap((name, nth) =>
    WHEN.map((when): [string, string, number, When] => [`${name} ${WHEN_TEXT[when]}`, name, nth, when]),
  );
}

/** A harness whose `nth` call by the Worker fails `when`; a short deadline where the call hangs or answers late. */
function failing(nth: number, when: When): StorageHarness {
  const vars = when === 'hang' || when === 'late' ? SHORT : {};
  return new StorageHarness(vars).failOn({ nth, of: 'any', by: 'worker', when, delayMs: LATE_MS });
}

/** The first answer: 503, from the call this test meant to fail. */
async function failedFirst(h: StorageHarness, nth: number, name: string, response: Response): Promise<void> {
  expect(label(h.calls.filter((c) => c.by !== 'object')[nth]), 'the failed call').toBe(name);
  expect(h.armed, 'the fault fired').toBe(false);
  await expect503(response);
  await h.settled();
}

/** A token with a conflict kept for it: its conflict link, and what accepting it changes. */
async function withConflict(): Promise<Made & { link: string }> {
  const made = await newToken({ name: 'Ada' });
  const conflict = await createToken(tokenBody({ cardNumber: made.cardNumber, name: 'Ada L', year: 2036 }));
  expect(conflict.status, await conflict.clone().text()).toBe(409);
  return { ...made, link: (await conflict.json<Json>())._links['tokens:conflicts'].href as string };
}

// --- POST /tokens --------------------------------------------------------------------------------

describe.each([
  ['outside any namespace', false],
  ['into a namespace', true],
] as const)('POST /tokens %s when its one storage call fails', (_where, inNamespace) => {
  const bodyOf = (namespace: string): Json =>
    tokenBody({ cardNumber: freshCard(), name: 'Grace Hopper', extra: inNamespace ? { namespace } : {} });

  it('makes one call, do.create, when nothing fails', async () => {
    expect(await callsOf((v) => createToken(bodyOf(newNamespace()), {}, v))).toEqual(['do.create']);
  });

  it.each(matrix(['do.create']))(
    '%s: 503, and the retry gives the card its one token (201, or 200 when the failed call made it)',
    async (_title, name, nth, when) => {
      quiet();
      const namespace = newNamespace();
      const body = bodyOf(namespace);
      const h = failing(nth, when);
      await failedFirst(h, nth, name, await createToken(body, {}, via(h)));

      const retry = await createToken(body);
      expect(retry.status, await retry.clone().text()).toBe(reached(when) ? 200 : 201);
      const token = await retry.json<Json>();
      // The card has one token, whichever request made it: in its object, in the namespace, and KV's
      // copy is that token's (other tests' objects may be writing KV at the same time: no listing of KV).
      expect(await liveTokensIn(token)).toEqual(inNamespace ? await listed(namespace) : [token.tokenId]);
      if (inNamespace) expect(token.namespace).toBe(namespace);
      expect(await expectConsistent(token)).toMatchObject({ tokenId: token.tokenId, version: 1 });
      const again = await createToken(body);
      expect(again.status).toBe(200);
      expect((await again.json<Json>()).tokenId).toBe(token.tokenId);
      expect((await tokenCall('GET', token.tokenPaymentInstrument.href as string)).status).toBe(200);
    },
  );
});

describe('POST /tokens into a namespace with one place left, when the POST fails', () => {
  it.each(['before', 'after'] as const)(
    'failing %s it reaches the object: the card holds the last place only if the object made its token',
    async (when) => {
      quiet();
      const namespace = newNamespace();
      const inside = (cardNumber: string): Json => tokenBody({ cardNumber, extra: { namespace } });
      const others: number[] = [];
      for (let i = 0; i < 15; i++) others.push((await createToken(inside(freshCard()))).status);
      expect(others).toEqual(Array(15).fill(201));
      const card = inside(freshCard());
      const h = failing(0, when);
      await failedFirst(h, 0, 'do.create', await createToken(card, {}, via(h)));

      // Another card takes the 16th place only if the failed POST did not.
      const last = await createToken(inside(freshCard()));
      expect(last.status).toBe(when === 'after' ? 403 : 201);
      if (when === 'after') expect((await last.json<Json>()).errorName).toBe('tooManyTokensForNamespace');
      const retry = await createToken(card);
      expect(retry.status).toBe(when === 'after' ? 200 : 403);
      const ids = await listed(namespace);
      expect(ids).toHaveLength(16);
      if (when === 'after') expect(ids).toContain((await retry.json<Json>()).tokenId);
    },
  );
});

// --- one request, one call ----------------------------------------------------------------------

/**
 * A request on a token that makes one storage call (or, by id alone, a KV read and then one): what
 * it needs made first, how it is sent, and what its retry answers after any of its calls failed.
 */
interface OneRequest<T> {
  /** The describe's title. */
  title: string;
  /** The calls of a clean run, in order, and the title of the test that says so. */
  calls: string[];
  clean: string;
  /** What the retry shows (after `503, `), in the titles of the failing runs. */
  retry: string;
  make: () => Promise<T>;
  send: (made: T, v?: Fetch) => Promise<Response>;
  /** After the failed request: the retry, and what it leaves. */
  retried: (made: T, when: When) => Promise<void>;
}

/** A row of the table (its own type for `make`, `send` and `retried`). */
const row = <T>(r: OneRequest<T>): OneRequest<any> => r;

describe.each([
  row({
    title: 'GET /tokens/{id} when its one storage call fails',
    calls: ['do.read'],
    clean: 'makes one call, do.read, when nothing fails',
    retry: 'the retry answers the token, unchanged',
    make: () => newToken(),
    send: ({ href }, v) => tokenCall('GET', href, {}, v),
    retried: async ({ token, href }) => {
      const retry = await tokenCall('GET', href);
      expect(retry.status).toBe(200);
      expect(await retry.json<Json>()).toEqual(token);
      expect((await expectConsistent(token))?.version).toBe(1);
      expect(await countedUpdates(token)).toBe(0);
    },
  }),
  row({
    title: 'POST /api/cardBin/panLookup by token when its one storage call fails',
    calls: ['do.read'],
    clean: "makes one call, do.read (the token's object: no KV read), when nothing fails",
    retry: 'the retry answers the BIN data',
    make: () => newToken(),
    send: ({ href }, v) => lookupByToken(href, v),
    retried: async ({ token, href, cardNumber }) => {
      const retry = await lookupByToken(href);
      expect(retry.status, await retry.clone().text()).toBe(200);
      // The answer by token is the answer by card number, byte for byte.
      const byCard = await panLookup({ merchant: { entity: 'default' }, cardNumber });
      expect(await retry.text()).toBe(await byCard.text());
      expect((await expectConsistent(token))?.version).toBe(1);
    },
  }),
  row({
    title: 'GET /tokens?namespace=… when its one storage call fails',
    calls: ['do.list'],
    clean: 'makes one call, do.list, when nothing fails',
    retry: 'the retry lists the namespace, unchanged',
    make: async () => {
      const namespace = newNamespace();
      return { namespace, a: await newToken({ extra: { namespace } }), b: await newToken({ extra: { namespace } }) };
    },
    send: ({ namespace }, v) => queryTokens(`namespace=${namespace}`, {}, v),
    retried: async ({ namespace, a, b }) => {
      expect(await listed(namespace)).toEqual([a.token.tokenId, b.token.tokenId]);
      for (const { token } of [a, b]) expect((await expectConsistent(token))?.version).toBe(1);
    },
  }),
  row({
    // By id alone, KV's projection locates the token's object, which answers.
    title: 'GET /tokens?tokenId=… (outside any namespace) when one of its storage calls fails',
    calls: ['kv.get', 'do.read'],
    clean: 'reads KV, then asks the object, when nothing fails',
    retry: 'the retry answers the token',
    make: async () => {
      const made = await newToken();
      await projectionSettled(made.token);
      return made;
    },
    send: ({ token }, v) => queryTokens(`tokenId=${token.tokenId}`, {}, v),
    retried: async ({ token }) => {
      const retry = await queryTokens(`tokenId=${token.tokenId}`);
      expect(retry.status).toBe(200);
      expect((await retry.json<Json>())._embedded.tokens).toEqual([token]);
      expect((await expectConsistent(token))?.version).toBe(1);
    },
  }),
  row({
    title: 'PUT of an attribute when its one storage call fails',
    calls: ['do.update'],
    clean: 'makes one call, do.update, when nothing fails',
    retry: 'the retry answers 204, and one version holds the value, counted once',
    make: () => newToken(),
    send: ({ href }, v) => putAttribute(href, 'cardHolderName', 'Grace Hopper', {}, v),
    retried: async ({ token, href }) => {
      const retry = await putAttribute(href, 'cardHolderName', 'Grace Hopper');
      expect(retry.status, await retry.clone().text()).toBe(204);
      expect((await (await tokenCall('GET', href)).json<Json>()).paymentInstrument.cardHolderName).toBe('Grace Hopper');
      // A failed call that reached the object made the change; the retry found the value held.
      expect((await expectConsistent(token))?.version).toBe(2);
      expect(await countedUpdates(token)).toBe(1);
    },
  }),
  row({
    title: 'GET on a conflict link when its one storage call fails',
    calls: ['do.conflict'],
    clean: 'makes one call, do.conflict, when nothing fails',
    retry: 'the retry answers the conflict, still open',
    make: withConflict,
    send: ({ link }, v) => tokenCall('GET', link, {}, v),
    retried: async ({ token, link }) => {
      const retry = await tokenCall('GET', link);
      expect(retry.status).toBe(200);
      expect((await retry.json<Json>()).conflicts.paymentInstrument.cardHolderName).toBe('Ada L');
      expect((await expectConsistent(token))?.version).toBe(1);
    },
  }),
  row({
    title: 'PUT on a conflict link (accepting it) when its one storage call fails',
    calls: ['do.acceptConflict'],
    clean: 'makes one call, do.acceptConflict, when nothing fails',
    retry: 'the retry answers 204, and the token takes the conflicting values once',
    make: withConflict,
    send: ({ link }, v) => tokenCall('PUT', link, {}, v),
    retried: async ({ token, href, link }) => {
      const retry = await tokenCall('PUT', link);
      expect(retry.status, await retry.clone().text()).toBe(204);
      const shown = await (await tokenCall('GET', href)).json<Json>();
      expect(shown.paymentInstrument.cardHolderName).toBe('Ada L');
      expect(shown.paymentInstrument.cardExpiryDate).toEqual({ month: 12, year: 2036 });
      expect((await expectConsistent(token))?.version).toBe(2);
      expect(await countedUpdates(token)).toBe(1);
      // Used up: another PUT answers 204 and changes nothing; GET no longer shows it.
      expect((await tokenCall('PUT', link)).status).toBe(204);
      expect((await expectConsistent(token))?.version).toBe(2);
      await expectNotFound(await tokenCall('GET', link));
    },
  }),
  row({
    title: 'DELETE /tokens/{id} when its one storage call fails',
    calls: ['do.remove'],
    clean: 'makes one call, do.remove, when nothing fails',
    retry: 'the retry answers 204, the token is 404 on every exact path, and the card is free',
    make: async () => {
      const made = await withConflict();
      await projectionSettled(made.token);
      return made;
    },
    send: ({ href }, v) => tokenCall('DELETE', href, {}, v),
    retried: async ({ token, href, link, cardNumber }, when) => {
      // Until the retry, the token is deleted only if the failed call reached the object.
      expect((await tokenCall('GET', href)).status).toBe(reached(when) ? 404 : 200);

      expect((await tokenCall('DELETE', href)).status).toBe(204);
      await expectNotFound(await tokenCall('GET', href));
      for (const attribute of Object.keys(ATTRIBUTE_PATHS) as Attribute[]) {
        const value =
          attribute === 'cardExpiryDate'
            ? { month: 1, year: 2034 }
            : attribute === 'billingAddress'
              ? { address1: '1 A Street', postalCode: 'E1 1AA', city: 'London', countryCode: 'GB' }
              : 'After';
        await expectNotFound(await putAttribute(href, attribute, value));
      }
      await expectNotFound(await tokenCall('GET', link));
      await expectNotFound(await tokenCall('PUT', link));
      await expectNotFound(await authenticateWithToken(href), 'tokenNotFound');
      // A lookup asks the object too: 404 at once, before KV's copy settles.
      await expectNotFound(await lookupByToken(href), 'tokenNotFound');
      // KV's projection is deleted once it settles: a query by id finds nothing.
      expect(await expectConsistent(token)).toBeNull();
      await expectNotFound(await queryTokens(`tokenId=${token.tokenId}`));
      // Deleting again while it would have lived: 204 (a retry's answer).
      expect((await tokenCall('DELETE', href)).status).toBe(204);
      const fresh = await createToken(tokenBody({ cardNumber, name: 'Ada' }));
      expect(fresh.status).toBe(201);
      expect((await fresh.json<Json>()).tokenId).not.toBe(token.tokenId);
    },
  }),
])('$title', ({ calls, clean, retry, make, send, retried }) => {
  it(clean, async () => {
    const made = await make();
    expect(await callsOf((v) => send(made, v))).toEqual(calls);
  });

  it.each(matrix(calls))(`%s: 503, ${retry}`, async (_title, name, nth, when) => {
    quiet();
    const made = await make();
    const h = failing(nth, when);
    await failedFirst(h, nth, name, await send(made, via(h)));
    await retried(made, when);
  });
});
