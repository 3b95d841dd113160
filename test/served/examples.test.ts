import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { startMiniflare, type Served } from './served-worker';

/**
 * The README's end-to-end examples (`npm run try:bin`, `try:tokens`, `try:3ds`, `try:live`:
 * examples/*.mjs) run as a merchant runs them, against a served Worker on a real port: each must
 * exit 0, so that they cannot rot. try:live runs against the live Worker (src/live.ts) pointed at
 * the fake 3DS Server provider on its own port, as `npm run start:live` serves them.
 */

function runExample(script: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [`examples/${script}`],
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

  it.each(['try-bin.mjs', 'try-tokens.mjs', 'try-3ds.mjs'])('%s exits 0', async (script) => {
    const { code, output } = await runExample(script, { BASE_URL: served.url.origin });
    expect(code, output).toBe(0);
    expect(output).toContain('every answer as expected');
    expectCardNumbersMasked(script, output);
  });

  it("the README's events calls: try-3ds.mjs's transactions are in the merchant's event log, and a ping is accepted", async () => {
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
    const ping = await fetch(new URL('/events/ping', served.url), { method: 'POST', headers: auth });
    expect(ping.status).toBe(202);
    expect(((await ping.json()) as { eventId: string }).eventId).toMatch(/^evt_ping_/);
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

describe('the live example against the live Worker and the fake provider', () => {
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

  it('try-live.mjs exits 0', async () => {
    const { code, output } = await runExample('try-live.mjs', {
      BASE_URL: live.url.origin,
      FAKE_URL: fake.url.origin,
    });
    expect(code, output).toBe(0);
    expect(output).toContain('every answer as expected');
    expectCardNumbersMasked('try-live.mjs', output);
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
