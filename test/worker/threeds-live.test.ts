import { afterEach, describe, expect, it, vi } from 'vitest';
import { burst } from './helpers';
import {
  card,
  claimsOf,
  collectInBrowser,
  creqOf,
  endChallenge,
  expectValidEmv,
  expectValidMessages,
  fake,
  fakeTransaction,
  liveBody,
  liveHarness,
  liveJson,
  livePage,
  liveStep,
  newReference,
  verifyBodyOf,
  type Json,
} from './live-helpers';
import { hiddenField } from './threeds-helpers';

/**
 * Live 3-D Secure end to end against the fake 3DS Server provider (docs/threeds.md "Live"): the
 * service as the 3DS Requestor, every scenario of the fake's grid, the 3DS Method, the challenge
 * relayed to the issuer's ACS, and the result fetched from the provider. The fake checks every
 * AReq against its version's EMV field rules and the threeDSCompInd against what its ACS saw, so
 * an answer here means the AReq was right.
 */

/** The /auth calls the Worker made to the provider. */
const authCalls = (h: ReturnType<typeof liveHarness>): number =>
  h.count((c) => c.store === 'provider' && c.op === 'auth');

describe('live authenticate, frictionless', () => {
  it('runs the 3DS Method on the DDC page and sends threeDSCompInd Y with the browser facts', async () => {
    const h = liveHarness();
    const reference = newReference();
    const pan = card('2000'); // 2.2.0, a 3DS Method that completes, Y
    const { parts, notified } = await collectInBrowser(h, reference, pan);
    expect(parts.message).toMatchObject({ MessageType: 'profile.completed', Status: true });
    expect(parts.method?.data).toEqual({
      threeDSServerTransID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      threeDSMethodNotificationURL: expect.stringMatching(/^https:\/\/edge\.test\/3ds\/method\/[0-9a-f]{64}[\w-]{22}$/),
    });
    expect(notified).toContain('threeDSMethodCompleted');
    const answer = await liveJson(h, 'authenticate', liveBody('2000', { reference }));
    const fakeSaw = await fakeTransaction(parts.method!.data.threeDSServerTransID);
    expect(fakeSaw.areq).toMatchObject({
      messageVersion: '2.2.0',
      threeDSCompInd: 'Y',
      browserScreenWidth: '1440',
      browserScreenHeight: '900',
      browserTZ: '-60',
      browserLanguage: 'en-GB',
      browserIP: '198.51.100.7',
      browserJavascriptEnabled: true,
      purchaseAmount: '250',
      purchaseCurrency: '826',
      purchaseExponent: '2',
      threeDSRequestorChallengeInd: '01',
    });
    expect(answer).toEqual({
      outcome: 'authenticated',
      transactionReference: reference,
      acsTransactionId: fakeSaw.ares.acsTransID,
      status: 'Y',
      enrolled: 'Y',
      authentication: {
        version: '2.2.0',
        eci: '05',
        authenticationValue: fakeSaw.ares.authenticationValue,
        transactionId: fakeSaw.ares.dsTransID,
      },
    });
    // Prepared once, by deviceDataInitialize; one AReq.
    expect(h.count((c) => c.store === 'provider' && c.op === 'preauth')).toBe(1);
    expect(fakeSaw.authCalls).toBe(1);
  });

  it.each([
    ['2100', { outcome: 'authenticated', status: 'Y', enrolled: 'Y' }, { eci: '05' }],
    ['2110', { outcome: 'authenticationFailed', status: 'N', enrolled: 'Y' }, { eci: '07', statusReason: '01' }],
    ['2120', { outcome: 'authenticated', status: 'A', enrolled: 'Y' }, { eci: '06' }],
    ['2130', { outcome: 'authenticationFailed', status: 'R', enrolled: 'Y' }, { eci: '07', statusReason: '11' }],
    ['2140', { outcome: 'authenticated', status: 'I', enrolled: 'Y' }, { eci: '07' }],
    ['2150', { outcome: 'unavailable', status: 'U', enrolled: 'U' }, undefined],
    ['2160', { outcome: 'unavailable', status: 'U', enrolled: 'U' }, undefined],
  ])('card …%s answers %o', async (suffix, expected, authentication) => {
    const h = liveHarness();
    const answer = await liveJson(h, 'authenticate', liveBody(suffix, { browser: true }));
    const saw = await expectValidMessages(h.providerAnswers.find((a) => a.op === 'preauth')!.body.threeDSServerTransID);
    expect(saw.ares ?? saw.lastErro).toBeDefined();
    expect(answer).toMatchObject(expected);
    if (authentication) expect(answer.authentication).toMatchObject({ version: '2.2.0', ...authentication });
    else expect(answer.authentication).toBeUndefined();
    // Authenticated Y and A carry the issuer's value; nothing else invents one.
    expect('authenticationValue' in (answer.authentication ?? {})).toBe(['Y', 'A'].includes(answer.status));
    expect(authCalls(h)).toBe(1);
  });

  it('answers notEnrolled for a card no Directory Server knows, with no AReq', async () => {
    const h = liveHarness();
    const answer = await liveJson(
      h,
      'authenticate',
      liveBody('2100', { browser: true, cardNumber: card('2100', '9000') }),
    );
    expect(answer).toEqual({
      outcome: 'notEnrolled',
      transactionReference: answer.transactionReference,
      enrolled: 'N',
    });
    expect(authCalls(h)).toBe(0);
  });

  it.each([
    ['1100', '2.1.0'],
    ['4100', '2.2.0'],
    ['3100', '2.3.1'],
    ['0100', '2.3.1'],
    ['5100', '2.3.1'],
  ])('card …%s authenticates with EMV %s', async (suffix, version) => {
    const h = liveHarness();
    const answer = await liveJson(h, 'authenticate', liveBody(suffix, { browser: true }));
    expect(answer).toMatchObject({ outcome: 'authenticated', authentication: { version } });
  });

  describe('with an http PUBLIC_BASE_URL (local development)', () => {
    afterEach(() => vi.restoreAllMocks());
    const HTTP_BASE = { PUBLIC_BASE_URL: 'http://localhost:8787' };

    /** The log lines the Worker wrote, parsed. */
    function logged(spy: { mock: { calls: unknown[][] } }): Json[] {
      return spy.mock.calls.map(([line]) => JSON.parse(String(line)) as Json);
    }

    it.each(['0000', '5000'])(
      'authenticates card …%s, whose range offers 2.3.1, with 2.2.0 and says why in a warning',
      async (suffix) => {
        const log = vi.spyOn(console, 'log').mockImplementation(() => {});
        const h = liveHarness(HTTP_BASE);
        const reference = newReference();
        const { parts } = await collectInBrowser(h, reference, card(suffix));
        const answer = await liveJson(h, 'authenticate', liveBody(suffix, { reference }));
        expect(answer).toMatchObject({ outcome: 'authenticated', authentication: { version: '2.2.0' } });
        const areq = (await fakeTransaction(parts.method!.data.threeDSServerTransID)).areq;
        expect(areq.messageVersion).toBe('2.2.0');
        expect(areq.notificationURL).toMatch(/^http:\/\/localhost:8787\/3ds\/challenge\/notify\//);
        const warnings = logged(log).filter((l) => l.event === 'threeds.versionLimited');
        expect(warnings.length).toBeGreaterThanOrEqual(1);
        expect(warnings[0]).toMatchObject({ level: 'warn', chosenVersion: '2.2.0', baseUrl: 'http://localhost:8787' });
        expect(warnings[0]!.message).toContain('PUBLIC_BASE_URL');
      },
    );

    it('answers unavailable for a range of 2.3.1 only, and the warning says why', async () => {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const h = liveHarness(HTTP_BASE);
      const answer = await liveJson(h, 'authenticate', liveBody('3100', { browser: true }));
      expect(answer.outcome).toBe('unavailable');
      expect(authCalls(h)).toBe(0);
      const warnings = logged(log).filter((l) => l.event === 'threeds.versionLimited');
      expect(warnings[0]).toMatchObject({ level: 'warn', chosenVersion: 'none', baseUrl: 'http://localhost:8787' });
      expect(warnings[0]!.message).toContain('https');
    });

    it('runs the 2.2.0 3DS Method of a range that has one per version, and warns of nothing for a 2.2.0 range', async () => {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const h = liveHarness(HTTP_BASE);
      const reference = newReference();
      const { parts } = await collectInBrowser(h, reference, card('6000'));
      expect(parts.method?.url).toMatch(/\/acs\/method\/2\.2\.0$/);
      const answer = await liveJson(h, 'authenticate', liveBody('6000', { reference }));
      expect(answer).toMatchObject({ outcome: 'authenticated', authentication: { version: '2.2.0' } });
      log.mockClear();
      const plain = await liveJson(h, 'authenticate', liveBody('4100', { browser: true }));
      expect(plain).toMatchObject({ outcome: 'authenticated', authentication: { version: '2.2.0' } });
      expect(logged(log).filter((l) => l.event === 'threeds.versionLimited')).toEqual([]);
    });
  });

  it("runs the chosen version's own 3DS Method where each version has its own", async () => {
    const h = liveHarness();
    const reference = newReference();
    const { parts } = await collectInBrowser(h, reference, card('6000'));
    expect(parts.method?.url).toMatch(/\/acs\/method\/2\.3\.1$/);
    const answer = await liveJson(h, 'authenticate', liveBody('6000', { reference }));
    expect(answer).toMatchObject({ outcome: 'authenticated', authentication: { version: '2.3.1' } });
    expect((await fakeTransaction(parts.method!.data.threeDSServerTransID)).areq.threeDSCompInd).toBe('Y');
  });

  it('sends threeDSCompInd N when the method was never started, U when the ACS has none', async () => {
    const h = liveHarness();
    const started = await liveJson(h, 'authenticate', liveBody('2000', { browser: true }));
    expect(started.outcome).toBe('authenticated'); // the fake refuses a wrong threeDSCompInd (Erro 305)
    const none = await liveJson(h, 'authenticate', liveBody('2100', { browser: true }));
    expect(none.outcome).toBe('authenticated');
  });

  it('waits out the 10 s of a method that was started and never completed, then sends N', async () => {
    const h = liveHarness();
    const reference = newReference();
    const { parts, notified } = await collectInBrowser(h, reference, card('2200'));
    expect(parts.method).toBeDefined();
    expect(notified).toBeUndefined();
    const started = Date.now();
    const answer = await liveJson(h, 'authenticate', liveBody('2200', { reference }));
    // The method's window is 10 s from the DDC page: authenticate waited for what was left.
    expect(Date.now() - started).toBeGreaterThan(5_000);
    expect(answer.outcome).toBe('authenticated');
    expect((await fakeTransaction(parts.method!.data.threeDSServerTransID)).areq.threeDSCompInd).toBe('N');
  });

  it('prepares again for another card than deviceDataInitialize had', async () => {
    const h = liveHarness();
    const reference = newReference();
    const { parts } = await collectInBrowser(h, reference, card('2000'), { runMethod: false });
    const answer = await liveJson(h, 'authenticate', liveBody('2110', { reference, browser: true }));
    expect(answer.outcome).toBe('authenticationFailed');
    expect(h.count((c) => c.op === 'preauth')).toBe(2);
    expect((await fakeTransaction(parts.method!.data.threeDSServerTransID)).authCalls).toBe(0);
  });
});

describe('live authenticate, what the merchant must send', () => {
  it('answers 400 with the jsonPaths a valid AReq needs, stores nothing, and takes the corrected request', async () => {
    const h = liveHarness();
    const body = liveBody('2100');
    const refused = await liveJson(h, 'authenticate', body, 400);
    expect(refused.errorName).toBe('bodyDoesNotMatchSchema');
    expect(refused.validationErrors.map((e: Json) => e.jsonPath)).toEqual([
      '$.deviceData.browserJavascriptEnabled',
      '$.deviceData.browserLanguage',
    ]);
    expect(authCalls(h)).toBe(0);
    const corrected = liveBody('2100', { browser: true, reference: body.transactionReference });
    expect((await liveJson(h, 'authenticate', corrected)).outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
  });

  it('takes what the DDC page recorded in place of the browser fields', async () => {
    const h = liveHarness();
    const reference = newReference();
    await collectInBrowser(h, reference, card('2100'));
    expect((await liveJson(h, 'authenticate', liveBody('2100', { reference }))).outcome).toBe('authenticated');
  });

  it.each([
    ['a language that is not a plain tag (headless Chromium without a locale)', 'en-US@posix', 'en-US'],
    ['a POSIX locale', 'de_AT.UTF-8', 'de-AT'],
    ['no language at all: the DDC page request’s Accept-Language', undefined, 'en-GB'],
    ['a language that names none: the Accept-Language', 'C', 'en-GB'],
  ])('takes %s as the browser language, never asking the merchant', async (_, language, sent) => {
    const h = liveHarness();
    const reference = newReference();
    const facts: Json = {
      javascriptEnabled: true,
      javaEnabled: false,
      colorDepth: 24,
      screenHeight: 900,
      screenWidth: 1440,
      timeZone: -60,
      ...(language !== undefined ? { language } : {}),
    };
    const { parts } = await collectInBrowser(h, reference, card('2000'), { facts });
    const answer = await liveJson(h, 'authenticate', liveBody('2000', { reference }));
    expect(answer.outcome).toBe('authenticated');
    const areq = (await fakeTransaction(parts.method!.data.threeDSServerTransID)).areq;
    expect(areq.browserLanguage).toBe(sent);
  });

  it('refuses a cardholder name EMV does not take, naming it', async () => {
    const h = liveHarness();
    const refused = await liveJson(
      h,
      'authenticate',
      liveBody('2100', { browser: true, cardHolderName: 'Zoë Ünal' }),
      400,
    );
    expect(refused.validationErrors).toEqual([
      expect.objectContaining({
        jsonPath: '$.instruction.paymentInstrument.cardHolderName',
        errorName: 'fieldHasInvalidValue',
      }),
    ]);
  });
});

describe('live authenticate, one AReq per transaction', () => {
  it('answers a burst of 20 identical requests with one answer from one AReq', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    const answers = await burst(20, () => liveStep(h, 'authenticate', body).then((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.outcome).toBe('authenticated');
    expect(authCalls(h)).toBe(1);
    expect(h.count((c) => c.op === 'preauth')).toBe(1);
  });

  it('answers another body under the same reference unavailable, and keeps the first answer', async () => {
    const h = liveHarness();
    const body = liveBody('2100', { browser: true });
    const first = await liveJson(h, 'authenticate', body);
    const other = await liveJson(h, 'authenticate', {
      ...body,
      instruction: { ...body.instruction, value: { amount: 999, currency: 'GBP' } },
    });
    expect(other).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
    expect(await liveJson(h, 'authenticate', body)).toEqual(first);
    expect(authCalls(h)).toBe(1);
  });
});

describe('live challenge', () => {
  async function challenged(h: ReturnType<typeof liveHarness>, suffix = '2172') {
    const body = liveBody(suffix, { browser: true, windowSize: '500x600' });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer.outcome).toBe('challenged');
    return { body, answer };
  }

  it('answers challenged with a CReq for the ACS and a JWT that lives 30 s', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    const creq = creqOf(answer);
    expect(creq).toEqual({
      threeDSServerTransID: expect.any(String),
      acsTransID: expect.any(String),
      messageVersion: '2.2.0',
      messageType: 'CReq',
      challengeWindowSize: '03',
    });
    expect(answer.challenge.payload).not.toMatch(/[=+/]/);
    const claims = claimsOf(answer.challenge.jwt);
    expect(claims.exp - claims.iat).toBe(30);
    expect(claims.Payload).toEqual({
      ACSUrl: 'https://fake-3ds-server.test/acs/challenge',
      Payload: answer.challenge.payload,
      TransactionId: answer.challenge.reference,
    });
    expect(claims.ReturnUrl).toBe(body.challenge.returnUrl);
    const areq = (await fakeTransaction(creq.threeDSServerTransID)).areq;
    // The handle is base64url throughout: the object id's 64 hex digits, then 22 of MAC.
    expect(areq.notificationURL).toMatch(/^https:\/\/edge\.test\/3ds\/challenge\/notify\/[0-9a-f]{64}[\w-]{22}$/);
  });

  it('relays the CReq to the ACS, takes the result from the provider, returns to the merchant and verifies', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    const relay = await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt, MD: 'order-42' });
    expect(relay.status).toBe(200);
    const csp = relay.headers.get('Content-Security-Policy')!;
    expect(csp).toContain('form-action');
    expect(csp).toMatch(/form-action 'self' https: https:\/\/fake-3ds-server\.test/);
    const html = await relay.text();
    expect(html).toContain('action="https://fake-3ds-server.test/acs/challenge"');
    expect(hiddenField(html, 'creq')).toBe(answer.challenge.payload);
    const sessionData = hiddenField(html, 'threeDSSessionData')!;
    // EMV and the provider take 1 to 1024 base64url characters, nothing else (no '.').
    expect(sessionData).toMatch(/^[A-Za-z0-9_-]{1,1024}$/);
    // The fake ACS, which refuses any other threeDSSessionData, takes the relay's post.
    const atAcs = await fake('/acs/challenge', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ creq: hiddenField(html, 'creq')!, threeDSSessionData: sessionData }).toString(),
    });
    expect(atAcs.status, await atAcs.clone().text()).toBe(200);
    expect((await fakeTransaction(creqOf(answer).threeDSServerTransID)).challenge.threeDSSessionData).toBe(sessionData);

    const ended = await endChallenge(h, answer, 'Y');
    expect(ended.status).toBe(200);
    expect(ended.html).toContain('Payment verified');
    expect(ended.html).toContain(`action="${body.challenge.returnUrl}"`);
    expect(hiddenField(ended.html, 'TransactionId')).toBe(answer.challenge.reference);
    expect(hiddenField(ended.html, 'MD')).toBe('order-42');

    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    const saw = await expectValidMessages(creqOf(answer).threeDSServerTransID);
    expect(saw.rreq.transStatus).toBe('Y');
    expectValidEmv('CReq', creqOf(answer));
    expect(verified).toEqual({
      outcome: 'authenticated',
      transactionReference: body.transactionReference,
      acsTransactionId: ended.rreq.acsTransID,
      status: 'Y',
      enrolled: 'Y',
      authentication: {
        version: '2.2.0',
        eci: '05',
        authenticationValue: ended.rreq.authenticationValue,
        transactionId: ended.rreq.dsTransID,
      },
    });
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(verified);
    expect(h.count((c) => c.op === 'postauth')).toBe(1);
  });

  it.each([
    ['N', { outcome: 'authenticationFailed', status: 'N' }, { statusReason: '01' }],
    ['cancel', { outcome: 'authenticationFailed', status: 'N' }, { cancellationIndicator: '01' }],
    ['timeout', { outcome: 'authenticationFailed', status: 'N' }, { cancellationIndicator: '04' }],
  ] as const)('a challenge ended %s verifies as %o', async (result, expected, detail) => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt });
    const ended = await endChallenge(h, answer, result);
    expect(ended.html).toContain('Payment not verified');
    await expectValidMessages(creqOf(answer).threeDSServerTransID);
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified).toMatchObject(expected);
    expect(verified.authentication).toMatchObject({ eci: '07', ...detail });
  });

  it("trusts the provider's RReq, not the browser's cres", async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    const creq = creqOf(answer);
    const forged = btoa(JSON.stringify({ ...creq, messageType: 'CRes', transStatus: 'Y' }));
    const ended = await endChallenge(h, answer, 'N', { cres: forged });
    expect(ended.html).toContain('Payment not verified');
    expect((await liveJson(h, 'verification', verifyBodyOf(body, answer))).outcome).toBe('authenticationFailed');
  });

  it('waits briefly for an RReq that arrives late', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h, '2173');
    const ended = await endChallenge(h, answer, 'Y');
    expect(ended.html).toContain('Payment verified');
    expect(h.count((c) => c.op === 'postauth')).toBe(3);
    expect((await liveJson(h, 'verification', verifyBodyOf(body, answer))).outcome).toBe('authenticated');
  });

  it('returns to the merchant without a result when the provider has none, and verification then fails it', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h, '2174');
    const ended = await endChallenge(h, answer, 'Y');
    expect(ended.html).toContain('Verification finished');
    expect(hiddenField(ended.html, 'TransactionId')).toBe(answer.challenge.reference);
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified).toMatchObject({ outcome: 'authenticationFailed', status: 'N', enrolled: 'Y' });
    expect(verified.authentication.authenticationValue).toBeUndefined();
  });

  it('fails a challenge the cardholder abandoned, once: a later result changes nothing', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt });
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified.outcome).toBe('authenticationFailed');
    const late = await endChallenge(h, answer, 'Y');
    expect(late.html).toContain('Payment not verified');
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(verified);
  });

  it('shows a challenge again from the same JWT until it has a result, then refuses it', async () => {
    const h = liveHarness();
    const { answer } = await challenged(h);
    for (let i = 0; i < 2; i++) {
      const page = await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt, MD: 'x' });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('name="creq"');
    }
    await endChallenge(h, answer, 'Y');
    const again = await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt });
    expect(again.status).toBe(409);
  });

  it('gives 20 identical verifications and 20 notifications one result, from one fetch of the RReq', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    const ended = await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ result: 'Y' }),
    }).then((r) => r.json<Json>());
    const [pages, verifications] = await Promise.all([
      burst(20, () => livePage(h, new URL(ended.notificationURL).pathname, { cres: ended.cres }).then((r) => r.text())),
      burst(20, () => liveStep(h, 'verification', verifyBodyOf(body, answer)).then((r) => r.json<Json>())),
    ]);
    // The transaction's object fetches the RReq: callers that arrive during the fetch share it.
    expect(h.calls.filter((c) => c.store === 'provider' && c.op === 'postauth')).toHaveLength(1);
    const outcomes = new Set(verifications.map((v) => JSON.stringify(v)));
    expect(outcomes.size).toBe(1);
    const verified = JSON.parse([...outcomes][0]!) as Json;
    // Whichever came first decided: the RReq (Y), or verification finding none yet (failed).
    const word = verified.outcome === 'authenticated' ? 'Payment verified' : 'Payment not verified';
    for (const page of pages) expect(page).toContain(word);
  });

  it('still takes a handle of the older form, with a dot between the object id and the MAC', async () => {
    const h = liveHarness();
    const { body, answer } = await challenged(h);
    await livePage(h, '/3ds/challenge', { JWT: answer.challenge.jwt, MD: 'order-7' });
    const notificationURL = (await fakeTransaction(creqOf(answer).threeDSServerTransID)).areq.notificationURL as string;
    const handle = notificationURL.slice(notificationURL.lastIndexOf('/') + 1);
    expect(handle).toMatch(/^[0-9a-f]{64}[\w-]{22}$/);
    const dotted = `${handle.slice(0, 64)}.${handle.slice(64)}`;
    const ended = await fake(`/_fake/challenge/${creqOf(answer).acsTransID}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ result: 'Y' }),
    });
    const control = await ended.json<Json>();
    const page = await livePage(h, `/3ds/challenge/notify/${dotted}`, { cres: control.cres });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`action="${body.challenge.returnUrl}"`);
    // Anything else around the two parts is not a handle.
    for (const wrong of [`${handle.slice(0, 64)}..${handle.slice(64)}`, `${handle}.`, `.${handle}`]) {
      expect((await livePage(h, `/3ds/challenge/notify/${wrong}`, { cres: control.cres })).status).toBe(404);
    }
  });

  it('refuses notifications and facts under a handle the service did not issue', async () => {
    const h = liveHarness();
    const { answer } = await challenged(h);
    const notificationURL = (await fakeTransaction(creqOf(answer).threeDSServerTransID)).areq.notificationURL as string;
    const forged = `${notificationURL.slice(0, -4)}AAAA`;
    expect((await livePage(h, new URL(forged).pathname, { cres: 'x' })).status).toBe(404);
    const facts = await h.fetch(
      new Request(forged.replace('/challenge/notify/', '/ddc/facts/'), { method: 'POST', body: '{}' }),
    );
    expect(facts.status).toBe(404);
    expect((await livePage(h, new URL(forged.replace('/challenge/notify/', '/method/')).pathname, {})).status).toBe(
      404,
    );
  });
});
