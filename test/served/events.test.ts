import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEventSignature } from '../../examples/verify-event-signature.mjs';
import { startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { treeWithMerchants, withEndpoint } from '../../scripts/tree-copy';

/**
 * Events over a real network (docs/events.md): the Worker, bundled as deployed and served by
 * Miniflare, from a copy of this tree whose test merchant has an endpoint on a local Node HTTP
 * receiver (`http://127.0.0.1:<port>/hooks`, allowed in `test`, the address it listens on). What
 * the worker tests reach through a seam, this reaches through workerd's own `fetch`: the request's method, headers and
 * bytes as a receiver gets them, each verified with the receivers' own function; and a redirect
 * that is not followed.
 */

/** The test merchant's local signing secret (.dev.vars.example). */
const SECRET = 'evt_test_merchant_local_secret_not_for_live_0001';
const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const THREEDS = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const TOKENS = 'application/vnd.worldpay.tokens-v3.hal+json';
/** A Danske Bank visa/dankort card of the embedded data (Luhn-valid). */
const CARD = '4571368400000008';

interface Request {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  event: { eventId: string; eventType: string; data: Record<string, any> };
}

let server: Server;
let worker: LocalWorker;
let removeTree: () => void;
const received: Request[] = [];
/** How the receiver answers: 204, or a redirect elsewhere on itself. */
let answer: 'ok' | 'redirect' = 'ok';

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({
        path: request.url ?? '',
        method: request.method ?? '',
        headers: request.headers,
        body,
        event: request.url === '/hooks' ? JSON.parse(body) : { eventId: '', eventType: '', data: {} },
      });
      if (answer === 'redirect' && request.url === '/hooks') response.writeHead(302, { Location: '/elsewhere' }).end();
      else response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const tree = treeWithMerchants(process.cwd(), withEndpoint('test-merchant', `http://127.0.0.1:${port}/hooks`));
  removeTree = tree.remove;
  worker = await startLocalWorker({ root: tree.dir, quiet: true });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  removeTree?.();
  server?.close();
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

async function until(what: string, done: () => boolean): Promise<void> {
  const giveUp = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > giveUp)
      throw new Error(`no ${what} after 30 s: ${received.map((r) => r.event.eventId).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectDelivered(r: Request): Promise<void> {
  expect(r.method).toBe('POST');
  expect(r.headers['content-type']).toBe('application/json');
  const signature = r.headers['event-signature'];
  expect(typeof signature).toBe('string');
  expect(await verifyEventSignature(r.body, signature as string, [SECRET])).toBe(true);
  expect(await verifyEventSignature(r.body, signature as string, ['a-wrong-secret-of-at-least-32-bytes!'])).toBe(false);
  expect(r.body).not.toContain(CARD);
  expect(r.body).not.toContain('authenticationValue');
}

describe('events over the network', () => {
  it("delivers a 3DS transaction's outcome and a token's changes, in order, signed", async () => {
    const reference = `served-${Math.random().toString(36).slice(2, 10)}`;
    const authenticated = await api('POST', '/verifications/customers/3ds/authenticate', THREEDS, {
      transactionReference: reference,
      merchant: { entity: 'default' },
      instruction: {
        value: { amount: 1999, currency: 'GBP' },
        paymentInstrument: {
          type: 'card/front',
          cardNumber: CARD,
          cardExpiryDate: { month: 12, year: 2035 },
          cardHolderName: '3ds2-frictionless-identified',
        },
      },
      deviceData: { acceptHeader: 'text/html', userAgentHeader: 'Mozilla/5.0' },
      challenge: { returnUrl: 'https://shop.example/3ds/return', windowSize: '390x400' },
    });
    expect(authenticated.status).toBe(200);
    const outcome = (await authenticated.json()) as { outcome: string };

    const created = await api('POST', '/tokens', TOKENS, {
      merchant: { entity: 'default' },
      description: 'Served events',
      namespace: `served-${Math.random().toString(36).slice(2, 10)}`,
      paymentInstrument: {
        type: 'card/front',
        cardNumber: CARD,
        cardExpiryDate: { month: 12, year: 2035 },
        cardHolderName: 'Ada Lovelace',
      },
    });
    expect(created.status).toBe(201);
    const token = (await created.json()) as { tokenId: string; tokenPaymentInstrument: { href: string } };
    const href = new URL(token.tokenPaymentInstrument.href).pathname;
    const renamed = await api('PUT', `${href}/paymentInstrument/cardHolderName`, TOKENS, 'Augusta Ada King');
    expect(renamed.status).toBe(204);
    expect((await api('DELETE', href, TOKENS)).status).toBe(204);

    const threeDs = () => received.filter((r) => r.event.data.transactionReference === reference);
    const tokens = () => received.filter((r) => r.event.data.tokenId === token.tokenId);
    await until('3DS event', () => threeDs().length > 0);
    await until('token events', () => tokens().length >= 2);
    expect(threeDs().map((r) => r.event.eventType)).toEqual(['threeDS.authentication.completed']);
    expect(threeDs()[0]!.event.data.outcome).toBe(outcome.outcome);
    expect(tokens().map((r) => r.event.eventType)).toEqual(['tokens.token.updated', 'tokens.token.deleted']);
    expect(tokens()[0]!.event.data.paymentInstrument.cardHolderName).toBe('Augusta Ada King');
    for (const r of [...threeDs(), ...tokens()]) await expectDelivered(r);
  });

  it('does not follow a redirect: the attempt fails as `redirect`, and is retried later', async () => {
    answer = 'redirect';
    try {
      const ping = await api('POST', '/events/ping', null);
      expect(ping.status).toBe(202);
      const { eventId } = (await ping.json()) as { eventId: string };
      await until('ping', () => received.some((r) => r.event.eventId === eventId));
      // The log records the attempt's outcome just after the answer: read it until it is there.
      let delivery: { state?: string; lastError?: string; lastStatus?: number; attempts?: number } = {};
      for (const giveUp = Date.now() + 30_000; delivery.lastError === undefined && Date.now() < giveUp;) {
        const listed = (await (await api('GET', '/events', 'application/json')).json()) as {
          events: { eventId: string; deliveries: (typeof delivery)[] }[];
        };
        delivery = listed.events.find((e) => e.eventId === eventId)?.deliveries[0] ?? {};
        if (delivery.lastError === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(delivery).toMatchObject({ state: 'pending', lastError: 'redirect', lastStatus: 302, attempts: 1 });
      expect(received.filter((r) => r.path === '/elsewhere')).toEqual([]);
    } finally {
      answer = 'ok';
    }
  });
});
