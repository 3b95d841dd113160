import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { emvProblems } from '../../src/emv/emv-validator';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { AUTHENTICATE } from '../../src/schemas/threeds-requests';
import { buildAReq, emvDateTime, type AReqInput, type BrowserFacts } from '../../src/threeds/live/areq-builder';
import type { EmvVersion } from '../../src/threeds/live/emv-messages';
import { REQUESTOR } from './requestor-fixture';
import type { AppAuthenticateRequest, BrowserAuthenticateRequest } from '../../src/threeds/app-channel-rules';

/**
 * The AReq builder, row by row: every field it maps from Worldpay's request, the DDC page's
 * browser facts and the entity's requestor block, for each protocol version; and every AReq it
 * builds is checked against the EMV field rules of its version (src/emv/).
 */

const NOW = Date.parse('2026-11-24T10:20:30Z');
const CARD = scenarioCard('2003');
const VERSIONS: EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];

const BROWSER: BrowserFacts = {
  acceptLanguage: ['en-GB', 'en'],
  language: 'en-GB',
  colorDepth: 30,
  screenHeight: 1080,
  screenWidth: 1920,
  timeZone: -60,
  javaEnabled: false,
  javascriptEnabled: true,
  ip: '192.0.2.17',
};

function request(changes: Record<string, unknown> = {}): BrowserAuthenticateRequest {
  const body = {
    transactionReference: 'order-1',
    merchant: { entity: 'default' },
    instruction: {
      value: { amount: 12995, currency: 'GBP' },
      paymentInstrument: {
        type: 'card/front',
        cardNumber: CARD,
        cardExpiryDate: { month: 3, year: 2029 },
        cardHolderName: 'Ada Lovelace',
      },
    },
    deviceData: { acceptHeader: 'text/html', userAgentHeader: 'Mozilla/5.0 Test' },
    challenge: { returnUrl: 'https://shop.example/3ds/return' },
    ...changes,
  };
  return v.parse(AUTHENTICATE, body) as BrowserAuthenticateRequest;
}

type BrowserInput = Extract<AReqInput, { channel: 'browser' }>;

function input(version: EmvVersion, changes: Partial<BrowserInput> = {}): BrowserInput {
  const req = changes.request ?? request();
  const instrument = req.instruction.paymentInstrument as {
    cardNumber: string;
    cardExpiryDate: { month: number; year: number };
    cardHolderName?: string;
  };
  return {
    channel: 'browser',
    version,
    threeDSServerTransID: '6f1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c',
    threeDSCompInd: 'Y',
    notificationURL: 'https://edge.test/3ds/challenge/notify/abc',
    now: NOW,
    request: req,
    card: {
      cardNumber: instrument.cardNumber,
      cardExpiryDate: instrument.cardExpiryDate,
      ...(instrument.cardHolderName !== undefined ? { cardHolderName: instrument.cardHolderName } : {}),
      brands: ['visa'],
      fromToken: false,
    },
    browser: BROWSER,
    requestor: REQUESTOR,
    ...changes,
  };
}

function built(i: AReqInput): Record<string, unknown> {
  const result = buildAReq(i);
  if (!result.ok) throw new Error(`not built: ${JSON.stringify(result.errors)}`);
  // Every AReq the builder makes is one the version's rules accept, in its channel.
  const channel = i.channel === 'app' ? 'APP' : 'BRW';
  expect(emvProblems('AReq', i.version, { channel, category: 'PA' }, result.areq)).toEqual([]);
  return result.areq;
}

describe('the AReq of a series’ first payment', () => {
  it.each(['2.1.0', '2.2.0', '2.3.1'] as const)('carries the series on %s, valid for its rules', (version) => {
    const recurring = { type: 'instalment', expiry: '2027-06-30', frequencyDays: 30, instalments: 6 };
    const areq = built(input(version, { request: request({ recurring }) }));
    expect(areq).toMatchObject({
      threeDSRequestorAuthenticationInd: '03',
      recurringExpiry: '20270630',
      recurringFrequency: '30',
      purchaseInstalData: '6',
    });
    if (version === '2.3.1') expect(areq.recurringInd).toEqual({ amountInd: '02', frequencyInd: '01' });
    const plain = built(
      input(version, { request: request({ recurring: { ...recurring, type: 'recurring', instalments: undefined } }) }),
    );
    expect(plain.threeDSRequestorAuthenticationInd).toBe('02');
    expect(plain.purchaseInstalData).toBeUndefined();
  });
});

