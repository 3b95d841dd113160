import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyDelivery } from '../../examples/receive-events.mjs';
import { startFakeProvider, startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { startMiniflare, type Served } from './served-worker';

/**
 * The README's end-to-end examples (`npm run try:bin`, `try:tokens`, `try:3ds`, `try:live`:
 * examples/*.mjs) run as a merchant runs them, against a served Worker on a real port: each must
 * exit 0, so that they cannot rot. try:live and try:app run against the live Worker (src/live.ts)
 * pointed at the fake 3DS Server provider on its own port, as `npm run start:live` serves them
 * (try:app runs against both: its SDK then uses the fake's Directory Server and ACS). The events
 * receiver (examples/receive-events.mjs) verifies a ping the served Worker sends to this machine.
 */

function runExample(script: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      // The TypeScript example (try-app.ts: the test SDK) runs through tsx, as `npm run try:app` does.
      [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), `examples/${script}`],
      { cwd: process.cwd(), env: { ...process.env, ...env }, timeout: 50_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

describe('the examples against the test Worker', () => {
  let served: Served;
  beforeAll(async () => {
    served = await startMiniflare(process.cwd());
  }, 120_000);
  afterAll(async () => {
    await served?.stop();
  });

  it.each(['try-bin.mjs', 'try-tokens.mjs', 'try-3ds.mjs', 'try-app.ts'])('%s exits 0', async (script) => {
    const { code, output } = await runExample(script, { BASE_URL: served.url.origin });
    expect(code, output).toBe(0);
    expect(output).toContain('every answer as expected');
    if (script === 'try-app.ts') expect(output).toContain('a test Worker: its test issuer is the ACS');
    expectCardNumbersMasked(script, output);
  });

  it("the README's events calls: try-3ds.mjs's transactions are in the merchant's event log, and a ping reaches an endpoint, signed", async () => {
    const { code, output } = await runExample('try-3ds.mjs', { BASE_URL: served.url.origin });
    expect(code, output).toBe(0);
    const references = [...new Set(output.match(/order-[a-z0-9]+-\d+/g) ?? [])];
    expect(references.length).toBeGreaterThan(0);
    const auth = { Authorization: `Basic ${btoa('test-merchant:test-password')}` };
    // Events leave after the answers: read the log until each transaction's event is there.
    await expect
      .poll(
        async () => {
          const events: { eventType: string; data: { transactionReference?: string }; deliveries: unknown[] }[] = [];
          for (let since = ''; ;) {
            const page = await fetch(new URL(`/events${since && `?since=${since}`}`, served.url), { headers: auth });
            expect(page.status).toBe(200);
            const body = (await page.json()) as { events: typeof events & { eventId: string }[]; hasMore: boolean };
            events.push(...body.events);
            if (!body.hasMore) break;
            since = body.events[body.events.length - 1]!.eventId;
          }
          return references.filter((r) =>
            events.some((e) => e.eventType === 'threeDS.authentication.completed' && e.data.transactionReference === r),
          ).length;
        },
        { timeout: 15_000 },
      )
      .toBe(references.length);
    // A ping to an endpoint on this machine (http to 127.0.0.1 is allowed in test), verified as
    // examples/receive-events.mjs verifies a delivery.
    const received: { body: string; headers: Record<string, string> }[] = [];
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        received.push({
          body: Buffer.concat(chunks).toString('utf8'),
          headers: request.headers as Record<string, string>,
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const json = { ...auth, 'Content-Type': 'application/json' };
      const created = await fetch(new URL('/events/endpoints', served.url), {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ url, events: 'all' }),
      });
      expect(created.status).toBe(201);
      const endpoint = (await created.json()) as { endpointId: string; secret: string };
      expect(endpoint.secret).toMatch(/^whsec_/);
      const ping = await fetch(new URL(`/events/endpoints/${endpoint.endpointId}/ping`, served.url), {
        method: 'POST',
        headers: auth,
      });
      expect(ping.status).toBe(202);
      const { eventId } = (await ping.json()) as { eventId: string };
      expect(eventId).toMatch(/^evt_ping_/);
      await expect
        .poll(() => received.some((r) => r.headers['webhook-id'] === eventId), { timeout: 15_000 })
        .toBe(true);
      const delivery = received.find((r) => r.headers['webhook-id'] === eventId)!;
      expect(verifyDelivery(delivery.body, delivery.headers, endpoint.secret)).toMatchObject({
        eventId,
        eventType: 'ping',
        subject: `ping:${eventId}`,
        data: { endpointId: endpoint.endpointId },
      });
      expect(() =>
        verifyDelivery(delivery.body, delivery.headers, `whsec_${btoa('another secret of 32 bytes here!')}`),
      ).toThrow();
      const deleted = await fetch(new URL(`/events/endpoints/${endpoint.endpointId}`, served.url), {
        method: 'DELETE',
        headers: auth,
      });
      expect(deleted.status).toBe(204);
    } finally {
      receiver.close();
    }
  });

  it('an example exits 1 when an answer is not the expected one', async () => {
    // The live example against the test Worker: its fake provider is not there.
    const { code, output } = await runExample('try-live.mjs', {
      BASE_URL: served.url.origin,
      FAKE_URL: 'http://127.0.0.1:9',
    });
    expect(code, output).toBe(1);
    // Refused for the reason given, not crashed.
    expect(output).toContain('✘ try:live: unexpected answer: a live DDC page');
  });
});

describe('the live examples against the live Worker and the fake provider', () => {
  let fake: LocalWorker;
  let live: LocalWorker;
  beforeAll(async () => {
    fake = await startFakeProvider({ root: process.cwd(), quiet: true });
    live = await startLocalWorker({
      root: process.cwd(),
      quiet: true,
      env: 'live',
      vars: { THREEDS_SERVER_URL: fake.url.origin },
    });
  }, 120_000);
  afterAll(async () => {
    await live?.stop();
    await fake?.stop();
  });

  it.each(['try-live.mjs', 'try-app.ts'])('%s exits 0', async (script) => {
    const { code, output } = await runExample(script, {
      BASE_URL: live.url.origin,
      FAKE_URL: fake.url.origin,
    });
    expect(code, output).toBe(0);
    expect(output).toContain('every answer as expected');
    if (script === 'try-app.ts') expect(output).toContain('a live Worker: the fake provider at');
    expectCardNumbersMasked(script, output);
  });
});

/**
 * What an example prints masks card numbers, as the service's own log lines do: no run of 13 to 19
 * digits standing on its own (as a number in JSON or text is). Digits inside a longer token, such
 * as a hex handle or base64, are not a card number printed: a 64-character hex handle holds 13
 * digits in a row about one time in seven.
 */
function expectCardNumbersMasked(script: string, output: string): void {
  expect(output, `${script} printed a card number`).not.toMatch(/(?<![\w+/=-])\d{13,19}(?![\w+/=-])/);
}
