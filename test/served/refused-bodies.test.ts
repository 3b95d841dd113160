import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, startMiniflare, startWranglerDev, type Served } from './served-worker';

/**
 * An answer given before the body is read (an error about the credentials, the path, the
 * headers, or a body over 64 KiB) must leave the client's connection usable, and under
 * `wrangler dev` (npm start) the next request too: the Worker reads what is left of the body and
 * throws it away (src/http/body.ts). Over real sockets, for every status that can answer before
 * the body is read, each refusal with a 200 KB body is followed on the same connection by a
 * lookup and a GET that must both be answered as usual.
 */

const BIG = Buffer.alloc(200_000, 'a');
const TEST_AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
const CARD_BIN = { Authorization: TEST_AUTH, 'Content-Type': 'application/json', 'WP-Api-Version': '1' };
const THREEDS_MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const LOOKUP = '/api/cardBin/panLookup';

const REFUSALS: { name: string; status: number; method?: string; path: string; headers: Record<string, string> }[] = [
  { name: 'no credentials', status: 401, path: LOOKUP, headers: { 'Content-Type': 'application/json' } },
  { name: 'a wrong password', status: 401, path: LOOKUP, headers: { ...CARD_BIN, Authorization: 'Basic eDp5' } },
  { name: 'an unknown path', status: 404, path: '/no/such/path', headers: CARD_BIN },
  { name: 'a wrong method', status: 405, method: 'PUT', path: LOOKUP, headers: CARD_BIN },
  { name: 'a wrong Content-Type', status: 415, path: LOOKUP, headers: { ...CARD_BIN, 'Content-Type': 'text/plain' } },
  {
    name: 'an Accept the API cannot answer',
    status: 406,
    path: '/verifications/customers/3ds/authenticate',
    headers: { Authorization: TEST_AUTH, Accept: 'text/html', 'Content-Type': THREEDS_MEDIA },
  },
  { name: 'a missing WP-Api-Version', status: 400, path: LOOKUP, headers: { ...CARD_BIN, 'WP-Api-Version': '' } },
  { name: 'a body over 64 KiB', status: 413, path: LOOKUP, headers: CARD_BIN },
  { name: 'a simulated 429', status: 429, path: LOOKUP, headers: { ...CARD_BIN, 'WP-Sandbox-Simulate': '429' } },
  { name: 'a simulated 503', status: 503, path: LOOKUP, headers: { ...CARD_BIN, 'WP-Sandbox-Simulate': '503' } },
  {
    name: 'a publishable key from an origin it does not list',
    status: 403,
    path: '/api/cardBin/binLookup',
    headers: { ...CARD_BIN, Authorization: 'Bearer pk_test_merchant_local_demo', Origin: 'https://elsewhere.example' },
  },
  { name: 'a page posted JSON', status: 415, path: '/3ds/ddc', headers: { 'Content-Type': 'application/json' } },
  {
    name: 'a page form over 64 KiB',
    status: 413,
    path: '/3ds/challenge',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  },
];

for (const start of [startWranglerDev, startMiniflare]) {
  describe(`a refused body, ${start === startWranglerDev ? 'under wrangler dev (npm start)' : 'under Miniflare'}`, () => {
    let served: Served;
    beforeAll(async () => {
      served = await start(process.cwd());
    }, 120_000);
    afterAll(async () => {
      await served?.stop();
    });

    it.each(
      REFUSALS.flatMap((r) => [
        { ...r, chunked: false },
        { ...r, chunked: true },
      ]),
    )(
      '$name ($status, chunked: $chunked) keeps the connection and the next requests working',
      async ({ status, method, path, headers, chunked }) => {
        const client = new Client(served.url);
        try {
          const refusal = await client.send(method ?? 'POST', path, headers, BIG, { chunked });
          expect(refusal.status).toBe(status);
          expect(refusal.body).not.toBe('');
          const lookup = await client.send(
            'POST',
            LOOKUP,
            CARD_BIN,
            JSON.stringify({ merchant: { entity: 'default' }, cardNumber: '4444333322221111' }),
          );
          expect(lookup.status).toBe(200);
          expect(lookup.reusedSocket).toBe(true);
          const read = await client.send('GET', '/tokens/NOSUCHTOKEN', {
            Authorization: TEST_AUTH,
            Accept: 'application/vnd.worldpay.tokens-v1.hal+json',
          });
          expect(read.status).toBe(404);
          expect(read.reusedSocket).toBe(true);
        } finally {
          client.close();
        }
      },
    );
  });
}
