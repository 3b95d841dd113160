import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMerchant, type Merchant } from './merchant-server';
import { startLocalWorker, type LocalWorker } from '../../scripts/local-worker';
import { launchChromium } from './chromium';

/**
 * The 3DS browser pages in real headless Chromium (test/browser/chromium.ts): a test
 * merchant's checkout embeds the DDC iframe, calls authenticate from its server, frames the
 * challenge, and receives the challenge's POST to its returnUrl, where it calls verification.
 */

let worker: LocalWorker;
let merchant: Merchant;
let browser: Browser;

beforeAll(async () => {
  worker = await startLocalWorker({ root: process.cwd() });
  merchant = await startMerchant(worker.url);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await merchant?.stop();
  await worker?.stop();
});

async function checkout(name?: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${merchant.url}/checkout${name ? `?name=${encodeURIComponent(name)}` : ''}`);
  return page;
}

async function challengeFrame(page: Page) {
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'challenged');
  const frame = page.frameLocator('#challenge-frame');
  await frame.locator('#code').waitFor();
  return frame;
}

async function outcomeOf(page: Page): Promise<string> {
  await page.waitForFunction(() => (document.getElementById('outcome')?.textContent ?? '') !== '');
  return (await page.textContent('#outcome'))!;
}

describe('3DS in a real browser', () => {
  it('collects device data, challenges, accepts the right code and verifies as authenticated', async () => {
    const page = await checkout('3ds2-challenge-identified');
    const frame = await challengeFrame(page);
    expect(await page.textContent('#status')).toBe('challenged');
    expect(await frame.locator('body').textContent()).toContain('1234');
    await frame.locator('#code').fill('1234');
    await frame.locator('button[value=submit]').click();
    expect(await outcomeOf(page)).toBe('authenticated');
    const posted = merchant.returns.at(-1)!;
    expect(posted.MD).toBe('order-1');
    expect(posted.TransactionId).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(posted.verification).toMatchObject({ outcome: 'authenticated', authentication: { eci: '05' } });
    await page.close();
  });

  it('ends as authenticationFailed after three wrong codes', async () => {
    const page = await checkout();
    const frame = await challengeFrame(page);
    for (const code of ['0000', '1111', '2222']) {
      await frame.locator('#code').fill(code);
      await frame.locator('button[value=submit]').click();
      if (code !== '2222') await expect.poll(() => frame.locator('.error').textContent()).toContain('not right');
    }
    expect(await outcomeOf(page)).toBe('authenticationFailed');
    await page.close();
  });

  it('ends as authenticationFailed on Cancel', async () => {
    const page = await checkout();
    const frame = await challengeFrame(page);
    await frame.locator('button[value=cancel]').click();
    expect(await outcomeOf(page)).toBe('authenticationFailed');
    await page.close();
  });

  it('shows an error page for a reused challenge JWT and leaves the outcome as it was', async () => {
    const page = await checkout();
    const frame = await challengeFrame(page);
    await frame.locator('#code').fill('1234');
    await frame.locator('button[value=submit]').click();
    expect(await outcomeOf(page)).toBe('authenticated');
    const returnsBefore = merchant.returns.length;

    await page.evaluate(() => {
      const w = window as unknown as {
        openChallenge: (jwt: string) => void;
        lastAuthenticate: { challenge: { jwt: string } };
      };
      w.openChallenge(w.lastAuthenticate.challenge.jwt);
    });
    const reopened = page.frameLocator('#challenge-frame');
    await expect.poll(() => reopened.locator('h1').textContent()).toContain('already used');
    expect(await reopened.locator('#code').count()).toBe(0);
    expect(merchant.returns.length).toBe(returnsBefore);
    await page.close();
  });

  it('goes frictionless without a challenge frame for a frictionless test card', async () => {
    const page = await checkout('3ds2-frictionless-identified');
    expect(await outcomeOf(page)).toBe('authenticated');
    expect(await page.locator('#challenge-frame').count()).toBe(0);
    await page.close();
  });
});
