import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { launchChromium } from './chromium';

/**
 * The demo checkout at /demo of the live Worker built with it (`npm run start:live`), in Chromium, driven as a shopper would,
 * against the fake 3DS Server provider (docs/fake-3ds-server.md) served on its own port: the
 * DDC page runs the ACS's 3DS Method in its hidden frame and posts the browser's facts, the
 * challenge frame goes on to the fake ACS's page, and the fake says what it saw (its
 * `/_fake/transactions` route). Nothing may load from a third origin, and no page of the flow
 * may break its Content Security Policy.
 */

type Json = Record<string, any>;

let fake: LocalWorker;
let live: LocalWorker;
let browser: Browser;
/** The fake's sample cards, by label, as /demo/config gives them. */
const cards = new Map<string, string>();

beforeAll(async () => {
  fake = await startFakeProvider({ root: process.cwd(), quiet: true });
  [live, browser] = await Promise.all([
    // The live Worker (src/live.ts, [env.live]) built with the demo, as `npm run start:live` serves it.
    startLocalWorker({
      root: process.cwd(),
      quiet: true,
      env: 'live',
      demo: true,
      vars: { THREEDS_SERVER_URL: fake.url.origin },
    }),
    launchChromium(),
  ]);
  const config = (await (await fetch(new URL('/demo/config', live.url))).json()) as Json;
  expect(config.environment).toBe('live');
  for (const c of config.liveCards as { label: string; cardNumber: string }[]) cards.set(c.label, c.cardNumber);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await live?.stop();
  await fake?.stop();
});

/** A card of the fake's grid, named by its sample button's label; its last four digits checked. */
function sample(label: string, suffix: string): string {
  const number = cards.get(label);
  expect(number, label).toMatch(new RegExp(`^\\d{12,15}${suffix}$`));
  return number!;
}

interface Shopper {
  context: BrowserContext;
  page: Page;
  /** Every request of the page and its frames. */
  requests: { method: string; url: string; postData: string | null }[];
  /** Console messages about the Content Security Policy, from any frame. */
  csp: string[];
  /** Uncaught script errors of the page. */
  errors: string[];
}

/**
 * A shopper's browser: a zone, a language and a screen of their own, so that the facts the DDC
 * page's script reports are this browser's, not anyone's defaults. `on` another browser (one
 * launched without a locale), with that browser's own language.
 */
async function openDemo(on?: Browser, options: { posix?: boolean } = {}): Promise<Shopper> {
  const context = await (on ?? browser).newContext({
    viewport: { width: 900, height: 1100 },
    screen: { width: 1366, height: 768 },
    timezoneId: 'Asia/Kolkata', // UTC+5:30 all year: getTimezoneOffset() is -330
    ...(on ? {} : { locale: 'da-DK' }),
  });
  if (options.posix) await asPosixBrowser(context);
  const page = await context.newPage();
  const shopper: Shopper = { context, page, requests: [], csp: [], errors: [] };
  page.on('request', (r) => shopper.requests.push({ method: r.method(), url: r.url(), postData: r.postData() }));
  page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) shopper.csp.push(`${m.location().url}: ${m.text()}`);
  });
  page.on('pageerror', (e) => shopper.errors.push(String(e)));
  const response = await page.goto(new URL('/demo', live.url).href);
  expect(response!.status()).toBe(200);
  // The page's static samples are the test ones: wait until the live config replaced them (its
  // fetch may land after the page shows, on a busy machine).
  await page.waitForFunction(() => document.getElementById('environment')?.textContent?.includes('live'));
  await page.waitForFunction(() => document.querySelectorAll('#samples button[data-card]').length > 0);
  expect(await page.textContent('#environment')).toContain('live');
  return shopper;
}

/**
 * Makes every frame of the context the browser of a machine without a locale, whatever the
 * environment running the test has (Chromium's own answer varies with it: `en-US@posix` under
 * `LANG=C` on some machines, `en-US` on others): `navigator.language` is `en-US@posix`, and no
 * request carries an Accept-Language header.
 */