describe('the AReq of a request that allows decoupled authentication', () => {
  it.each(['2.2.0', '2.3.1'] as const)(
    'carries threeDSRequestorDecReqInd Y and the time in 5 digits on %s, valid for its rules',
    (version) => {
      const areq = built(input(version, { request: request({ decoupled: { maxMinutes: 30 } }) }));
      expect(areq).toMatchObject({ threeDSRequestorDecReqInd: 'Y', threeDSRequestorDecMaxTime: '00030' });
      expect(
        built(input(version, { request: request({ decoupled: { maxMinutes: 10_080 } }) })).threeDSRequestorDecMaxTime,
      ).toBe('10080');
      const without = built(input(version));
      expect(without.threeDSRequestorDecReqInd).toBeUndefined();
      expect(without.threeDSRequestorDecMaxTime).toBeUndefined();
    },
  );

  it('is refused at $.decoupled on 2.1.0, which has no decoupled authentication: nothing is built', () => {
    const result = buildAReq(input('2.1.0', { request: request({ decoupled: { maxMinutes: 30 } }) }));
    expect(result).toEqual({
      ok: false,
      errors: [
        { errorName: 'fieldHasInvalidValue', jsonPath: '$.decoupled', message: expect.stringContaining('2.2.0') },
      ],
    });
  });
});

