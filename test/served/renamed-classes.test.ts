import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { treeWithMerchants } from '../../scripts/tree-copy';
import {
  defaultUniqueKey,
  hasCommit,
  serveTree,
  storedClasses,
  treeAtCommit,
  withOldEndpoint,
  withoutEvents,
  type ServedTree,
  type Tree,
} from './renamed-classes-helpers';
import { authenticateBody, pollUntil } from './served-worker';

/**
 * The `v5` migration (wrangler.toml: `renamed_classes`, ThreeDsGuard → ThreeDsTransaction and
 * TokenGuard → TokenGroup) as a deployment meets it: state written by the code before the rename
 * (the tree at OLD, bundled as deployed and served by Miniflare, its state persisted in a
 * folder) is read, completed and delivered by this tree's code, served on the same folder under
 * the new class names. Nothing is lost, nothing reset:
 *
 * 1. a token made before (one outside any namespace, one in a namespace) is read by its href and
 *    looked up under the new `TokenGroup` (the same token for the same card, not a new one);
 * 2. a 3DS challenge opened before (`authenticate` answered `challenged`) is shown from its old
 *    JWT (which names the object by id), completed with the right code, and has its one result;
 * 3. events whose delivery failed before (the endpoint down) are in the log after, their bodies
 *    brought up to date (a subject and a sequence); their deliveries, to an endpoint of the
 *    merchant file that the new code no longer has, are ended (`failed`, `endpointRemoved`); an
 *    endpoint the merchant makes through the API then recovers them: each delivered once, in
 *    order per subject with the events the new code adds, signed with the new endpoint's secret.
 *
 * The old tree's merchant file has its events block (the receiver's endpoint, down while the old
 * code runs); this tree's has none: it refuses one at load.
 *
 * Miniflare does not apply `renamed_classes`. It keys a class's Durable Object storage (its folder
 * under the persist directory) and derives its object ids from the uniqueKey
 * `<worker name>-<class name>` (node_modules/miniflare/dist/src/index.js, the `uniqueKey:
 * unsafeUniqueKey ?? \`${options.name ?? ""}-${className}\`` of the Durable Object namespaces);
 * wrangler reads `renamed_classes` only to carry a class's SQLite flag over to its new name
 * (getDurableObjectClassNameToUseSQLiteMap, node_modules/wrangler/wrangler-dist/cli.js). So a
 * renamed class starts empty locally, with other ids: a `wrangler dev` state from before the
 * rename is not carried over. Cloudflare keeps a renamed class's objects, ids and storage: the
 * test emulates that by giving the new classes the old classes' uniqueKey (`unsafeUniqueKey`).
 * The last check shows that without it the new code sees none of the old state, so that the
 * emulation is what carries it, and would be noticed the day Miniflare applies renames itself.
 */

/** The last commit with the old class names (the rename is the commit after it). */
const OLD = 'b9d926c';
const RENAMED = { THREEDS_TRANSACTION: 'ThreeDsGuard', TOKEN_GROUP: 'TokenGuard' } as const;

const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const THREEDS = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const TOKENS = 'application/vnd.worldpay.tokens-v3.hal+json';
/** Danske Bank visa/dankort cards of the embedded data (Luhn-valid). */
const CARD = '4571368400000008';
const NAMESPACED_CARD = '4571368400000016';

const root = process.cwd();
const available = hasCommit(root, OLD);
if (!available)
  console.warn(
    `[skip] renamed-classes: commit ${OLD} (the code before the v5 rename) is not in this clone's history ` +
      '(a shallow clone?): fetch it (git fetch --unshallow) to run the check.',
  );

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  event: {
    eventId: string;
    eventType: string;
    createdAt: string;
    subject: string;
    sequence: number;
    data: Record<string, any>;
  };
}

interface Delivery {
  endpointId: string;
  url?: string;
  state: string;
  attempts: number;
  lastError?: string;
  lastStatus?: number;
  nextAttemptAt?: string;
}
interface ListedEvent {
  eventId: string;
  eventType: string;
  createdAt: string;
  subject: string;
  sequence: number;
  deliveries: Delivery[];
}