async function asPosixBrowser(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'language', { get: () => 'en-US@posix', configurable: true });
    Object.defineProperty(Navigator.prototype, 'languages', { get: () => ['en-US@posix'], configurable: true });
  });
  await context.route('**/*', async (route) => {
    const headers = { ...route.request().headers() };
    delete headers['accept-language'];
    await route.continue({ headers });
  });
}

/** Picks a sample card by its button, as a shopper would, and waits for the BIN answer. */
async function pickCard(page: Page, number: string): Promise<void> {
  await page.click(`#samples button[data-card="${number}"]`);
  await page.waitForFunction(() => (document.getElementById('bin')!.textContent ?? '').includes('BIN'));
  expect((await page.inputValue('#card')).replace(/\D/g, '')).toBe(number);
}

async function outcome(page: Page): Promise<{ outcome: string; result: Json }> {
  await page.waitForFunction(() => !document.getElementById('result-box')!.hidden, undefined, { timeout: 60_000 });
  return { outcome: (await page.textContent('#outcome'))!, result: JSON.parse((await page.textContent('#result'))!) };
}

/** The threeDSServerTransID the DDC page's frame posted to the fake's 3DS Method. */
function methodTransId(shopper: Shopper): string {
  const posts = shopper.requests.filter(
    (r) => r.method === 'POST' && new URL(r.url).origin === fake.url.origin && r.url.includes('/acs/method'),
  );
  expect(posts, 'POSTs to the fake ACS 3DS Method').toHaveLength(1);
  const data = new URLSearchParams(posts[0]!.postData ?? '').get('threeDSMethodData') ?? '';
  const decoded = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as Json;
  expect(decoded.threeDSMethodNotificationURL).toMatch(new RegExp(`^${live.url.origin}/3ds/method/`));
  expect(decoded.threeDSServerTransID).toMatch(/^[0-9a-f-]{36}$/);
  return decoded.threeDSServerTransID as string;
}