describe('the AReq builder (pure)', () => {
  it.each(VERSIONS)('builds a valid %s AReq with every field mapped', (version) => {
    const areq = built(input(version));
    expect(areq).toMatchObject({
      messageType: 'AReq',
      messageVersion: version,
      messageCategory: '01',
      deviceChannel: '02',
      threeDSServerTransID: '6f1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c',
      threeDSCompInd: 'Y',
      threeDSRequestorAuthenticationInd: '01',
      threeDSRequestorURL: 'https://shop.example/about',
      notificationURL: 'https://edge.test/3ds/challenge/notify/abc',
      acquirerBIN: '412345',
      acquirerMerchantID: 'M-000123',
      mcc: '5732',
      merchantCountryCode: '826',
      merchantName: 'Example Hardware',
      acctNumber: CARD,
      cardExpiryDate: '2903',
      cardholderName: 'Ada Lovelace',
      purchaseAmount: '12995',
      purchaseCurrency: '826',
      purchaseExponent: '2',
      purchaseDate: '20261124102030',
      transType: '01',
      browserAcceptHeader: 'text/html',
      browserUserAgent: 'Mozilla/5.0 Test',
      browserIP: '192.0.2.17',
      browserLanguage: 'en-GB',
      browserColorDepth: '24',
      browserScreenHeight: '1080',
      browserScreenWidth: '1920',
      browserTZ: '-60',
      browserJavaEnabled: false,
    });
    expect(areq.threeDSRequestorChallengeInd).toEqual(version === '2.3.1' ? ['01'] : '01');
    expect('browserJavascriptEnabled' in areq).toBe(version !== '2.1.0');
    if (version === '2.3.1') {
      expect(areq).toMatchObject({
        acceptLanguage: ['en-GB', 'en'],
        acquirerCountryCode: '826',
        acquirerCountryCodeSource: '01',
      });
    } else {
      expect(areq).not.toHaveProperty('acceptLanguage');
      expect(areq).not.toHaveProperty('acquirerCountryCode');
    }
  });

  it('takes the merchant’s browser values over the DDC page’s, and the scheme’s acquirer where it has one', () => {
    const req = request({
      deviceData: {
        acceptHeader: 'text/html',
        userAgentHeader: 'UA',
        browserLanguage: 'da-DK',
        browserColorDepth: '16',
        browserScreenHeight: 800,
        browserScreenWidth: 600,
        timeZone: '120',
        browserJavaEnabled: true,
        browserJavascriptEnabled: true,
        ipAddress: '2001:db8::1',
      },
    });
    const areq = built({
      ...input('2.2.0', { request: req }),
      card: { ...input('2.2.0').card, brands: ['mastercard'] },
    });
    expect(areq).toMatchObject({
      browserLanguage: 'da-DK',
      browserColorDepth: '16',
      browserScreenHeight: '800',
      browserScreenWidth: '600',
      browserTZ: '120',
      browserJavaEnabled: true,
      browserIP: '2001:db8::1',
      acquirerBIN: '512345',
    });
  });

  it.each<[string, number, string]>([
    ['JPY (no minor units)', 500, '392'],
    ['BHD (three)', 1000, '048'],
  ])('gives the ISO 4217 numeric code and exponent of %s', (currency, amount, number) => {
    const req = request({
      instruction: { ...request().instruction, value: { amount, currency: currency.slice(0, 3) } },
    });
    const areq = built(input('2.2.0', { request: req }));
    expect(areq).toMatchObject({ purchaseAmount: String(amount), purchaseCurrency: number });
    expect(areq.purchaseExponent).toBe(currency.startsWith('JPY') ? '0' : '3');
  });

  it('refuses a currency that is not one a payment can be in, at its jsonPath', () => {
    const req = request({ instruction: { ...request().instruction, value: { amount: 1, currency: 'XAU' } } });
    expect(buildAReq(input('2.2.0', { request: req }))).toEqual({
      ok: false,
      errors: [
        expect.objectContaining({ errorName: 'fieldHasInvalidValue', jsonPath: '$.instruction.value.currency' }),
      ],
    });
  });

  it.each<[EmvVersion, string[]]>([
    [
      '2.1.0',
      [
        'browserLanguage',
        'browserColorDepth',
        'browserScreenHeight',
        'browserScreenWidth',
        'timeZone',
        'browserJavaEnabled',
      ],
    ],
    ['2.2.0', ['browserJavascriptEnabled', 'browserLanguage']],
    ['2.3.1', ['browserJavascriptEnabled', 'browserLanguage']],
  ])(
    'asks the merchant, for %s without a device data collection, for the fields the version needs',
    (version, fields) => {
      const result = buildAReq(input(version, { browser: {} }));
      expect(result.ok).toBe(false);
      if (!result.ok)
        expect([...new Set(result.errors.map((e) => e.jsonPath))]).toEqual(fields.map((f) => `$.deviceData.${f}`));
    },
  );

  it.each(VERSIONS)(
    '%s: takes the first accepted language of the DDC page’s request when the script reported none',
    (version) => {
      const { language: _, ...facts } = BROWSER;
      const areq = built(input(version, { browser: { ...facts, acceptLanguage: ['pt-BR', 'pt', 'en'] } }));
      expect(areq.browserLanguage).toBe('pt-BR');
      // The script's language comes first when there is one.
      expect(built(input(version)).browserLanguage).toBe('en-GB');
      // Only when neither is known is the merchant asked.
      const result = buildAReq(input(version, { browser: { ...facts, acceptLanguage: [] } }));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.errors.map((e) => e.jsonPath)).toContain('$.deviceData.browserLanguage');
    },
  );

  it('needs no screen fields from 2.2.0 on when JavaScript did not run', () => {
    const req = request({
      deviceData: {
        acceptHeader: 'text/html',
        userAgentHeader: 'UA',
        browserJavascriptEnabled: false,
        browserLanguage: 'en',
      },
    });
    const areq = built(input('2.2.0', { request: req, browser: {} }));
    expect(areq).not.toHaveProperty('browserScreenHeight');
    expect(areq.browserJavascriptEnabled).toBe(false);
  });

  it.each<[string, EmvVersion, string | undefined, boolean]>([
    ['an ASCII name', '2.2.0', 'Ada Lovelace', true],
    ['a name with accents before 2.3.1', '2.2.0', 'Zoë Ünal', false],
    ['a name with accents in 2.3.1', '2.3.1', 'Zoë Ünal', true],
    ['a one-letter name', '2.2.0', 'A', false],
    ['a 46-character name', '2.3.1', 'A'.repeat(46), false],
  ])('takes %s for %s: %s', (_name, version, cardHolderName, fits) => {
    const base = input(version);
    const result = buildAReq({ ...base, card: { ...base.card, cardHolderName } });
    expect(result.ok).toBe(fits);
    if (!result.ok)
      expect(result.errors).toEqual([
        expect.objectContaining({ jsonPath: '$.instruction.paymentInstrument.cardHolderName' }),
      ]);
  });

  it("leaves out a token's stored name that the version cannot take (the merchant cannot change it)", () => {
    const base = input('2.2.0');
    const areq = built({ ...base, card: { ...base.card, cardHolderName: 'Zoë', fromToken: true } });
    expect(areq).not.toHaveProperty('cardholderName');
  });

  it('refuses a card number under 13 digits, which EMV does not take', () => {
    const base = input('2.2.0');
    const result = buildAReq({ ...base, card: { ...base.card, cardNumber: '400010051111' } });
    expect(result).toMatchObject({ ok: false, errors: [{ jsonPath: '$.instruction.paymentInstrument.cardNumber' }] });
  });

  it('names tokenNumber for a network token number under 13 digits, and sends a network token as acctNumber', () => {
    const base = input('2.2.0');
    const short = buildAReq({ ...base, card: { ...base.card, cardNumber: '400010051111', networkToken: true } });
    expect(short).toMatchObject({
      ok: false,
      errors: [{ errorName: 'stringIsTooShort', jsonPath: '$.instruction.paymentInstrument.tokenNumber' }],
    });
    const areq = built({ ...base, card: { ...base.card, networkToken: true } });
    expect(areq.acctNumber).toBe(base.card.cardNumber);
  });

  it('maps the billing address, leaving out what EMV cannot hold', () => {
    const base = input('2.2.0');
    const areq = built({
      ...base,
      card: {
        ...base.card,
        billingAddress: {
          address1: '12 Brook Street',
          address2: 'A'.repeat(60),
          postalCode: 'W1S 1AA',
          city: 'London',
          state: 'Greater London',
          countryCode: 'GB',
        },
      },
    });
    expect(areq).toMatchObject({
      billAddrLine1: '12 Brook Street',
      billAddrPostCode: 'W1S 1AA',
      billAddrCity: 'London',
      billAddrCountry: '826',
    });
    expect(areq).not.toHaveProperty('billAddrLine2');
    expect(areq).not.toHaveProperty('billAddrState');
  });

  it.each<[string, string, string]>([
    ['noPreference', '2.2.0', '01'],
    ['noChallengeRequested', '2.2.0', '02'],
    ['challengeRequested', '2.2.0', '03'],
    ['challengeMandated', '2.2.0', '04'],
    ['noChallengeRequestedTRAPerformed', '2.2.0', '05'],
    ['noChallengeRequestedTRAPerformed', '2.1.0', '02'],
  ])('maps the preference %s to the %s challenge indicator %s', (preference, version, indicator) => {
    const req = request({ challenge: { returnUrl: 'https://shop.example/r', preference } });
    expect(built(input(version as EmvVersion, { request: req })).threeDSRequestorChallengeInd).toBe(indicator);
  });

  it("maps riskData into acctInfo, merchantRiskIndicator and the requestor's authentication", () => {
    const req = request({
      riskData: {
        account: {
          type: 'registeredUser',
          email: 'ada@example.org',
          previousSuspiciousActivity: false,
          history: {
            createdAt: '2025-01-01',
            modifiedAt: '2026-11-10',
            passwordModifiedAt: '2026-11-24',
            paymentAccountEnrolledAt: '2026-10-05',
          },
        },
        transaction: {
          reorder: true,
          preOrderDate: '2026-12-24',
          history: {
            attemptsLastDay: 2,
            attemptsLastYear: 999,
            completedLastSixMonths: 5,
            addCardsLastDay: 1,
            shippingAddressFirstUsedAt: '2026-11-24',
          },
          giftCardsPurchase: { totalValue: { amount: 2550, currency: 'EUR' }, quantity: 3 },
        },
        shipping: {
          nameMatchesAccountName: false,
          method: 'otherAddress',
          timeFrame: 'nextDay',
          email: 'ship@example.org',
        },
      },
    });
    for (const version of VERSIONS) {
      const areq = built(input(version, { request: req }));
      expect(areq.email).toBe('ada@example.org');
      expect(areq.acctInfo).toEqual({
        chAccDate: '20250101',
        chAccAgeInd: '05',
        chAccChange: '20261110',
        chAccChangeInd: '02',
        chAccPwChange: '20261124',
        chAccPwChangeInd: '02',
        paymentAccAge: '20261005',
        paymentAccInd: '04',
        shipAddressUsage: '20261124',
        shipAddressUsageInd: '01',
        nbPurchaseAccount: '5',
        txnActivityDay: '2',
        txnActivityYear: '999',
        provisionAttemptsDay: '1',
        shipNameIndicator: '02',
        suspiciousAccActivity: '01',
      });
      expect(areq.merchantRiskIndicator).toEqual({
        shipIndicator: '03',
        deliveryTimeframe: '03',
        deliveryEmailAddress: 'ship@example.org',
        reorderItemsInd: '02',
        preOrderPurchaseInd: '02',
        preOrderDate: '20261224',
        giftCardAmount: '25',
        giftCardCurr: '978',
        giftCardCount: '03',
      });
      const auth = { threeDSReqAuthMethod: '02' };
      expect(areq.threeDSRequestorAuthenticationInfo).toEqual(version === '2.3.1' ? [auth] : auth);
    }
  });

  it('marks a guest with no account', () => {
    const req = request({ riskData: { account: { type: 'guestUser' } } });
    expect(built(input('2.2.0', { request: req })).acctInfo).toEqual({ chAccAgeInd: '01', paymentAccInd: '01' });
  });

  it('writes EMV dates in UTC', () => {
    expect(emvDateTime(Date.parse('2026-01-02T03:04:05.678Z'))).toBe('20260102030405');
  });
});

