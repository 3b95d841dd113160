import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventBody, EventView } from '../../src/events/event-types';
import { startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { authenticateBody, pollUntil } from './served-worker';

/**
 * Events over a real network (docs/events.md): this tree's Worker, bundled once as deployed and
 * served by Miniflare (scripts/local-worker.ts: not `wrangler dev`, which would rebuild under the
 * test when a source changes), and a Node HTTP receiver on this machine, written apart from the
 * project. The receiver's endpoints are made through `POST /events/endpoints`
 * (`http://127.0.0.1:<port>/<path>` is allowed in `test`), each with the secret its 201 answer
 * shows once; every delivery is
 * verified as a merchant's receiver verifies it, with the `standardwebhooks` library
 * (`new Webhook(secret).verify(body, headers)`, on the real clock). What the worker tests reach
 * through a seam, this reaches through workerd's own `fetch` and real sockets: the request's
 * method, headers and bytes as a receiver gets them, a redirect not followed, a 500 retried after
 * the real backoff, a 410, a receiver that never answers. Two waits are long, on the real clock:
 * the first retry (15–30 s, with jitter) and the 10 s deadline of a delivery; the rest is quick.
 *
 * The merchant's log lives as long as the file: its endpoints `a` and `b` take every event from
 * the first test on, so the tests pick what is theirs by eventId, tokenId or subject.
 */

const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const THREEDS = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const TOKENS = 'application/vnd.worldpay.tokens-v3.hal+json';
const EVENTS = 'application/json';
/** A Danske Bank visa/dankort card of the embedded data (Luhn-valid). */
const CARD = '4571368400000008';
/** A secret as the service makes them: `whsec_` and the base64 of 32 random bytes. */
const SECRET_FORM = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** One request the receiver got, on the path of one of its endpoints. */
interface Delivery {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed (unverified: the tests verify it themselves). */
  event: EventBody & { data: Record<string, any> };
  at: number;
  /** Requests the receiver held without an answer when this one came. */
  hangingThen: number;
}

/** How the receiver answers a delivery: a status (and headers), or never (`hang`). */
type Answer = { status: number; headers?: Record<string, string> } | 'hang';

interface Endpoint {
  endpointId: string;
  url: string;
  events: 'all' | string[];
  description?: string;
  state: 'enabled' | 'disabled';
  disabledReason?: string;
  createdAt: string;
  previousSecretExpiresAt?: string;
}

let server: Server;
let port: number;
let worker: LocalWorker;
const received: Delivery[] = [];
/** Answers by path (204 for a path not here). */
const answers = new Map<string, (d: Delivery) => Answer>();
/** Requests the receiver holds without an answer (the hanging endpoint's), until they close. */
let hanging = 0;
/** Each endpoint's secrets by path, newest first (a rotated-out one stays: earlier deliveries were signed with it). */
const secrets = new Map<string, string[]>();
/** The endpoints made here, by path. */
const endpoints = new Map<string, Endpoint>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: Delivery['event'];
      try {
        event = JSON.parse(body);
      } catch {
        event = {
          eventId: '',
          eventType: 'ping',
          createdAt: '',
          subject: '',
          sequence: 0,
          merchant: { entity: '' },
          data: {},
        };
      }
      const delivery: Delivery = {
        path: request.url ?? '',
        method: request.method ?? '',
        headers: request.headers,
        body,
        event,
        at: Date.now(),
        hangingThen: hanging,
      };
      received.push(delivery);
      const answer = answers.get(delivery.path)?.(delivery) ?? { status: 204 };
      if (answer === 'hang') {
        hanging++;
        response.on('close', () => hanging--);
        return;
      }
      response.writeHead(answer.status, answer.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  worker = await startLocalWorker({ root: process.cwd(), quiet: true });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

async function api(method: string, path: string, media: string | null, body?: unknown): Promise<Response> {
  return fetch(new URL(path, worker.url), {
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

/** Polls `probe` until it gives a value, for at most `seconds`. */
function until<T>(what: string, seconds: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  return pollUntil(
    what,
    seconds,
    probe,
    () => `received: ${received.map((r) => `${r.path} ${r.event.eventId}`).join(', ')}`,
  );
}

/** A new endpoint of the merchant on the receiver's `path`, and its secret (kept for the verifications). */
async function createEndpoint(
  path: string,
  events: 'all' | string[],
  answer?: (d: Delivery) => Answer,
): Promise<Endpoint & { secret: string }> {
  if (answer) answers.set(path, answer);
  const url = `http://127.0.0.1:${port}${path}`;
  const created = await json<Endpoint & { secret: string }>(
    await api('POST', '/events/endpoints', EVENTS, { url, events, description: `Receiver ${path}` }),
    201,
  );
  expect(created).toMatchObject({ url, events, description: `Receiver ${path}`, state: 'enabled' });
  expect(created.endpointId).toMatch(/^ep_[a-z2-7]{26}$/);
  expect(created.secret).toMatch(SECRET_FORM);
  const { secret, ...endpoint } = created;
  secrets.set(path, [secret]);
  endpoints.set(path, endpoint);
  return created;
}

const endpointOf = (path: string): Endpoint => endpoints.get(path)!;

/** The headers a receiver hands the library: the request's own, as Node gives them. */
function headersOf(d: Delivery): Record<string, string> {
  return Object.fromEntries(Object.entries(d.headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Whether the delivery verifies with this secret, as a receiver checks it (standardwebhooks); throws for anything but a failed verification. */
function verifies(d: Delivery, secret: string): boolean {
  try {
    expect(new Webhook(secret).verify(d.body, headersOf(d))).toEqual(JSON.parse(d.body));
    return true;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return false;
    throw e;
  }
}

/** A delivery as every one must be: a signed JSON POST of its event, with no card number or authentication value. */
function expectWellFormed(d: Delivery): void {
  expect(d.method).toBe('POST');
  expect(d.headers['content-type']).toBe('application/json');
  expect(d.headers['user-agent']).toBe('card-edge-events/2');
  expect(d.headers['webhook-id']).toBe(d.event.eventId);
  expect(d.headers['webhook-timestamp']).toMatch(/^\d+$/);
  expect(Object.keys(d.event)).toEqual([
    'eventId',
    'eventType',
    'createdAt',
    'subject',
    'sequence',
    'merchant',
    'data',
  ]);
  expect(typeof d.event.subject).toBe('string');
  expect(d.event.subject).not.toBe('');
  expect(Number.isSafeInteger(d.event.sequence)).toBe(true);
  expect(d.body).not.toContain(CARD);
  expect(d.body).not.toContain('authenticationValue');
}

/** Well formed, and verified with the endpoint's (current) secret and with no other endpoint's. */
function expectSignedFor(d: Delivery, path: string): void {
  expectWellFormed(d);
  expect(verifies(d, secrets.get(path)![0]!), `${d.path} ${d.event.eventId} with ${path}'s secret`).toBe(true);
  for (const [other, theirs] of secrets)
    if (other !== path) for (const secret of theirs) expect(verifies(d, secret), `with ${other}'s secret`).toBe(false);
}

const at = (path: string, filter: (d: Delivery) => boolean = () => true): Delivery[] =>
  received.filter((d) => d.path === path && filter(d));

const eventIds = (deliveries: Delivery[]): string[] => deliveries.map((d) => d.event.eventId);

/** The event with its deliveries (GET /events/{eventId}). */
async function eventView(eventId: string): Promise<EventView> {
  return json<EventView>(await api('GET', `/events/${eventId}`, EVENTS), 200);
}

/** Every event of a filtered `GET /events`, page after page. */
async function listed(query: string): Promise<EventView[]> {
  const events: EventView[] = [];
  for (let since = ''; ;) {
    const page = await json<{ events: EventView[]; hasMore: boolean }>(
      await api('GET', `/events?${query}${since && `&since=${since}`}`, EVENTS),
      200,
    );
    events.push(...page.events);
    if (!page.hasMore) return events;
    since = page.events[page.events.length - 1]!.eventId;
  }
}

function deliveryTo(view: EventView, path: string) {
  return view.deliveries.find((d) => d.endpointId === endpointOf(path).endpointId);
}

async function newToken(description: string): Promise<{ tokenId: string; href: string }> {
  const token = await json<{ tokenId: string; tokenPaymentInstrument: { href: string } }>(
    await api('POST', '/tokens', TOKENS, {
      merchant: { entity: 'default' },
      description,
      namespace: `served-${Math.random().toString(36).slice(2, 10)}`,
      paymentInstrument: {
        type: 'card/front',
        cardNumber: CARD,
        cardExpiryDate: { month: 12, year: 2035 },
        cardHolderName: 'Ada Lovelace',
      },
    }),
    201,
  );
  return { tokenId: token.tokenId, href: new URL(token.tokenPaymentInstrument.href).pathname };
}

async function put(path: string, value: string): Promise<void> {
  const answer = await api('PUT', path, TOKENS, value);
  expect(answer.status, await answer.text()).toBe(204);
}

async function ping(path: string): Promise<string> {
  const { eventId } = await json<{ eventId: string }>(
    await api('POST', `/events/endpoints/${endpointOf(path).endpointId}/ping`, null),
    202,
  );
  expect(eventId).toMatch(/^evt_ping_/);
  return eventId;
}

/** The 3DS event of the first test, redelivered later. */
let threeDsEventId = '';

describe('events over the network', () => {
  it("delivers two 3DS outcomes and a token's changes to each endpoint once, in order, each signed with its own secret only", async () => {
    const a = await createEndpoint('/a', 'all');
    const b = await createEndpoint('/b', 'all');
    expect(b.endpointId).not.toBe(a.endpointId);
    expect(b.secret).not.toBe(a.secret);
    // The list shows both, and never a secret.
    const list = await api('GET', '/events/endpoints', EVENTS);
    const listText = await list.text();
    expect(list.status).toBe(200);
    expect(listText).not.toContain(a.secret);
    expect(listText).not.toContain(b.secret);
    const byId = (x: { endpointId: string }, y: { endpointId: string }) => x.endpointId.localeCompare(y.endpointId);
    expect((JSON.parse(listText) as { endpoints: Endpoint[] }).endpoints.sort(byId)).toEqual(
      [endpointOf('/a'), endpointOf('/b')].sort(byId),
    );

    // Two transactions, two outcomes: each its own event.
    const outcomes: Record<string, string> = {
      '3ds2-frictionless-identified': 'authenticated',
      '3ds2-frictionless-failed': 'authenticationFailed',
    };
    const references = new Map<string, string>();
    for (const [scenario, expected] of Object.entries(outcomes)) {
      const reference = `served-${Math.random().toString(36).slice(2, 10)}`;
      const authenticated = await json<{ outcome: string }>(
        await api(
          'POST',
          '/verifications/customers/3ds/authenticate',
          THREEDS,
          authenticateBody(reference, CARD, scenario),
        ),
        200,
      );
      expect(authenticated.outcome).toBe(expected);
      references.set(reference, expected);
    }

    const token = await newToken('Served events');
    await put(`${token.href}/paymentInstrument/cardHolderName`, 'Augusta Ada King');
    expect((await api('DELETE', token.href, TOKENS)).status).toBe(204);

    for (const path of ['/a', '/b']) {
      const threeDs = () => at(path, (d) => references.has(d.event.data.transactionReference));
      const tokens = () => at(path, (d) => d.event.data.tokenId === token.tokenId);
      await until(`3DS events at ${path}`, 30, () => (threeDs().length >= 2 ? true : undefined));
      await until(`token events at ${path}`, 30, () => (tokens().length >= 2 ? true : undefined));
      expect(threeDs().map((d) => d.event.eventType)).toEqual(Array(2).fill('threeDS.authentication.completed'));
      for (const d of threeDs()) {
        expect(d.event.data.outcome).toBe(references.get(d.event.data.transactionReference));
        expect(d.event.subject).toMatch(/^3ds:/);
      }
      expect(new Set(threeDs().map((d) => d.event.data.transactionReference)).size).toBe(2);
      expect(tokens().map((d) => d.event.eventType)).toEqual(['tokens.token.updated', 'tokens.token.deleted']);
      expect(tokens()[0]!.event.data.paymentInstrument.cardHolderName).toBe('Augusta Ada King');
      // A token's events have its id as their subject, and a greater sequence each.
      expect(tokens().map((d) => d.event.subject)).toEqual([token.tokenId, token.tokenId]);
      expect(tokens()[1]!.event.sequence).toBeGreaterThan(tokens()[0]!.event.sequence);
      for (const d of [...threeDs(), ...tokens()]) expectSignedFor(d, path);
    }
    const threeDsEvents = eventIds(at('/a', (d) => references.has(d.event.data.transactionReference)));
    threeDsEventId = threeDsEvents[0]!;
    // Each sent once: the log counts one attempt per endpoint, delivered.
    for (const eventId of [...threeDsEvents, ...eventIds(at('/a', (d) => d.event.data.tokenId === token.tokenId))]) {
      const view = await until(`the deliveries of ${eventId} recorded`, 10, async () => {
        const v = await eventView(eventId);
        return v.deliveries.every((d) => d.state === 'delivered') ? v : undefined;
      });
      expect(view.deliveries.map((d) => [d.endpointId, d.state, d.attempts, d.lastStatus]).sort()).toEqual(
        [
          [a.endpointId, 'delivered', 1, 204],
          [b.endpointId, 'delivered', 1, 204],
        ].sort(),
      );
      expect(received.filter((d) => d.event.eventId === eventId)).toHaveLength(2);
    }
  });

  it('pings one endpoint only; after a rotation a delivery verifies with the old secret and the new one', async () => {
    const pinged = await ping('/a');
    const first = await until('ping', 30, () => at('/a', (d) => d.event.eventId === pinged)[0]);
    expectSignedFor(first, '/a');
    expect(first.event).toMatchObject({
      eventType: 'ping',
      subject: `ping:${pinged}`,
      data: { endpointId: endpointOf('/a').endpointId },
    });
    // Sent to that endpoint alone: the other has no delivery of it.
    const view = await eventView(pinged);
    expect(view.deliveries.map((d) => d.endpointId)).toEqual([endpointOf('/a').endpointId]);
    expect(at('/b', (d) => d.event.eventId === pinged)).toEqual([]);
    expect(first.headers['webhook-signature']!.toString().split(' ')).toHaveLength(1);

    const old = secrets.get('/a')![0]!;
    const before = Date.now();
    const rotated = await json<Endpoint & { secret: string }>(
      await api('POST', `/events/endpoints/${endpointOf('/a').endpointId}/rotateSecret`, EVENTS, {
        previousValidForSeconds: 3600,
      }),
      200,
    );
    expect(rotated.secret).toMatch(SECRET_FORM);
    expect(rotated.secret).not.toBe(old);
    const expires = Date.parse(rotated.previousSecretExpiresAt!);
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    secrets.set('/a', [rotated.secret, old]);
    const { secret: _secret, ...shown } = rotated;
    endpoints.set('/a', shown);
    const read = await api('GET', `/events/endpoints/${endpointOf('/a').endpointId}`, EVENTS);
    const readText = await read.text();
    expect(JSON.parse(readText)).toEqual(shown);
    expect(readText).not.toContain(rotated.secret);

    // Signed with both while the old one is valid: a receiver verifies with either.
    const again = await ping('/a');
    const second = await until('ping after the rotation', 30, () => at('/a', (d) => d.event.eventId === again)[0]);
    expectSignedFor(second, '/a');
    expect(second.headers['webhook-signature']!.toString().split(' ')).toHaveLength(2);
    expect(verifies(second, rotated.secret)).toBe(true);
    expect(verifies(second, old)).toBe(true);
    // The one before the rotation verifies with the old secret only.
    expect(verifies(first, old)).toBe(true);
    expect(verifies(first, rotated.secret)).toBe(false);
  });

  it('does not follow a redirect: the attempt fails as `redirect`; a deleted endpoint ends its deliveries as failed', async () => {
    await createEndpoint('/redirect', ['threeDS.authentication.completed'], () => ({
      status: 302,
      headers: { Location: '/elsewhere' },
    }));
    const pinged = await ping('/redirect');
    const request = await until('ping', 30, () => at('/redirect', (d) => d.event.eventId === pinged)[0]);
    expectSignedFor(request, '/redirect');
    // The log records the attempt's outcome just after the answer: read it until it is there.
    const delivery = await until('the attempt recorded', 30, async () => {
      const d = deliveryTo(await eventView(pinged), '/redirect');
      return d?.lastError !== undefined ? d : undefined;
    });
    expect(delivery).toMatchObject({ state: 'pending', lastError: 'redirect', lastStatus: 302, attempts: 1 });
    expect(delivery.nextAttemptAt).toBeDefined();
    expect(delivery.history).toEqual([expect.objectContaining({ status: 302, error: 'redirect' })]);
    expect(received.filter((r) => r.path === '/elsewhere')).toEqual([]);
    const pending = await listed(`deliveryState=pending&endpointId=${endpointOf('/redirect').endpointId}`);
    expect(pending.map((e) => e.eventId)).toEqual([pinged]);

    const { endpointId } = endpointOf('/redirect');
    expect((await api('DELETE', `/events/endpoints/${endpointId}`, null)).status).toBe(204);
    expect((await api('GET', `/events/endpoints/${endpointId}`, EVENTS)).status).toBe(404);
    const ended = deliveryTo(await eventView(pinged), '/redirect');
    expect(ended).toMatchObject({ state: 'failed', lastError: 'endpointRemoved', attempts: 1 });
    expect(ended!.url).toBeUndefined();
    expect(ended!.nextAttemptAt).toBeUndefined();
    const failed = await listed(`deliveryState=failed&endpointId=${endpointId}`);
    expect(failed.map((e) => e.eventId)).toEqual([pinged]);
    expect(await listed(`deliveryState=pending&endpointId=${endpointId}`)).toEqual([]);
    secrets.delete('/redirect');
  });

  it("retries a 500 with the same bytes; the token's later events wait at that endpoint until it is delivered, not at the others", async () => {
    const first = new Set<string>();
    await createEndpoint('/flaky', ['tokens.token.updated', 'tokens.token.deleted'], (d) =>
      first.delete(d.event.eventId) ? { status: 500 } : { status: 204 },
    );
    const token = await newToken('Flaky receiver');
    const v2 = `tok_${token.tokenId}_v2`;
    first.add(v2);
    await put(`${token.href}/paymentInstrument/cardHolderName`, 'Augusta Ada King');
    await put(`${token.href}/description`, 'Changed while the receiver fails');
    expect((await api('DELETE', token.href, TOKENS)).status).toBe(204);
    const mine = (path: string) => at(path, (d) => d.event.data.tokenId === token.tokenId);

    // The other endpoint gets all three at once, in order.
    await until('the token events at /a', 30, () => (mine('/a').length >= 3 ? true : undefined));
    const ids = eventIds(mine('/a'));
    expect(ids).toEqual([v2, `tok_${token.tokenId}_v3`, `tok_${token.tokenId}_deleted`]);
    // At the failing one: the first was answered 500, and is pending with its next attempt set;
    // the later two were not sent, and wait without a time of their own.
    const failedAttempt = await until('the 500 recorded', 30, async () => {
      const d = deliveryTo(await eventView(v2), '/flaky');
      return d?.lastStatus !== undefined ? d : undefined;
    });
    expect(eventIds(mine('/flaky'))).toEqual([v2]);
    expect(failedAttempt).toMatchObject({ state: 'pending', lastStatus: 500, lastError: 'status', attempts: 1 });
    // The first retry: between half and all of 30 s after the failure (jitter).
    const wait = Date.parse(failedAttempt.nextAttemptAt!) - Date.parse(failedAttempt.lastAttemptAt!);
    expect(wait).toBeGreaterThanOrEqual(15_000);
    expect(wait).toBeLessThanOrEqual(30_000);
    for (const later of ids.slice(1)) {
      const d = deliveryTo(await eventView(later), '/flaky');
      expect(d).toMatchObject({ state: 'pending', attempts: 0 });
      expect(d!.nextAttemptAt).toBeUndefined();
    }
    const pending = await listed(`deliveryState=pending&endpointId=${endpointOf('/flaky').endpointId}`);
    expect(pending.map((e) => e.eventId)).toEqual(ids);

    // The retry, on the real clock: the same bytes, then the two that waited, in order.
    await until('the retry and the events after it', 45, () => (mine('/flaky').length >= 4 ? true : undefined));
    const requests = mine('/flaky');
    expect(eventIds(requests)).toEqual([v2, ...ids]);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    expect(requests[1]!.headers['webhook-id']).toBe(requests[0]!.headers['webhook-id']);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(14_000);
    for (const d of requests) expectSignedFor(d, '/flaky');
    expect(requests.map((d) => d.event.sequence)).toEqual(
      [...requests.map((d) => d.event.sequence)].sort((x, y) => x - y),
    );

    const delivered = await until('the retry recorded', 10, async () => {
      const d = deliveryTo(await eventView(v2), '/flaky');
      return d?.state === 'delivered' ? d : undefined;
    });
    expect(delivered).toMatchObject({ attempts: 2, lastStatus: 204 });
    expect(delivered.lastError).toBeUndefined();
    expect(delivered.history!.map((h) => [h.status, h.error])).toEqual([
      [204, undefined],
      [500, 'status'],
    ]);
  }, 90_000);

  it('sends 20 updates as 20 events in sequence order; a disabled endpoint holds them, and enabled gets them in order', async () => {
    const b = endpointOf('/b');
    const disabled = await json<Endpoint>(
      await api('PATCH', `/events/endpoints/${b.endpointId}`, EVENTS, { state: 'disabled' }),
      200,
    );
    expect(disabled).toMatchObject({ state: 'disabled', disabledReason: 'merchant' });

    const token = await newToken('Twenty updates');
    for (let n = 1; n <= 20; n++) await put(`${token.href}/description`, `Update ${n}`);
    const mine = (path: string) => at(path, (d) => d.event.data.tokenId === token.tokenId);
    const expected = Array.from({ length: 20 }, (_, i) => `tok_${token.tokenId}_v${i + 2}`);

    await until('20 events at /a', 45, () => (mine('/a').length >= 20 ? true : undefined));
    const events = mine('/a');
    expect(eventIds(events)).toEqual(expected);
    expect(events.map((d) => d.event.data.description)).toEqual(expected.map((_, i) => `Update ${i + 1}`));
    for (let i = 1; i < events.length; i++)
      expect(events[i]!.event.sequence).toBeGreaterThan(events[i - 1]!.event.sequence);
    for (const d of events) expectSignedFor(d, '/a');

    // Held for the disabled endpoint, none sent to it.
    const held = await until('20 held deliveries', 10, async () => {
      const list = await listed(`deliveryState=held&endpointId=${b.endpointId}&type=tokens.token.updated`);
      const ofToken = list.filter((e) => e.subject === token.tokenId);
      return ofToken.length === 20 ? ofToken : undefined;
    });
    expect(held.map((e) => e.eventId)).toEqual(expected);
    expect(held[0]!.deliveries.find((d) => d.endpointId === b.endpointId)).toMatchObject({
      state: 'held',
      attempts: 0,
    });
    expect(mine('/b')).toEqual([]);

    const enabled = await json<Endpoint>(
      await api('PATCH', `/events/endpoints/${b.endpointId}`, EVENTS, { state: 'enabled' }),
      200,
    );
    expect(enabled.state).toBe('enabled');
    expect(enabled.disabledReason).toBeUndefined();
    await until('20 events at /b', 45, () => (mine('/b').length >= 20 ? true : undefined));
    expect(eventIds(mine('/b'))).toEqual(expected);
    for (const d of mine('/b')) expectSignedFor(d, '/b');
    // The same bytes to both endpoints.
    expect(mine('/b').map((d) => d.body)).toEqual(events.map((d) => d.body));
  }, 90_000);

  it('redelivers an event with the same body to each endpoint that takes it; an unknown one is not found', async () => {
    expect(threeDsEventId).not.toBe('');
    const before = (path: string) => at(path, (d) => d.event.eventId === threeDsEventId);
    expect(before('/a')).toHaveLength(1);
    expect((await api('POST', `/events/${threeDsEventId}/redeliver`, null)).status).toBe(202);
    for (const path of ['/a', '/b']) {
      await until(`the redelivery at ${path}`, 30, () => (before(path).length >= 2 ? true : undefined));
      const [original, again] = before(path);
      expect(again!.body).toBe(original!.body);
      expect(again!.headers['webhook-id']).toBe(threeDsEventId);
      expectSignedFor(again!, path);
    }
    // Only to the endpoints that take its type: /flaky takes token events only.
    expect(at('/flaky', (d) => d.event.eventId === threeDsEventId)).toEqual([]);
    const view = await until('the redeliveries recorded', 10, async () => {
      const v = await eventView(threeDsEventId);
      return v.deliveries.filter((d) => d.attempts === 2 && d.state === 'delivered').length === 2 ? v : undefined;
    });
    expect(view.deliveries.map((d) => d.endpointId).sort()).toEqual(
      [endpointOf('/a').endpointId, endpointOf('/b').endpointId].sort(),
    );
    expect((await api('POST', '/events/evt_not_one/redeliver', null)).status).toBe(404);
  });

  it('disables an endpoint that answers 410 at once, holds its deliveries, and tells the other endpoints', async () => {
    const gone = await createEndpoint('/gone', ['tokens.token.extended'], () => ({ status: 410 }));
    const pinged = await ping('/gone');
    const told = (path: string) => at(path, (d) => d.event.eventType === 'events.endpoint.disabled');
    for (const path of ['/a', '/b']) {
      const [event] = await until(`events.endpoint.disabled at ${path}`, 30, () =>
        told(path).length > 0 ? told(path) : undefined,
      );
      expectSignedFor(event!, path);
      expect(event!.event).toMatchObject({
        subject: `endpoint:${gone.endpointId}`,
        merchant: { entity: '' },
        data: { endpointId: gone.endpointId, url: gone.url, disabledReason: 'gone' },
      });
    }
    expect(told('/flaky')).toEqual([]);
    expect(at('/gone', (d) => d.event.eventId === pinged)).toHaveLength(1);
    const read = await json<Endpoint>(await api('GET', `/events/endpoints/${gone.endpointId}`, EVENTS), 200);
    expect(read).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    const delivery = deliveryTo(await eventView(pinged), '/gone');
    expect(delivery).toMatchObject({ state: 'held', lastStatus: 410, attempts: 1 });
    expect((await listed(`deliveryState=held&endpointId=${gone.endpointId}`)).map((e) => e.eventId)).toEqual([pinged]);
    expect((await api('DELETE', `/events/endpoints/${gone.endpointId}`, null)).status).toBe(204);
    secrets.delete('/gone');
  });

  it('lets an endpoint that never answers cost the API nothing: answers come at once, the other endpoints get their events', async () => {
    await createEndpoint('/hang', 'all', () => 'hang');
    const pings: string[] = [];
    for (let n = 0; n < 5; n++) pings.push(await ping('/hang'));
    // Four held open (its share of the object's deliveries at once); the fifth waits its turn.
    await until('4 requests hanging', 30, () => (hanging === 4 ? true : undefined));

    const timed = async <T>(call: () => Promise<T>): Promise<T> => {
      const started = Date.now();
      const value = await call();
      // Far below the 10 s a delivery may take: no answer waits for one.
      expect(Date.now() - started).toBeLessThan(5_000);
      return value;
    };
    const token = await timed(() => newToken('While an endpoint hangs'));
    await timed(() => put(`${token.href}/description`, 'Changed while an endpoint hangs'));
    await timed(() => api('GET', '/events?order=desc', EVENTS).then((r) => r.text()));
    await timed(() => api('GET', '/events/endpoints', EVENTS).then((r) => r.text()));
    const v2 = `tok_${token.tokenId}_v2`;
    const arrived = await until('the token event at /a', 8, () => at('/a', (d) => d.event.eventId === v2)[0]);
    expectSignedFor(arrived, '/a');
    // It came while the four pings hung (before the first one's 10 s deadline). The token's own
    // events go to /hang too, from their subject's shard, which has slots of its own
    // (docs/events.md "Delivery"): so at least four.
    expect(arrived.hangingThen).toBeGreaterThanOrEqual(4);
    expect(arrived.at - at('/hang')[0]!.at).toBeLessThan(10_000);
    // No fifth ping to it while four were open (the pings are shard 0's, 4 slots an endpoint):
    // told below by the Worker's own record of an attempt's end, not by arrival order.
    const pingsAt = () => at('/hang', (d) => d.event.eventType === 'ping');

    // At the deadline the four attempts fail as `timeout`, and what waited is sent.
    const timedOut = await until('a timeout recorded', 20, async () => {
      const d = deliveryTo(await eventView(pings[0]!), '/hang');
      return d?.lastError !== undefined ? d : undefined;
    });
    expect(timedOut).toMatchObject({ state: 'pending', lastError: 'timeout', attempts: 1 });
    expect(timedOut.lastStatus).toBeUndefined();
    expect(timedOut.history![0]!.durationMs).toBeGreaterThanOrEqual(9_000);
    await until('the ping that waited', 10, () => (pingsAt().length > 4 ? true : undefined));
    // The Worker records an attempt's end before its slot is free, and the machine's one clock
    // runs on: the fifth ping reached the receiver after the first of the four was recorded ended.
    const ends = await Promise.all(
      pings.map(async (eventId) => {
        const first = deliveryTo(await eventView(eventId), '/hang')?.history?.at(-1);
        return first ? Date.parse(first.at) : Infinity;
      }),
    );
    expect(pingsAt()[4]!.at).toBeGreaterThanOrEqual(Math.min(...ends));
    for (const d of at('/hang')) expectSignedFor(d, '/hang');
    expect((await api('DELETE', `/events/endpoints/${endpointOf('/hang').endpointId}`, null)).status).toBe(204);
    secrets.delete('/hang');
  }, 60_000);

  it("every delivery of the file verified with its endpoint's secret, and each subject in sequence order at each endpoint", () => {
    const all = received.filter((d) => d.path !== '/elsewhere');
    expect(all.length).toBeGreaterThan(50);
    const rotatedOut = secrets.get('/a')![1]!;
    const known = new Map<string, string[]>([
      ['/a', secrets.get('/a')!],
      ['/b', secrets.get('/b')!],
      ['/flaky', secrets.get('/flaky')!],
    ]);
    for (const d of all) {
      expectWellFormed(d);
      const mine = known.get(d.path);
      if (mine)
        expect(
          mine.some((s) => verifies(d, s)),
          `${d.path} ${d.event.eventId}`,
        ).toBe(true);
    }
    expect(at('/a').some((d) => verifies(d, rotatedOut) && !verifies(d, secrets.get('/a')![0]!))).toBe(true);
    for (const path of new Set(all.map((d) => d.path))) {
      const last = new Map<string, { eventId: string; sequence: number }>();
      for (const d of at(path)) {
        const before = last.get(d.event.subject);
        // A retry or a redelivery repeats an event (and its sequence); a new event comes later.
        if (before && before.eventId !== d.event.eventId)
          expect(d.event.sequence, `${path} ${d.event.subject}`).toBeGreaterThan(before.sequence);
        if (!before || before.eventId !== d.event.eventId)
          last.set(d.event.subject, { eventId: d.event.eventId, sequence: d.event.sequence });
      }
    }
  });
});