/** All the fake knows of a transaction. */
async function fakeSaw(threeDSServerTransID: string): Promise<Json> {
  const response = await fetch(new URL(`/_fake/transactions/${threeDSServerTransID}`, fake.url));
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** What every flow must hold to: two origins only, no CSP violation, no script error. */
function expectClean(shopper: Shopper): void {
  const allowed = new Set([live.url.origin, fake.url.origin]);
  const outside = shopper.requests.map((r) => r.url).filter((u) => !allowed.has(new URL(u).origin));
  expect(outside, 'requests to a third origin').toEqual([]);
  expect(shopper.csp, 'Content Security Policy violations').toEqual([]);
  expect(shopper.errors, 'script errors').toEqual([]);
}

/** The challenge frame once it shows the fake ACS's page (the relay has posted the CReq there). */
async function acsChallenge(shopper: Shopper) {
  const { page } = shopper;
  const frame = page.frameLocator('#challenge-frame');
  await frame.locator('#code').waitFor({ timeout: 30_000 });
  const url = page.frame({ name: 'challenge' })!.url();
  expect(url).toBe(`${fake.url.origin}/acs/challenge`);
  expect(await frame.locator('body').textContent()).toContain('1234');
  // The relay page of the service posted the CReq to the ACS, in the frame.
  const relayed = shopper.requests.filter((r) => r.method === 'POST' && r.url === url);
  expect(relayed).toHaveLength(1);
  const form = new URLSearchParams(relayed[0]!.postData ?? '');
  expect(form.get('creq')).toMatch(/^[\w-]+$/); // base64url without padding
  expect(form.get('threeDSSessionData')).toBeTruthy();
  return frame;
}

describe('the demo checkout in live, against the fake 3DS Server provider', () => {
  it('runs a frictionless flow whose 3DS Method completes in the browser, with the browser facts in the AReq', async () => {
    const shopper = await openDemo();
    const { page } = shopper;
    const number = sample('frictionless, 3DS Method completes', '2000');
    await pickCard(page, number);
    await page.click('#pay');
    const { outcome: shown, result } = await outcome(page);
    expect(shown).toBe('authenticated');
    expect(result).toMatchObject({
      outcome: 'authenticated',
      status: 'Y',
      authentication: {
        version: '2.2.0',
        eci: '05',
        authenticationValue: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/),
      },
    });

    // The method ran in this browser: the fake's ACS saw it invoked and completed.
    const id = methodTransId(shopper);
    const saw = await fakeSaw(id);
    expect(saw.acctNumber).toBe(number);
    expect(saw.method).toMatchObject({ offered: true, invokedAt: expect.any(Number), completedAt: expect.any(Number) });
    // The ACS's notification went back to the service from the hidden frame.
    expect(
      shopper.requests.some((r) => r.method === 'POST' && r.url.startsWith(`${live.url.origin}/3ds/method/`)),
    ).toBe(true);
    const browserFacts = await page.evaluate(() => ({
      width: String(screen.width),
      height: String(screen.height),
      tz: String(new Date().getTimezoneOffset()),
      language: navigator.language,
      colorDepth: screen.colorDepth,
    }));
    expect(browserFacts).toMatchObject({ width: '1366', height: '768', tz: '-330' });
    expect(saw.areq).toMatchObject({
      messageVersion: '2.2.0',
      threeDSCompInd: 'Y',
      browserScreenWidth: browserFacts.width,
      browserScreenHeight: browserFacts.height,
      browserTZ: browserFacts.tz,
      browserLanguage: browserFacts.language,
      browserJavascriptEnabled: true,
    });
    // The facts came from the DDC page's script, posted to the facts route.
    expect(
      shopper.requests.some((r) => r.method === 'POST' && r.url.startsWith(`${live.url.origin}/3ds/ddc/facts/`)),
    ).toBe(true);
    expect(saw.authCalls).toBe(1);
    expect(result.authentication.authenticationValue).toBe(saw.ares.authenticationValue);
    expect(result.authentication.transactionId).toBe(saw.ares.dsTransID);
    expect(await page.locator('#challenge-frame').count()).toBe(0);
    expectClean(shopper);
    await shopper.context.close();
  }, 90_000);

  it('runs a subscription in live: a Mastercard first payment with recurring, then a 3RI renewal the fake ACS checks', async () => {
    const shopper = await openDemo();
    const { page } = shopper;
    const number = sample("Mastercard, frictionless (subscriptions: recurring 3RI is Mastercard's)", '2000');
    await pickCard(page, number);
    await page.check('#subscribe');
    await page.click('#pay');
    const { outcome: shown, result } = await outcome(page);
    expect(shown).toBe('authenticated');
    expect(await fakeSaw(methodTransId(shopper))).toMatchObject({ areq: { threeDSRequestorAuthenticationInd: '02' } });
    await page.locator('#renewals').waitFor({ state: 'visible' });
    await page.click('#renew');
    const item = page.locator('#renewals-list li').first();
    await item.waitFor();
    expect(await item.getAttribute('data-outcome')).toBe('authenticated');
    expect(await item.textContent()).toContain('ECI 07');
    expect(result.acsTransactionId).toEqual(expect.any(String));
    expectClean(shopper);
    await shopper.context.close();
  }, 90_000);

  it('completes in a Chromium launched without a locale (navigator.language en-US@posix, no Accept-Language): the AReq says en-US', async () => {
    // The POSIX locale, as on a bare container or CI machine: Chromium reports en-US@posix.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        (e): e is [string, string] => e[1] !== undefined && e[0] !== 'LANGUAGE' && !e[0].startsWith('LC_'),
      ),
    );
    const bare = await launchChromium([], { env: { ...env, LANG: 'C', LC_ALL: 'C' } });
    try {
      const shopper = await openDemo(bare, { posix: true });
      const { page } = shopper;
      const number = sample('frictionless, 3DS Method completes', '2000');
      await pickCard(page, number);
      await page.click('#pay');
      const { outcome: shown, result } = await outcome(page);
      expect(shown).toBe('authenticated');
      expect(result).toMatchObject({ outcome: 'authenticated', status: 'Y', authentication: { version: '2.2.0' } });
      const saw = await fakeSaw(methodTransId(shopper));
      expect(saw.areq.browserLanguage).toBe('en-US');
      expectClean(shopper);
      await shopper.context.close();
    } finally {
      await bare.close();
    }
  }, 90_000);

  it('runs a frictionless flow whose 3DS Method never completes: the DDC page gives up in time, threeDSCompInd N', async () => {
    const shopper = await openDemo();
    const { page } = shopper;
    await pickCard(page, sample('frictionless, 3DS Method times out', '2200'));
    const clicked = Date.now();
    await page.click('#pay');
    // The DDC page tells the checkout it is done without the method: the checkout's own 10 s wait
    // for it (demo.js) would otherwise end in an error instead of authenticating.
    await page.waitForFunction(() => document.getElementById('status')!.textContent === 'authenticating', undefined, {
      timeout: 30_000,
    });
    const toldAfter = Date.now() - clicked;
    const { outcome: shown, result } = await outcome(page);
    expect(shown).toBe('authenticated');
    expect(result).toMatchObject({ status: 'Y', authentication: { version: '2.2.0', eci: '05' } });
    // It waited for the method (its ~7 s) rather than telling at once.
    expect(toldAfter).toBeGreaterThan(6_000);
    const saw = await fakeSaw(methodTransId(shopper));
    expect(saw.method).toMatchObject({ offered: true, invokedAt: expect.any(Number) });
    expect(saw.method.completedAt).toBeUndefined();
    expect(saw.areq.threeDSCompInd).toBe('N');
    expect(
      shopper.requests.some((r) => r.method === 'POST' && r.url.startsWith(`${live.url.origin}/3ds/method/`)),
    ).toBe(false);
    expectClean(shopper);
    await shopper.context.close();
  }, 90_000);

  it("runs a challenge through the fake ACS's page: the right code, back to the merchant, authenticated", async () => {
    const shopper = await openDemo();
    const { page } = shopper;
    await pickCard(page, sample('challenge (code 1234)', '2072'));
    await page.click('#pay');
    const frame = await acsChallenge(shopper);
    await frame.locator('#code').fill('1234');
    await frame.locator('button[value=submit]').click();
    const { outcome: shown, result } = await outcome(page);
    expect(shown).toBe('authenticated');
    expect(result).toMatchObject({ outcome: 'authenticated', authentication: { eci: '05' } });
    // The ACS posted the CRes to the service, whose page returned to the merchant.
    const posts = shopper.requests.filter((r) => r.method === 'POST').map((r) => new URL(r.url));
    expect(posts.some((u) => u.origin === live.url.origin && u.pathname.startsWith('/3ds/challenge/notify/'))).toBe(
      true,
    );
    expect(posts.some((u) => u.href === `${live.url.origin}/demo/merchant/return`)).toBe(true);
    const saw = await fakeSaw(methodTransId(shopper));
    expect(saw.areq.threeDSCompInd).toBe('Y');
    expect(saw.challenge).toMatchObject({ creqAt: expect.any(Number), endedAt: expect.any(Number), wrongCodes: 0 });
    expect(saw.rreq).toMatchObject({ transStatus: 'Y', eci: '05' });
    expect(result.authentication.authenticationValue).toBe(saw.rreq.authenticationValue);
    // The frame is gone once the checkout has the result.
    expect(await page.locator('#challenge-frame').count()).toBe(0);
    expectClean(shopper);
    await shopper.context.close();
  }, 90_000);

  it("ends as authenticationFailed when the cardholder presses Cancel on the fake ACS's page", async () => {
    const shopper = await openDemo();
    const { page } = shopper;
    await pickCard(page, sample('challenge (code 1234)', '2072'));
    await page.click('#pay');
    const frame = await acsChallenge(shopper);
    await frame.locator('button[value=cancel]').click();
    const { outcome: shown, result } = await outcome(page);
    expect(shown).toBe('authenticationFailed');
    expect(result.outcome).toBe('authenticationFailed');
    expect(
      shopper.requests.some((r) => r.method === 'POST' && r.url === `${live.url.origin}/demo/merchant/return`),
    ).toBe(true);
    const saw = await fakeSaw(methodTransId(shopper));
    expect(saw.rreq).toMatchObject({ transStatus: 'N', challengeCancel: '01' });
    expectClean(shopper);
    await shopper.context.close();
  }, 90_000);
});