describe('the AReq of an app (deviceChannel 01)', () => {
  const SDK = {
    appId: '0f2a3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d',
    encData: 'eyJhbGciOiJFQ0RILUVTIn0..aXY.Y2lwaGVy.dGFn',
    ephemeralPublicKey: { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'B'.repeat(43) },
    maxTimeout: 5,
    referenceNumber: 'SDK-REF-1',
    transactionId: '1a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d',
    interface: 'html',
    uiTypes: ['text', 'singleSelect', 'html'],
  };
  function appInput(version: EmvVersion, sdk: Record<string, unknown> = {}): AReqInput {
    const browser = input(version);
    const body = {
      ...request(),
      deviceData: { channel: 'app', sdk: { ...SDK, ...sdk } },
      challenge: {},
    };
    const { channel: _c, threeDSCompInd: _t, notificationURL: _n, browser: _b, ...common } = browser;
    return { ...common, channel: 'app', request: v.parse(AUTHENTICATE, body) as AppAuthenticateRequest };
  }

  it.each(VERSIONS)(
    'carries the SDK’s fields in EMV’s digits and no browser field on %s, valid for its rules',
    (version) => {
      const areq = built(appInput(version));
      expect(areq).toMatchObject({
        deviceChannel: '01',
        sdkAppID: SDK.appId,
        sdkEncData: SDK.encData,
        sdkEphemPubKey: SDK.ephemeralPublicKey,
        sdkMaxTimeout: '05',
        sdkReferenceNumber: 'SDK-REF-1',
        sdkTransID: SDK.transactionId,
        deviceRenderOptions: { sdkInterface: '02', sdkUiType: ['01', '02', '05'] },
      });
      for (const field of Object.keys(areq)) expect(field).not.toMatch(/^browser|^notificationURL$|^threeDSCompInd$/);
      if (version === '2.3.1') expect(areq).toMatchObject({ sdkType: '01', defaultSdkType: { sdkVariant: '01' } });
      else expect(areq).not.toHaveProperty('sdkType');
    },
  );

  it('2.3.1: the variant and the wrapper the request names', () => {
    expect(built(appInput('2.3.1', { variant: '80', wrapped: true })).defaultSdkType).toEqual({
      sdkVariant: '80',
      wrappedInd: 'Y',
    });
    expect(built(appInput('2.3.1', { wrapped: false })).defaultSdkType).toEqual({ sdkVariant: '01' });
  });

  it('needs no browser fact: an app has no device data collection', () => {
    expect(buildAReq(appInput('2.3.1')).ok).toBe(true);
  });
});
