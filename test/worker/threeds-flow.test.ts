import { describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../src/threeds/scenarios';
import {
  authenticateBody,
  completeChallenge,
  hiddenField,
  MASTERCARD_PAN,
  newReference,
  postForm,
  RETURN_URL,
  threeDs,
  THREEDS_MEDIA,
  VISA_PAN,
} from './threeds-helpers';
import { luhnComplete } from './helpers';

type Json = Record<string, any>;

async function authenticate(options: Parameters<typeof authenticateBody>[0]): Promise<Json> {
  const response = await threeDs('authenticate', authenticateBody(options));
  expect(response.status).toBe(200);
  expect(response.headers.get('Content-Type')).toBe(THREEDS_MEDIA);
  return response.json();
}

async function verify(reference: string, challengeReference: string, entity = 'default'): Promise<Response> {
  return threeDs('verification', {
    transactionReference: reference,
    merchant: { entity },
    challenge: { reference: challengeReference },
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** What each magic value must give (docs/threeds.md "Test magic values"), written out rather than read from the code. */
const EXPECTED: Record<
  string,
  { auth: string; attempted?: boolean; verify?: string; verifyAttempted?: boolean; version: string }
> = {
  '3ds2-frictionless-identified': { auth: 'authenticated', version: '2.2.0' },
  '3ds2-frictionless-not-identified': { auth: 'authenticated', attempted: true, version: '2.2.0' },
  '3ds2-frictionless-failed': { auth: 'authenticationFailed', version: '2.2.0' },
  '3ds2-frictionless-rejected': { auth: 'authenticationFailed', version: '2.2.0' },
  '3ds2-frictionless-unavailable': { auth: 'unavailable', version: '2.2.0' },
  '3ds2-authentication-unavailable': { auth: 'unavailable', version: '2.2.0' },
  // Version 1 of the API; version 3 gets authenticationOutage (test/worker/media-types.test.ts).
  '3ds2-authentication-outage': { auth: 'unavailable', version: '2.2.0' },
  // Without an exemption in the request (test/worker/threeds-exemptions.test.ts has it).
  '3ds2-exemption-granted': { auth: 'authenticated', version: '2.3.1' },
  '3ds2-exemption-refused': { auth: 'authenticated', version: '2.3.1' },
  '3ds2-challenge-identified': { auth: 'challenged', verify: 'authenticated', version: '2.2.0' },
  '3ds2-challenge-unknown-identity': { auth: 'challenged', verify: 'authenticationFailed', version: '2.2.0' },
  '3ds2-verification-unavailable': { auth: 'challenged', verify: 'unavailable', version: '2.2.0' },
  '3ds2-bypassed': { auth: 'bypassed', version: '2.2.0' },
  // Without a decoupled block in the request: an unrequested D (test/worker/threeds-decoupled.test.ts has it).
  '3ds2-decoupled-authenticated': { auth: 'unavailable', version: '2.2.0' },
  '3ds2-decoupled-failed': { auth: 'unavailable', version: '2.2.0' },
  '3ds2-decoupled-timeout': { auth: 'unavailable', version: '2.2.0' },
  '3ds2-bypassed-after-challenge': { auth: 'challenged', verify: 'bypassed', version: '2.2.0' },
  '3ds1-challenge-identified': { auth: 'challenged', verify: 'authenticated', version: '1.0.2' },
  '3ds1-challenge-not-identified': {
    auth: 'challenged',
    verify: 'authenticated',
    verifyAttempted: true,
    version: '1.0.2',
  },
  '3ds1-challenge-unknown-identity': { auth: 'challenged', verify: 'authenticationFailed', version: '1.0.2' },
  '3ds1-invalid-signature': { auth: 'challenged', verify: 'signatureFailed', version: '1.0.2' },
  '3ds1-verification-unavailable': { auth: 'challenged', verify: 'unavailable', version: '1.0.2' },
  '3ds1-not-enrolled': { auth: 'notEnrolled', version: '1.0.2' },
  '3ds1-authentication-unavailable': { auth: 'unavailable', version: '1.0.2' },
  '3ds1-bypassed': { auth: 'bypassed', version: '1.0.2' },
};

/** Worldpay's shape: acsTransactionId, status and enrolled at the top; authentication holds four fields. */
function expectAuthenticated(body: Json, attempted: boolean, version: string): void {
  expect(body.outcome).toBe('authenticated');
  expect(body).toMatchObject({ status: attempted ? 'A' : 'Y', enrolled: 'Y' });
  expect(body.acsTransactionId).toMatch(UUID);
  expect(Object.keys(body.authentication).sort()).toEqual(['authenticationValue', 'eci', 'transactionId', 'version']);
  expect(body.authentication).toMatchObject({ version, eci: attempted ? '06' : '05' });
  expect(body.authentication.authenticationValue).toMatch(/^[A-Za-z0-9+/]{27}=$/);
  expect(body.authentication.transactionId).toMatch(UUID);
}

const LINK = (step: string): { href: string } => ({ href: `https://edge.test/verifications/customers/3ds/${step}` });

/** The non-authenticated, non-challenged outcomes, in Worldpay's shape. */
function expectOutcomeShape(body: Json, outcome: string, version: string, step: 'authenticate' | 'verification'): void {
  switch (outcome) {
    case 'authenticationFailed':
      expect(body).toMatchObject({ status: 'N', enrolled: 'Y', _links: { '3ds:authenticate': LINK('authenticate') } });
      expect(body.acsTransactionId).toMatch(UUID);
      expect(body.authentication).toEqual({ version, eci: '07', transactionId: expect.stringMatching(UUID) });
      break;
    case 'unavailable':
      expect(body).toEqual({
        outcome,
        transactionReference: body.transactionReference,
        status: 'U',
        ...(step === 'authenticate' ? { enrolled: 'U' } : {}),
        _links: {
          '3ds:authenticate': LINK('authenticate'),
          ...(step === 'verification' ? { '3ds:verify': LINK('verification') } : {}),
        },
      });
      break;
    case 'bypassed':
      expect(body).toMatchObject({ status: 'Y', enrolled: 'B' });
      expect(body.authentication).toEqual({ version, eci: '07', transactionId: expect.stringMatching(UUID) });
      break;
    case 'notEnrolled':
      expect(body).toMatchObject({ enrolled: 'N', authentication: { version, eci: '07' } });
      break;
    case 'signatureFailed':
      expect(body).toMatchObject({
        authentication: { version, eci: '07' },
        _links: { '3ds:authenticate': LINK('authenticate') },
      });
      break;
  }
}

describe('3DS magic values, from authenticate through verification', () => {
  it('covers every scenario of the contract', () => {
    expect(SCENARIOS.map((s) => s.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s', async (name, want) => {
    const reference = newReference();
    const auth = await authenticate({ reference, cardHolderName: name });
    expect(auth.outcome).toBe(want.auth);
    expect(auth.transactionReference).toBe(reference);
    if (want.auth === 'authenticated') expectAuthenticated(auth, want.attempted ?? false, want.version);
    else expectOutcomeShape(auth, want.auth, want.version, 'authenticate');
    if (want.auth !== 'challenged') return;
    expect(auth.authentication).toEqual({ version: want.version });

    expect(auth.challenge.reference).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(auth._links['3ds:verify'].href).toBe('https://edge.test/verifications/customers/3ds/verification');
    const completion = await completeChallenge(auth.challenge.jwt, ['1234']);
    expect(hiddenField(completion, 'TransactionId')).toBe(auth.challenge.reference);
    const verified: Json = await (await verify(reference, auth.challenge.reference)).json();
    expect(verified.outcome).toBe(want.verify);
    if (want.verify === 'authenticated') expectAuthenticated(verified, want.verifyAttempted ?? false, want.version);
    else expectOutcomeShape(verified, want.verify!, want.version, 'verification');
  });

  it('accepts the legacy spelling and any letter case', async () => {
    expect((await authenticate({ cardHolderName: '3DS_V2_FRICTIONLESS_FAILED' })).outcome).toBe('authenticationFailed');
    expect((await authenticate({ cardHolderName: '3DS2-Bypassed' })).outcome).toBe('bypassed');
  });

  it('challenges any other cardholder name, as 3ds2-challenge-identified', async () => {
    expect((await authenticate({ cardHolderName: 'Ada Lovelace' })).outcome).toBe('challenged');
  });

  it('uses Mastercard ECIs for a Mastercard card', async () => {
    const auth = await authenticate({ cardHolderName: '3ds2-frictionless-identified', cardNumber: MASTERCARD_PAN });
    expect(auth.authentication.eci).toBe('02');
    const attempted = await authenticate({
      cardHolderName: '3ds2-frictionless-not-identified',
      cardNumber: MASTERCARD_PAN,
    });
    expect(attempted.authentication.eci).toBe('01');
    const failed = await authenticate({ cardHolderName: '3ds2-frictionless-failed', cardNumber: MASTERCARD_PAN });
    expect(failed.authentication.eci).toBe('00');
  });
});

describe('3DS challenge completion', () => {
  async function challenged(): Promise<{ reference: string; auth: Json }> {
    const reference = newReference();
    return { reference, auth: await authenticate({ reference, cardHolderName: '3ds2-challenge-identified' }) };
  }

  it('fails after three wrong codes, whatever the scenario', async () => {
    const { reference, auth } = await challenged();
    const html = await completeChallenge(auth.challenge.jwt, ['0000', '1111', '2222']);
    expect(hiddenField(html, 'TransactionId')).toBe(auth.challenge.reference);
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('passes on the right code after two wrong ones', async () => {
    const { reference, auth } = await challenged();
    await completeChallenge(auth.challenge.jwt, ['0000', '1111', '1234']);
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe('authenticated');
  });

  it('fails when the cardholder cancels', async () => {
    const { reference, auth } = await challenged();
    await completeChallenge(auth.challenge.jwt, ['cancel']);
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('answers a challenge never completed with authenticationFailed', async () => {
    const { reference, auth } = await challenged();
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('shows an error page for a reused challenge JWT and keeps the outcome', async () => {
    const { reference, auth } = await challenged();
    await completeChallenge(auth.challenge.jwt, ['1234']);
    const reused = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt, MD: 'x' });
    expect(reused.status).toBe(409);
    expect(await reused.text()).toContain('already used');
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe('authenticated');
  });

  it('shows the one result again when a completed challenge is posted again, so a failure cannot become a pass', async () => {
    const { reference, auth } = await challenged();
    const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    const state = hiddenField(page, 'state')!;
    await postForm('/3ds/challenge/submit', { state, action: 'cancel', code: '' });
    const replay = await postForm('/3ds/challenge/submit', { state, action: 'submit', code: '1234' });
    expect(replay.status).toBe(200);
    const html = await replay.text();
    expect(html).toContain('Payment not verified');
    expect(hiddenField(html, 'TransactionId')).toBe(auth.challenge.reference);
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('counts every code against one limit, so replaying an earlier form cannot reset it', async () => {
    const { reference, auth } = await challenged();
    const form = hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state')!;
    const post = async (code: string): Promise<string> =>
      (await postForm('/3ds/challenge/submit', { state: form, code, action: 'submit' })).text();
    expect(await post('0000')).toContain('2 attempts left');
    expect(await post('1111')).toContain('1 attempt left');
    expect(await post('2222')).toContain('Payment not verified');
    expect(await post('1234')).toContain('Payment not verified');
    expect((await (await verify(reference, auth.challenge.reference)).json<Json>()).outcome).toBe(
      'authenticationFailed',
    );
  });

  it('refuses a tampered challenge JWT or form state with an error page', async () => {
    const { auth } = await challenged();
    const tampered = `${auth.challenge.jwt.slice(0, -4)}AAAA`;
    const page = await postForm('/3ds/challenge', { JWT: tampered });
    expect(page.status).toBe(400);
    expect(page.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect((await postForm('/3ds/challenge/submit', { state: 'nonsense', code: '1234' })).status).toBe(400);
  });

  it('posts TransactionId and MD to the returnUrl from the completion page', async () => {
    const { auth } = await challenged();
    const html = await completeChallenge(auth.challenge.jwt, ['1234'], 'order-42 & <more>');
    expect(html).toContain(`action="${RETURN_URL}"`);
    expect(hiddenField(html, 'MD')).toBe('order-42 & <more>');
  });

  it('serves the pages framable, with a CSP and no external assets', async () => {
    const { auth } = await challenged();
    const response = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt });
    const html = await response.text();
    expect(response.headers.get('X-Frame-Options')).toBeNull();
    expect(response.headers.get('Content-Security-Policy')).toMatch(/default-src 'none'.*frame-ancestors \*/);
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html).toContain('1234'); // the test environment tells the code
  });
});

describe('3DS device data collection', () => {
  it('initializes with a DDC JWT and URL, and a BIN when a card is sent', async () => {
    const reference = newReference();
    const response = await threeDs('deviceDataInitialize', {
      transactionReference: reference,
      merchant: { entity: 'default' },
      paymentInstrument: { type: 'card/front', cardNumber: VISA_PAN, cardExpiryDate: { month: 1, year: 2030 } },
    });
    const body: Json = await response.json();
    expect(response.status).toBe(200);
    expect(body).toMatchObject({
      outcome: 'initialized',
      transactionReference: reference,
      deviceDataCollection: { url: 'https://edge.test/3ds/ddc', bin: VISA_PAN.slice(0, 6) },
      _links: { '3ds:authenticate': { href: 'https://edge.test/verifications/customers/3ds/authenticate' } },
    });
    const [, payload] = body.deviceDataCollection.jwt.split('.');
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')));
    expect(claims).toMatchObject({ iss: expect.any(String), jti: expect.any(String), OrgUnitId: expect.any(String) });
    expect(claims.exp - claims.iat).toBe(600);
  });

  it('leaves out the BIN of a card number under 15 digits, which would show too much of it', async () => {
    for (const cardNumber of [luhnComplete('457173', 13), luhnComplete('457173', 14)]) {
      const response = await threeDs('deviceDataInitialize', {
        transactionReference: newReference(),
        merchant: { entity: 'default' },
        paymentInstrument: { type: 'card/front', cardNumber, cardExpiryDate: { month: 1, year: 2030 } },
      });
      expect(response.status).toBe(200);
      expect((await response.json<Json>()).deviceDataCollection).not.toHaveProperty('bin');
    }
  });

  it('leaves out the BIN when no card is sent, and answers on the alias path', async () => {
    const response = await threeDs('deviceDataInitialization', {
      transactionReference: newReference(),
      merchant: { entity: 'default' },
    });
    const body: Json = await response.json();
    expect(response.status).toBe(200);
    expect(body.deviceDataCollection).not.toHaveProperty('bin');
  });

  it('posts profile.completed with a SessionId from the DDC page, and Status false for a bad JWT', async () => {
    const init: Json = await (
      await threeDs('deviceDataInitialize', { transactionReference: newReference(), merchant: { entity: 'default' } })
    ).json();
    const good = await (await postForm('/3ds/ddc', { Bin: '457173', JWT: init.deviceDataCollection.jwt })).text();
    expect(good).toMatch(/"MessageType":"profile.completed","SessionId":"0_[0-9a-f-]{36}","Status":true/);
    const bad = await (await postForm('/3ds/ddc', { Bin: '457173', JWT: 'x.y.z' })).text();
    expect(bad).toContain('"Status":false');
  });

  async function collectDeviceData(reference: string): Promise<string> {
    const init: Json = await (
      await threeDs('deviceDataInitialize', { transactionReference: reference, merchant: { entity: 'default' } })
    ).json();
    const page = await (await postForm('/3ds/ddc', { Bin: '457173', JWT: init.deviceDataCollection.jwt })).text();
    return /"SessionId":"([^"]+)"/.exec(page)![1]!;
  }

  it('lets a completed collection make a small, no-challenge-requested payment frictionless (risk rules)', async () => {
    const reference = newReference();
    const sessionId = await collectDeviceData(reference);
    const frictionless = await authenticate({
      reference,
      preference: 'noChallengeRequested',
      collectionReference: sessionId,
    });
    expect(frictionless.outcome).toBe('authenticated');
  });

  it('challenges a no-challenge-requested payment without a device data collection', async () => {
    expect((await authenticate({ preference: 'noChallengeRequested' })).outcome).toBe('challenged');
  });

  it('challenges a no-challenge-requested payment at or over the frictionless threshold', async () => {
    const reference = newReference();
    const sessionId = await collectDeviceData(reference);
    expect(
      (
        await authenticate({
          reference,
          preference: 'noChallengeRequested',
          amount: 3000,
          collectionReference: sessionId,
        })
      ).outcome,
    ).toBe('challenged');
  });

  it("does not accept another transaction's device data collection", async () => {
    const sessionId = await collectDeviceData(newReference());
    expect((await authenticate({ preference: 'noChallengeRequested', collectionReference: sessionId })).outcome).toBe(
      'challenged',
    );
  });

  it('challenges when the risk data reports suspicious activity', async () => {
    const reference = newReference();
    const sessionId = await collectDeviceData(reference);
    const auth = await authenticate({
      reference,
      preference: 'noChallengeRequested',
      collectionReference: sessionId,
      riskData: { account: { previousSuspiciousActivity: true } },
    });
    expect(auth.outcome).toBe('challenged');
  });

  it("challenges on Worldpay's transaction.history.addCardsLastDay of 5, where it was frictionless before", async () => {
    const frictionless = async (riskData?: unknown): Promise<string> => {
      const reference = newReference();
      const sessionId = await collectDeviceData(reference);
      return (
        await authenticate({ reference, preference: 'noChallengeRequested', collectionReference: sessionId, riskData })
      ).outcome;
    };
    expect(await frictionless({ transaction: { history: { addCardsLastDay: 3 } } })).toBe('authenticated');
    expect(await frictionless({ transaction: { history: { addCardsLastDay: 5 } } })).toBe('challenged');
  });
});

describe("authenticate takes what Worldpay's schema takes", () => {
  it.each<[string, (body: Json) => void]>([
    ['an empty collectionReference', (b) => (b.deviceData.collectionReference = '')],
    ['a gift card quantity of 0', (b) => (b.riskData = { transaction: { giftCardsPurchase: { quantity: 0 } } })],
    ['shipping.method unshippedTickets', (b) => (b.riskData = { shipping: { method: 'unshippedTickets' } })],
    ['shipping.timeFrame electronic', (b) => (b.riskData = { shipping: { timeFrame: 'electronic' } })],
    ['shipping.timeFrame twoDaysPlus', (b) => (b.riskData = { shipping: { timeFrame: 'twoDaysPlus' } })],
    ['a screen of 0 by 0', (b) => Object.assign(b.deviceData, { browserScreenHeight: 0, browserScreenWidth: 0 })],
    [
      'a merchant overrideName and acquirerId',
      (b) => Object.assign(b.merchant, { overrideName: 'Baskerville', acquirerId: '01234567' }),
    ],
    [
      'a billing address',
      (b) =>
        (b.instruction.paymentInstrument.billingAddress = {
          address1: '221B Baker Street',
          postalCode: 'NW1 6XE',
          city: 'London',
          countryCode: 'GB',
        }),
    ],
  ])('%s', async (_name, change) => {
    const body = authenticateBody({ cardHolderName: '3ds2-frictionless-identified' });
    change(body);
    const response = await threeDs('authenticate', body);
    expect(response.status).toBe(200);
    expect((await response.json<Json>()).outcome).toBe('authenticated');
  });
});
