import { mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { launchChromium } from './chromium';

/**
 * The demo checkout at /demo in Chromium, driven as a shopper would: the BIN answer while typing
 * (binLookup with the publishable key, from the page), then a frictionless and a challenged 3DS
 * flow end to end; saved cards, events, and an event endpoint on a receiver of the test's own. The
 * challenged run takes the screenshot the README shows: written to public/demo/checkout.png when
 * UPDATE_SCREENSHOTS=1, else to the temporary directory.
 */

let worker: LocalWorker;
let live: LocalWorker;
let browser: Browser;
const outside: string[] = [];

beforeAll(async () => {
  [worker, live] = await Promise.all([
    startLocalWorker({ root: process.cwd(), quiet: true }),
    // The test Worker with ENVIRONMENT=live (a provider URL, else every request is a 503): no demo.
    startLocalWorker({
      root: process.cwd(),
      quiet: true,
      vars: { ENVIRONMENT: 'live', THREEDS_SERVER_URL: 'https://provider.invalid' },
    }),
  ]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await live?.stop();
});

async function openDemo(viewport = { width: 900, height: 1100 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.on('request', (r) => {
    if (new URL(r.url()).origin !== worker.url.origin) outside.push(r.url());
  });
  const response = await page.goto(new URL('/demo', worker.url).href);
  expect(response!.status()).toBe(200);
  expect(response!.headers()['content-security-policy']).toMatch(/^default-src 'self'/);
  await page.locator('#name option').first().waitFor({ state: 'attached' });
  return page;
}

async function typeCard(page: Page, number: string): Promise<string> {
  await page.fill('#card', '');
  await page.locator('#card').pressSequentially(number, { delay: 15 });
  // The answer for this card's own prefix (an earlier, shorter prefix's answer may come first).
  await page.waitForFunction((n) => {
    const answer = document.getElementById('bin')!.dataset.answer;
    return (
      answer !== undefined &&
      n.startsWith((JSON.parse(answer) as { bin?: string }).bin ?? '-') &&
      document.getElementById('bin')!.textContent.includes('BIN')
    );
  }, number);
  return (await page.textContent('#bin'))!;
}

async function outcome(page: Page): Promise<string> {
  await page.waitForFunction(() => !document.getElementById('result-box')!.hidden, undefined, { timeout: 20_000 });
  return (await page.textContent('#outcome'))!;
}

/** The demo's events list item of this type about this transaction or token, refreshing until it is there. */
async function shownEvent(page: Page, eventType: string, about: string) {
  const item = page.locator(`#events-list li[data-event-type="${eventType}"][data-about="${about}"]`);
  await expect
    .poll(async () => {
      await page.click('#events-refresh');
      return item.count();
    })
    .toBe(1);
  return item;
}

describe('the demo checkout', () => {
  it('shows the BIN answer as the cardholder types, from the lookup by prefix', async () => {
    const page = await openDemo();
    await typeCard(page, '4571736000000000');
    // A shorter prefix's answer (no issuer yet) may show before the longer one's: wait for the issuer.
    await page.waitForFunction(() => document.getElementById('bin')!.textContent.includes('Jyske Bank'));
    const shown = (await page.textContent('#bin'))!;
    expect(shown).toContain('visa + dankort');
    expect(shown).toContain('Jyske Bank');
    expect(shown).toContain('DK');
    const amex = await typeCard(page, '341142000000008');
    expect(amex).toContain('amex');
    expect(amex).toContain('AMERICAN EXPRESS');
    await page.close();
  });

  it('runs a frictionless 3DS flow to authenticated', async () => {
    const page = await openDemo();
    await typeCard(page, '4571736000000000');
    await page.selectOption('#name', '3ds2-frictionless-identified');
    await page.click('#pay');
    expect(await outcome(page)).toBe('authenticated');
    const result = JSON.parse((await page.textContent('#result'))!);
    expect(result).toMatchObject({ status: 'Y', enrolled: 'Y', authentication: { eci: '05' } });
    expect(await page.locator('#challenge-frame').count()).toBe(0);
    // Its event, as the merchant's event log has it (GET /events, through the demo merchant's server).
    const event = await shownEvent(page, 'threeDS.authentication.completed', result.transactionReference as string);
    expect(await event.textContent()).toContain(
      'threeDS.authentication.completed authenticated (no endpoint configured)',
    );
    await page.close();
  });

  it('runs a subscription: the first payment sets up the series, renewals are 3RI until its amount is used', async () => {
    const page = await openDemo();
    await typeCard(page, '5312650000000004');
    await page.selectOption('#name', '3ds2-frictionless-identified');
    await page.check('#subscribe');
    await page.click('#pay');
    expect(await outcome(page)).toBe('authenticated');
    const first = JSON.parse((await page.textContent('#result'))!) as { transactionReference: string };
    await page.locator('#renewals').waitFor({ state: 'visible' });
    expect(await page.textContent('#renewal-prior')).toBe(first.transactionReference);
    // Five renewals of £9.99 fit in the first payment's £49.99; the sixth is refused before any AReq.
    for (let n = 1; n <= 6; n++) {
      await page.click('#renew');
      await page.waitForFunction((count) => document.querySelectorAll('#renewals-list li').length === count, n);
    }
    const items = page.locator('#renewals-list li');
    for (let n = 0; n < 5; n++) {
      expect(await items.nth(n).getAttribute('data-outcome')).toBe('authenticated');
      expect(await items.nth(n).textContent()).toContain('ECI 07');
    }
    expect(await items.nth(5).getAttribute('data-outcome')).toBe('bodyDoesNotMatchSchema');
    expect(await items.nth(5).textContent()).toContain('$.instruction.value.amount');
    // A renewal's event, as the merchant's event log has it.
    const renewal = (await items.nth(0).textContent())!.split(':')[0]!;
    await shownEvent(page, 'threeDS.authentication.completed', renewal);
    await page.close();
  });

  it('runs a challenged flow in a frame of the chosen size, then verifies', async () => {
    const page = await openDemo();
    await typeCard(page, '4571736000000000');
    await page.selectOption('#name', '3ds2-challenge-identified');
    await page.selectOption('#window', '500x600');
    await page.click('#pay');
    const frame = page.frameLocator('#challenge-frame');
    await frame.locator('#code').waitFor();
    const box = (await page.locator('#challenge-frame').boundingBox())!;
    expect([Math.round(box.width), Math.round(box.height)]).toEqual([502, 602]);
    const dir =
      process.env.UPDATE_SCREENSHOTS === '1'
        ? join(process.cwd(), 'public', 'demo')
        : join(tmpdir(), 'card-edge-screenshots');
    mkdirSync(dir, { recursive: true });
    await frame.locator('#code').fill('1234');
    await page.screenshot({ path: join(dir, 'checkout.png'), fullPage: true });
    await frame.locator('button[value=submit]').click();
    expect(await outcome(page)).toBe('authenticated');
    expect(JSON.parse((await page.textContent('#result'))!)).toMatchObject({
      outcome: 'authenticated',
      authentication: { eci: '05' },
    });
    await page.close();
  });

  it('saves the card as a token, changes it, accepts a conflicting save and deletes it', async () => {
    const page = await openDemo();
    await typeCard(page, '4571736000000000');
    await page.selectOption('#name', '3ds2-frictionless-identified');
    const saved = page.locator('#saved-list li');
    await page.click('#save-card');
    await expect.poll(() => saved.count()).toBe(1);
    expect(await saved.first().textContent()).toContain(
      '457173******0000 · 3ds2-frictionless-identified · expires 12/2035',
    );

    // An update per attribute: the cardholder name, then the expiry date.
    await saved.first().locator('.new-name').fill('Ada King');
    await saved.first().locator('.rename').click();
    await expect.poll(() => saved.first().textContent()).toContain('Ada King · expires 12/2035');
    await saved.first().locator('.extend').click();
    await expect.poll(() => saved.first().textContent()).toContain('expires 12/2036');

    // Saving the card again with other details: a conflict, which the shopper accepts.
    await page.fill('#year', '2036');
    await page.selectOption('#name', '3ds2-challenge-identified');
    await page.click('#save-card');
    await page.locator('#accept-conflict').click();
    await expect.poll(() => saved.first().textContent()).toContain('3ds2-challenge-identified · expires 12/2036');
    expect(await saved.count()).toBe(1);

    const tokenId = await page.evaluate(async () => {
      const listed = await (await fetch('/demo/merchant/cards')).json();
      return listed._embedded.tokens[0].tokenId as string;
    });
    await saved.first().locator('.delete').click();
    await expect.poll(() => saved.count()).toBe(0);
    expect(await page.textContent('#saved-status')).toContain('No saved card yet.');
    // The token's events: each update, and its deletion.
    await shownEvent(page, 'tokens.token.deleted', tokenId);
    expect(await page.locator(`#events-list li[data-about="${tokenId}"]`).count()).toBeGreaterThanOrEqual(2);
    await page.close();
  });

  it('adds an event endpoint, shows its secret once, pings it and shows the delivery, then deletes it', async () => {
    // A merchant's receiver on this machine: verifies each delivery's signature with the secret the page showed.
    let secret = '';
    const received: { headers: IncomingHttpHeaders; body: string; verified: boolean }[] = [];
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = false;
        try {
          new Webhook(secret).verify(body, request.headers as Record<string, string>);
          verified = true;
        } catch {
          // not signed with the secret: a 400, which the delivery's history shows
        }
        received.push({ headers: request.headers, body, verified });
        response.writeHead(verified ? 200 : 400).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    let endpointId = '';
    try {
      const page = await openDemo();
      expect(await page.inputValue('#endpoint-url')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
      await page.fill('#endpoint-url', url);
      await page.click('#endpoint-create');
      await page.locator('#endpoint-secret').waitFor();
      secret = (await page.textContent('#endpoint-secret-value'))!;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(await page.textContent('#endpoint-secret')).toContain('shown once');
      const item = page.locator('#endpoints-list li').filter({ hasText: url });
      await expect.poll(() => item.count()).toBe(1);
      endpointId = (await item.getAttribute('data-endpoint-id'))!;
      expect(endpointId).toMatch(/^ep_[a-z2-7]{26}$/);
      expect(await item.textContent()).toContain(`${url} · enabled · all events`);

      // Shown once: not kept anywhere, so a reload lists the endpoint without its secret.
      await page.reload();
      await expect.poll(() => item.count()).toBe(1);
      expect(await page.locator('#endpoint-secret').isHidden()).toBe(true);
      expect(await page.content()).not.toContain(secret);
      const stored = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
      expect(stored).not.toContain(secret);

      // A ping: delivered, signed with that secret, and its attempt shown under the endpoint.
      await item.locator('.ping').click();
      const delivery = item.locator('.ping-result .delivery');
      await expect.poll(() => delivery.getAttribute('data-state'), { timeout: 15_000 }).toBe('delivered');
      const attempt = delivery.locator('.attempt[data-status="200"]');
      expect(await attempt.count()).toBe(1);
      expect(await attempt.textContent()).toMatch(/^\d\d:\d\d:\d\d · HTTP 200 · \d+ ms$/);
      const eventId = (await item.locator('.ping-result').getAttribute('data-event-id'))!;
      const ping = received.find((r) => r.headers['webhook-id'] === eventId);
      expect(ping?.verified).toBe(true);
      expect(JSON.parse(ping!.body)).toMatchObject({ eventId, eventType: 'ping', data: { endpointId } });

      // The demo merchant's server puts only ids of the right form into the API's paths.
      for (const path of ['endpoints/ep_nope/ping', 'endpoints/..%2Fevents/delete']) {
        const response = await fetch(new URL(`/demo/merchant/${path}`, worker.url), { method: 'POST' });
        expect(response.status, path).toBe(404);
      }

      await item.locator('.delete').click();
      await expect.poll(() => item.count()).toBe(0);
      expect(await page.textContent('#endpoints-status')).toContain(`Endpoint ${endpointId} deleted.`);
      endpointId = '';
      await page.close();
    } finally {
      // The demo merchant has at most 10 endpoints: a failed run leaves none behind.
      if (endpointId !== '')
        await fetch(new URL(`/demo/merchant/endpoints/${endpointId}/delete`, worker.url), { method: 'POST' });
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('fits a 390 px wide phone screen: nothing wider than the screen, the selects and the challenge frame included', async () => {
    const page = await openDemo({ width: 390, height: 844 });
    /** How far the page scrolls sideways, and every control or frame that does not fit the screen. */
    const overflow = () =>
      page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        outside: Array.from(document.querySelectorAll('main, form, input, select, button, iframe:not(.ddc), pre, #bin'))
          .map((e) => ({ e: e.id || e.tagName.toLowerCase(), box: e.getBoundingClientRect() }))
          .filter(({ box }) => box.width > 0 && (box.left < 0 || box.right > window.innerWidth))
          .map(({ e, box }) => `${e}: ${Math.round(box.left)}..${Math.round(box.right)}`),
      }));
    expect(await overflow()).toEqual({ scrollWidth: 390, outside: [] });
    // The longest cardholder option chosen, a card's BIN answer shown: still nothing wider.
    const longest = await page.$$eval('#name option', (options) =>
      options.map((o) => (o as HTMLOptionElement).value).sort((a, b) => b.length - a.length),
    );
    await page.selectOption('#name', longest[0]!);
    await typeCard(page, '4571736000000000');
    expect(await overflow()).toEqual({ scrollWidth: 390, outside: [] });
    // The challenge in its default 390x400 window, on a screen of 390 px.
    await page.selectOption('#name', '3ds2-challenge-identified');
    await page.click('#pay');
    await page.frameLocator('#challenge-frame').locator('#code').waitFor();
    expect(await overflow()).toEqual({ scrollWidth: 390, outside: [] });
    await page.close();
  });

  it('loads nothing from another origin', () => {
    expect(outside).toEqual([]);
  });

  it('does not exist in live', async () => {
    for (const path of ['/demo', '/demo/demo.js', '/demo/config']) {
      const response = await fetch(new URL(path, live.url));
      expect(response.status, path).toBe(404);
    }
  });
});