interface Token {
  tokenId: string;
  description: string;
  namespace?: string;
  tokenPaymentInstrument: { href: string };
  paymentInstrument: Record<string, unknown>;
}

/** What the old code left: read back and completed by the new. */
interface Before {
  /** A moment before the old code wrote anything (ms). */
  startedAt: number;
  token: Token;
  namespaced: Token;
  namespace: string;
  /** The token's event (its cardHolderName update) and the ping, both pending (endpoint down). */
  tokenEventId: string;
  pingEventId: string;
  reference: string;
  challenge: { reference: string; url: string; jwt: string };
  attemptsWhileDown: number;
}

let receiver: Server;
/** Down: the receiver drops every connection (an unreachable endpoint); up: 204. */
let receiverUp = false;
let attemptsWhileDown = 0;
const received: Received[] = [];
let state: string;
/** A copy of the state as the old code left it, for the check without the emulation. */
let stateCopy: string;
let oldTree: Tree | undefined;
let newTree: Tree | undefined;
let served: ServedTree | undefined;
const output: string[] = [];
let before: Before;
/** The receiver's endpoint, made through the new code's API, and its secret. */
let endpoint: { endpointId: string; url: string; secret: string } | undefined;

/** The receiver's URL (http to 127.0.0.1 is an endpoint in `test`, for the old code and the new). */
const receiverUrl = (): string => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

async function api(base: URL, method: string, path: string, media: string | null, body?: unknown): Promise<Response> {
  return fetch(new URL(path, base), {
    method,
    headers: {
      Authorization: AUTH,
      ...(media ? { Accept: media } : {}),
      ...(body !== undefined && media ? { 'Content-Type': media } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function json<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function listEvents(base: URL): Promise<ListedEvent[]> {
  return (await json<{ events: ListedEvent[] }>(await api(base, 'GET', '/events', 'application/json'), 200)).events;
}

function until<T>(what: string, seconds: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  return pollUntil(
    what,
    seconds,
    probe,
    () =>
      `received: ${received.map((r) => `${r.event.eventType} ${r.event.eventId}`).join(', ')}` +
      `\nworkerd output:\n${output.join('').slice(-4000)}`,
    100,
  );
}

function tokenBody(cardNumber: string, namespace?: string): Record<string, unknown> {
  return {
    merchant: { entity: 'default' },
    description: 'Made before the rename',
    ...(namespace !== undefined ? { namespace } : {}),
    paymentInstrument: {
      type: 'card/front',
      cardNumber,
      cardExpiryDate: { month: 12, year: 2035 },
      cardHolderName: 'Ada Lovelace',
    },
  };
}

/** The href's path: the origin is each served Worker's own port. */
const pathOf = (href: string): string => new URL(href).pathname;

/** Whether a delivery verifies with `secret`, as a receiver checks it (standardwebhooks, on the real clock). */
function verifies(r: Received, secret: string): boolean {
  const headers = Object.fromEntries(
    Object.entries(r.headers).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  try {
    new Webhook(secret).verify(r.body, headers);
    return true;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return false;
    throw e;
  }
}

/** Everything the old code wrote: tokens, an open challenge, two events whose delivery failed. */
async function writeWithOldCode(old: ServedTree): Promise<Before> {
  const base = old.url;
  const startedAt = Date.now() - 1000;
  const token = await json<Token>(await api(base, 'POST', '/tokens', TOKENS, tokenBody(CARD)), 201);
  const namespace = `renamed-${Math.random().toString(36).slice(2, 10)}`;
  const namespaced = await json<Token>(
    await api(base, 'POST', '/tokens', TOKENS, tokenBody(NAMESPACED_CARD, namespace)),
    201,
  );
  const renamed = await api(
    base,
    'PUT',
    `${pathOf(token.tokenPaymentInstrument.href)}/paymentInstrument/cardHolderName`,
    TOKENS,
    'Augusta Ada King',
  );
  expect(renamed.status, await renamed.text()).toBe(204);

  const reference = `renamed-${Math.random().toString(36).slice(2, 10)}`;
  const authenticated = await json<{ outcome: string; challenge: Before['challenge'] }>(
    await api(
      base,
      'POST',
      '/verifications/customers/3ds/authenticate',
      THREEDS,
      authenticateBody(reference, CARD, '3ds2-challenge-identified'),
    ),
    200,
  );
  expect(authenticated.outcome).toBe('challenged');

  const ping = await json<{ eventId: string }>(await api(base, 'POST', '/events/ping', null), 202);
  // Both events reach the log (the token's from its object's outbox) and fail their first attempt.
  const tokenEventId = await until('failed attempts before the rename', 30, async () => {
    const events = await listEvents(base);
    const update = events.find((e) => e.eventType === 'tokens.token.updated' && e.eventId.includes(token.tokenId));
    const pinged = events.find((e) => e.eventId === ping.eventId);
    const failed = (e?: ListedEvent): boolean =>
      e?.deliveries.length === 1 && e.deliveries[0]!.state === 'pending' && e.deliveries[0]!.attempts >= 1;
    return failed(update) && failed(pinged) ? update!.eventId : undefined;
  });
  return {
    startedAt,
    token,
    namespaced,
    namespace,
    tokenEventId,
    pingEventId: ping.eventId,
    reference,
    challenge: authenticated.challenge,
    attemptsWhileDown,
  };
}

describe.skipIf(!available)(`renamed Durable Object classes (v5): state from ${OLD} under the new names`, () => {
  beforeAll(async () => {
    receiver = createServer((request, response) => {
      if (!receiverUp) {
        attemptsWhileDown++;
        request.socket.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ headers: request.headers, body, event: JSON.parse(body) });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    state = mkdtempSync(join(tmpdir(), 'card-edge-renamed-state-'));
    stateCopy = mkdtempSync(join(tmpdir(), 'card-edge-renamed-state-copy-'));
    // The old code's endpoint is in its merchant file; the new code's are made through its API.
    oldTree = treeAtCommit(root, OLD, withOldEndpoint('test-merchant', receiverUrl()));
    newTree = treeWithMerchants(root, withoutEvents);

    const old = await serveTree({ dir: oldTree.dir, state, output });
    try {
      expect(old.classes).toMatchObject({ THREEDS_GUARD: 'ThreeDsGuard', TOKEN_GUARD: 'TokenGuard' });
      before = await writeWithOldCode(old);
    } finally {
      await old.stop();
    }
    expect(before.attemptsWhileDown).toBeGreaterThanOrEqual(2);
    // The old code's objects are stored under the old classes' keys.
    for (const className of Object.values(RENAMED))
      expect(storedClasses(state)).toContain(defaultUniqueKey(old.workerName, className));
    cpSync(state, stateCopy, { recursive: true });

    receiverUp = true;
    // Cloudflare's renamed_classes, emulated: the new classes keep the old classes' storage and ids.
    served = await serveTree({
      dir: newTree.dir,
      state,
      output,
      uniqueKeys: Object.fromEntries(
        Object.entries(RENAMED).map(([binding, from]) => [binding, defaultUniqueKey(old.workerName, from)]),
      ),
    });
    expect(served.classes).toMatchObject({ THREEDS_TRANSACTION: 'ThreeDsTransaction', TOKEN_GROUP: 'TokenGroup' });
  }, 120_000);

  afterAll(async () => {
    await served?.stop();
    oldTree?.remove();
    newTree?.remove();
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
    for (const dir of [state, stateCopy]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the tokens made before and looks them up: the same tokens, not new ones', async () => {
    const base = served!.url;
    const { token, namespaced, namespace } = before;
    const read = await json<Token>(await api(base, 'GET', pathOf(token.tokenPaymentInstrument.href), TOKENS), 200);
    expect(read.tokenId).toBe(token.tokenId);
    expect(pathOf(read.tokenPaymentInstrument.href)).toBe(pathOf(token.tokenPaymentInstrument.href));
    expect(read.description).toBe(token.description);
    // The update the old code made is there.
    expect(read.paymentInstrument).toEqual({ ...token.paymentInstrument, cardHolderName: 'Augusta Ada King' });

    // The same card again: the token that stands for it (200), not a new one (201).
    const again = await json<Token>(
      await api(base, 'POST', '/tokens', TOKENS, {
        ...tokenBody(CARD),
        paymentInstrument: { ...(tokenBody(CARD).paymentInstrument as object), cardHolderName: 'Augusta Ada King' },
      }),
      200,
    );
    expect(again.tokenId).toBe(token.tokenId);
    const byId = await json<{ _embedded: { tokens: Token[] } }>(
      await api(base, 'GET', `/tokens?tokenId=${token.tokenId}`, TOKENS),
      200,
    );
    expect(byId._embedded.tokens.map((t) => t.tokenId)).toEqual([token.tokenId]);

    // The namespace's object: its token, listed, read, and found again for its card.
    const listed = await json<{ _embedded: { tokens: Token[] } }>(
      await api(base, 'GET', `/tokens?namespace=${namespace}`, TOKENS),
      200,
    );
    expect(listed._embedded.tokens.map((t) => t.tokenId)).toEqual([namespaced.tokenId]);
    const readNamespaced = await json<Token>(
      await api(base, 'GET', pathOf(namespaced.tokenPaymentInstrument.href), TOKENS),
      200,
    );
    expect(readNamespaced.tokenId).toBe(namespaced.tokenId);
    const againNamespaced = await json<Token>(
      await api(base, 'POST', '/tokens', TOKENS, tokenBody(NAMESPACED_CARD, namespace)),
      200,
    );
    expect(againNamespaced.tokenId).toBe(namespaced.tokenId);
  });

  it("ends the deliveries the old code left pending: the merchant file's endpoint is no more", async () => {
    const base = served!.url;
    const { token, tokenEventId, pingEventId } = before;
    const events = await listEvents(base);
    const update = events.find((e) => e.eventId === tokenEventId);
    const ping = events.find((e) => e.eventId === pingEventId);
    for (const e of [update, ping]) {
      expect(e, JSON.stringify(events)).toBeDefined();
      // The old delivery, with the attempts the old code made, is ended: its endpoint (named by
      // its URL in the merchant file) is not one of the merchant's endpoints now.
      expect(e!.deliveries).toHaveLength(1);
      expect(e!.deliveries[0]).toMatchObject({ state: 'failed', lastError: 'endpointRemoved' });
      expect(e!.deliveries[0]!.attempts).toBeGreaterThanOrEqual(1);
      expect(e!.deliveries[0]!.url).toBeUndefined();
      expect(e!.deliveries[0]!.nextAttemptAt).toBeUndefined();
    }
    // Their bodies carry a subject and a sequence now (the first of a subject: its time in ms).
    expect(update!.subject).toBe(token.tokenId);
    expect(update!.sequence).toBe(Date.parse(update!.createdAt));
    expect(ping!.subject).toBe('ping');
    expect(ping!.sequence).toBeGreaterThanOrEqual(Date.parse(ping!.createdAt));
    const pending = await json<{ events: ListedEvent[] }>(
      await api(base, 'GET', '/events?deliveryState=pending', 'application/json'),
      200,
    );
    expect(pending.events.map((e) => e.eventId)).not.toContain(tokenEventId);
    expect(pending.events.map((e) => e.eventId)).not.toContain(pingEventId);
    // Nothing sent: the merchant has no endpoint yet.
    expect(
      (await json<{ endpoints: unknown[] }>(await api(base, 'GET', '/events/endpoints', null), 200)).endpoints,
    ).toEqual([]);
    expect(received).toEqual([]);
  });

  it('recovers them to an endpoint made through the API: each delivered once, signed with its secret, in sequence', async () => {
    const base = served!.url;
    const { token, tokenEventId, pingEventId, startedAt } = before;
    // A change under the new code, before the merchant has an endpoint: in the log, sent nowhere.
    const described = await api(
      base,
      'PUT',
      `${pathOf(token.tokenPaymentInstrument.href)}/description`,
      TOKENS,
      'After the rename',
    );
    expect(described.status, await described.text()).toBe(204);
    const [old, later] = await until('the new event in the log', 30, async () => {
      const mine = (await listEvents(base)).filter((e) => e.subject === token.tokenId);
      return mine.length >= 2 ? mine : undefined;
    });
    expect(old!.eventId).toBe(tokenEventId);
    expect(later!.deliveries).toEqual([]);
    expect(later!.sequence).toBeGreaterThan(old!.sequence);

    // The receiver (answering now) as the merchant's endpoint, and its secret, shown once.
    const created = await json<{ endpointId: string; url: string; secret: string }>(
      await api(base, 'POST', '/events/endpoints', 'application/json', { url: receiverUrl(), events: 'all' }),
      201,
    );
    expect(created.secret).toMatch(/^whsec_/);
    endpoint = created;
    const since = new Date(startedAt).toISOString();
    const recover = () =>
      api(base, 'POST', `/events/endpoints/${created.endpointId}/recover`, 'application/json', { since });
    const recovered = await json<{ queued: number }>(await recover(), 202);
    // The token's two events (the old one ended as endpointRemoved, the new one sent nowhere): the
    // ping is not among them. A ping is sent only to the endpoint it was made for, and recover
    // sends an endpoint the events of the types it takes and the pings made for it alone; the old
    // ping was made for the merchant file's endpoints (it has no audience, its type is `ping`,
    // which no endpoint takes), so it stays failed and is never sent to the new endpoint.
    expect(recovered.queued).toBe(2);

    const tokenEvents = (): Received[] => received.filter((r) => r.event.data.tokenId === token.tokenId);
    await until('the recovered events', 30, () => (tokenEvents().length >= 2 ? true : undefined));
    // The old event is in the log from before the split (shard 0), the new one in its subject's
    // shard: each is sent from its own object, so they may arrive in either order, and their
    // sequences order them for the receiver (docs/events.md "Logs from before this change").
    const bySequence = (): Received[] => tokenEvents().sort((a, b) => a.event.sequence - b.event.sequence);
    expect(tokenEvents()).toHaveLength(2);
    expect(bySequence().map((r) => r.event.eventId)).toEqual([tokenEventId, later!.eventId]);
    expect(bySequence().map((r) => [r.event.data.paymentInstrument.cardHolderName, r.event.data.description])).toEqual([
      ['Augusta Ada King', 'Made before the rename'],
      ['Augusta Ada King', 'After the rename'],
    ]);
    // The old event's body as the migration rewrote it (its subject and sequence), the same bytes the log lists.
    expect(bySequence().map((r) => [r.event.subject, r.event.sequence])).toEqual([
      [token.tokenId, old!.sequence],
      [token.tokenId, later!.sequence],
    ]);
    expect(bySequence()[0]!.event.createdAt).toBe(old!.createdAt);
    for (const r of received) {
      expect(r.headers['webhook-id']).toBe(r.event.eventId);
      expect(verifies(r, created.secret)).toBe(true);
      expect(verifies(r, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(false);
      expect(r.body).not.toContain(CARD);
    }
    expect(received.some((r) => r.event.eventId === pingEventId)).toBe(false);

    // The log: the old delivery stays ended, the new endpoint's is delivered, at the first attempt.
    const events = await until('the deliveries recorded', 20, async () => {
      const listed = await listEvents(base);
      const mine = listed.filter((e) => e.subject === token.tokenId);
      const delivered = (e: ListedEvent) =>
        e.deliveries.some((d) => d.endpointId === created.endpointId && d.state === 'delivered');
      return mine.length === 2 && mine.every(delivered) ? listed : undefined;
    });
    const update = events.find((e) => e.eventId === tokenEventId)!;
    expect(update.deliveries.map((d) => [d.endpointId === created.endpointId, d.state, d.lastError])).toEqual([
      [false, 'failed', 'endpointRemoved'],
      [true, 'delivered', undefined],
    ]);
    expect(update.deliveries[1]).toMatchObject({ attempts: 1, lastStatus: 204, url: receiverUrl() });
    const ping = events.find((e) => e.eventId === pingEventId)!;
    expect(ping.deliveries).toHaveLength(1);
    expect(ping.deliveries[0]).toMatchObject({ state: 'failed', lastError: 'endpointRemoved' });
    // Nothing more to recover: what reached the endpoint is not sent again.
    expect(await json<{ queued: number }>(await recover(), 202)).toEqual({ queued: 0 });
    expect(tokenEvents()).toHaveLength(2);
  });

  it('completes the challenge opened before, from its old JWT, with its one result', async () => {
    const base = served!.url;
    const { reference, challenge } = before;
    const transactionPath = `/verifications/customers/3ds/authentications/${encodeURIComponent(reference)}?entity=default`;
    const open = await json<{ state: string }>(await api(base, 'GET', transactionPath, THREEDS), 200);
    expect(open.state).toBe('challenged');

    // The cardholder's browser posts the old challenge JWT (it names the object by its id).
    const page = await fetch(new URL(pathOf(challenge.url), base), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ JWT: challenge.jwt, MD: 'renamed' }),
    });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    const formState = /name="state" value="([^"]+)"/.exec(html)?.[1];
    expect(formState, html).toBeDefined();
    const submitted = await fetch(new URL('/3ds/challenge/submit', base), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ state: formState!.replaceAll('&amp;', '&'), code: '1234', action: 'submit' }),
    });
    const done = await submitted.text();
    expect(submitted.status, done).toBe(200);
    expect(done).toContain('Payment verified');

    const verification = (): Promise<Response> =>
      api(base, 'POST', '/verifications/customers/3ds/verification', THREEDS, {
        transactionReference: reference,
        merchant: { entity: 'default' },
        challenge: { reference: challenge.reference },
      });
    const first = await verification();
    const firstText = await first.text();
    expect(first.status, firstText).toBe(200);
    expect(JSON.parse(firstText).outcome).toBe('authenticated');
    // One result: the sandbox control cannot change it, verification repeats it byte for byte.
    const late = await json<{ challenge: { result: string } }>(
      await api(base, 'POST', '/verifications/customers/3ds/sandbox/completeChallenge', THREEDS, {
        transactionReference: reference,
        merchant: { entity: 'default' },
        challenge: { reference: challenge.reference },
        result: 'failed',
      }),
      200,
    );
    expect(late.challenge.result).toBe('passed');
    expect(await (await verification()).text()).toBe(firstText);
    const completed = await json<{ state: string; result: { outcome: string } }>(
      await api(base, 'GET', transactionPath, THREEDS),
      200,
    );
    expect(completed).toMatchObject({ state: 'completed', result: { outcome: 'authenticated' } });

    // Its event, from the renamed object's outbox to the merchant's log and the endpoint made
    // through the API (the test before made it), signed with that endpoint's secret.
    expect(endpoint, 'the endpoint the test before made').toBeDefined();
    const event = await until('3DS event', 30, () =>
      received.find(
        (r) =>
          r.event.eventType === 'threeDS.authentication.completed' && r.event.data.transactionReference === reference,
      ),
    );
    expect(event.event.data.outcome).toBe('authenticated');
    expect(event.event.subject).toMatch(/^3ds:/);
    expect(verifies(event, endpoint!.secret)).toBe(true);
    expect(received.filter((r) => r.event.eventId === event.event.eventId)).toHaveLength(1);
  });

  it('sees none of it without the emulation: Miniflare does not apply renamed_classes', async () => {
    const bare = await serveTree({ dir: newTree!.dir, state: stateCopy });
    try {
      const { token } = before;
      expect((await api(bare.url, 'GET', pathOf(token.tokenPaymentInstrument.href), TOKENS)).status).toBe(404);
      const fresh = await json<Token>(await api(bare.url, 'POST', '/tokens', TOKENS, tokenBody(CARD)), 201);
      expect(fresh.tokenId).not.toBe(token.tokenId);
      // The new class got a storage folder of its own, beside the old one it never reads.
      expect(storedClasses(stateCopy)).toContain(defaultUniqueKey(bare.workerName, 'TokenGroup'));
    } finally {
      await bare.stop();
    }
  });
});
