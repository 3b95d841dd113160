import { Validator } from '@cfworker/json-schema';
import { describe, expect, it } from 'vitest';
import { emvJsonSchema, integerRangePattern, scenarioOf, type EmvScenario } from '../../src/emv/emv-json-schema';
import {
  EMV_MESSAGE_TYPES,
  EMV_VERSIONS,
  MESSAGES,
  OBJECTS,
  type Category,
  type Channel,
  type EmvMessageType,
  type EmvVersion,
  type FieldRule,
} from '../../src/emv/emv-rules';
import { emvProblems } from '../../src/emv/emv-validator';

/**
 * The EMV field rules as data (src/emv/emv-rules.ts, extracted from the 3dsecure.io tables by
 * scripts/emv/extract-emv-rules.ts) and the JSON Schemas made from them: hand-written messages of
 * each kind, valid and broken in the ways the rules must catch.
 */

type Msg = Record<string, unknown>;
const BRW_PA: EmvScenario = { channel: 'BRW', category: 'PA' };
const without = (m: Msg, ...keys: string[]): Msg =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !keys.includes(k)));

const ids = {
  server: '6f1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c',
  ds: 'a8d3e0f1-27c4-4b59-8e6a-3f9b1c2d4e5f',
  acs: '0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b',
};

const areq220: Msg = {
  messageType: 'AReq',
  messageVersion: '2.2.0',
  messageCategory: '01',
  deviceChannel: '02',
  threeDSServerTransID: ids.server,
  threeDSCompInd: 'Y',
  threeDSRequestorAuthenticationInd: '01',
  threeDSRequestorURL: 'https://shop.example.test/about',
  notificationURL: 'https://requestor.example.test/3ds/notify/abc123',
  acctNumber: '4000000000001000',
  acquirerBIN: '412345',
  acquirerMerchantID: 'M-000123',
  mcc: '5732',
  merchantCountryCode: '208',
  merchantName: 'Example Hardware ApS',
  purchaseAmount: '12995',
  purchaseCurrency: '208',
  purchaseExponent: '2',
  purchaseDate: '20250314093015',
  browserAcceptHeader: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
  browserUserAgent: 'Mozilla/5.0 (X11; Linux x86_64) TestAgent/1.0',
  browserLanguage: 'da-DK',
  browserJavascriptEnabled: true,
  browserJavaEnabled: false,
  browserColorDepth: '24',
  browserScreenHeight: '1080',
  browserScreenWidth: '1920',
  browserTZ: '-60',
  browserIP: '192.0.2.17',
  acctInfo: { chAccAgeInd: '03', chAccDate: '20190101', txnActivityDay: '1' },
  merchantRiskIndicator: { shipIndicator: '01', deliveryTimeframe: '02', giftCardCurr: '978' },
  mobilePhone: { cc: '45', subscriber: '12345678' },
  email: 'buyer@example.test',
};

const areq210: Msg = (() => {
  const m: Msg = { ...without(areq220, 'browserJavascriptEnabled'), messageVersion: '2.1.0' };
  return m;
})();

const areq231: Msg = {
  ...without(areq220, 'browserLanguage'),
  messageVersion: '2.3.1',
  threeDSRequestorURL: 'https://shop.example.test/about',
  notificationURL: 'https://requestor.example.test/3ds/notify/abc123',
  acceptLanguage: ['da-DK', 'en-GB'],
  acquirerCountryCode: '208',
  acquirerCountryCodeSource: '01',
  threeDSRequestorChallengeInd: ['01'],
  browserLanguage: 'da-DK',
  threeDSRequestorAuthenticationInfo: [{ threeDSReqAuthMethod: '02', threeDSReqAuthTimestamp: '202503140910' }],
};

const aresBase: Msg = {
  messageType: 'ARes',
  messageVersion: '2.2.0',
  threeDSServerTransID: ids.server,
  dsTransID: ids.ds,
  acsTransID: ids.acs,
  acsReferenceNumber: 'ACS-REF-EXAMPLE-01',
  dsReferenceNumber: 'DS-REF-EXAMPLE-01',
};
const aresY: Msg = { ...aresBase, transStatus: 'Y', authenticationValue: 'AAABAWFlmQAAAABjRWWZEEFgFz8=', eci: '05' };
const aresC: Msg = {
  ...aresBase,
  transStatus: 'C',
  acsChallengeMandated: 'N',
  authenticationType: '02',
  acsURL: 'https://acs.example.test/challenge',
};
const aresN: Msg = { ...aresBase, transStatus: 'N', transStatusReason: '01' };

const rreqY: Msg = {
  messageType: 'RReq',
  messageVersion: '2.2.0',
  messageCategory: '01',
  threeDSServerTransID: ids.server,
  dsTransID: ids.ds,
  acsTransID: ids.acs,
  transStatus: 'Y',
  authenticationType: '02',
  authenticationValue: 'AAABAWFlmQAAAABjRWWZEEFgFz8=',
  eci: '05',
  interactionCounter: '01',
};

const cresN: Msg = {
  messageType: 'CRes',
  messageVersion: '2.2.0',
  threeDSServerTransID: ids.server,
  acsTransID: ids.acs,
  transStatus: 'N',
};

const erro: Msg = {
  messageType: 'Erro',
  messageVersion: '2.2.0',
  threeDSServerTransID: ids.server,
  errorCode: '201',
  errorComponent: 'D',
  errorDescription: 'Required element missing',
  errorDetail: 'acctNumber',
  errorMessageType: 'AReq',
};

const creq: Msg = {
  messageType: 'CReq',
  messageVersion: '2.2.0',
  threeDSServerTransID: ids.server,
  acsTransID: ids.acs,
  challengeWindowSize: '05',
};

const crd: Msg = {
  messageType: 'CRD',
  threeDSServerTransID: ids.server,
  acsStartProtocolVersion: '2.1.0',
  acsEndProtocolVersion: '2.2.0',
  dsStartProtocolVersion: '2.1.0',
  dsEndProtocolVersion: '2.2.0',
  threeDSMethodURL: 'https://acs.example.test/method',
  scheme: 'visa',
};

const CASES: [string, EmvMessageType, EmvVersion, EmvScenario, Msg, boolean, RegExp?][] = [
  ['AReq 2.2.0 BRW/PA all required fields', 'AReq', '2.2.0', BRW_PA, areq220, true],
  ['AReq 2.2.0 BRW/PA without acctNumber', 'AReq', '2.2.0', BRW_PA, without(areq220, 'acctNumber'), false, /required/],
  [
    'AReq 2.2.0 BRW/PA with a misspelt field (acctNumbr)',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, acctNumbr: '1' },
    false,
    /additionalProperties|false/,
  ],
  [
    'AReq 2.2.0 BRW/PA JS enabled, no browserTZ',
    'AReq',
    '2.2.0',
    BRW_PA,
    without(areq220, 'browserTZ'),
    false,
    /browserTZ/,
  ],
  [
    'AReq 2.2.0 BRW/PA JS disabled, no screen/TZ/colour/Java fields',
    'AReq',
    '2.2.0',
    BRW_PA,
    {
      ...without(
        areq220,
        'browserTZ',
        'browserColorDepth',
        'browserScreenHeight',
        'browserScreenWidth',
        'browserJavaEnabled',
      ),
      browserJavascriptEnabled: false,
    },
    true,
  ],
  [
    'AReq 2.2.0 BRW/PA merchantCountryCode 2 digits',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, merchantCountryCode: '20' },
    false,
    /pattern/,
  ],
  [
    'AReq 2.2.0 BRW/PA purchaseDate with month 13',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, purchaseDate: '20251314093015' },
    false,
    /pattern/,
  ],
  [
    'AReq 2.2.0 BRW/PA deviceChannel 01 (APP) in BRW schema',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, deviceChannel: '01' },
    false,
    /const/,
  ],
  [
    'AReq 2.2.0 BRW/PA sdkTransID (APP-only field)',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, sdkTransID: ids.acs },
    false,
  ],
  [
    'AReq 2.2.0 BRW/PA typo inside acctInfo',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, acctInfo: { chAccAgeIndd: '03' } },
    false,
  ],
  [
    'AReq 2.2.0 BRW/PA payTokenInd without payTokenSource',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, payTokenInd: true },
    false,
    /payTokenSource/,
  ],
  [
    'AReq 2.2.0 BRW/PA instalment (authInd 03) without purchaseInstalData',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, threeDSRequestorAuthenticationInd: '03', recurringExpiry: '20261231', recurringFrequency: '30' },
    false,
    /purchaseInstalData/,
  ],
  [
    'AReq 2.2.0 BRW/PA instalment with purchaseInstalData 12',
    'AReq',
    '2.2.0',
    BRW_PA,
    {
      ...areq220,
      threeDSRequestorAuthenticationInd: '03',
      recurringExpiry: '20261231',
      recurringFrequency: '30',
      purchaseInstalData: '12',
    },
    true,
  ],
  [
    'AReq 2.2.0 BRW/PA purchaseInstalData 1 (below 2)',
    'AReq',
    '2.2.0',
    BRW_PA,
    { ...areq220, purchaseInstalData: '1' },
    false,
    /pattern/,
  ],
  [
    'AReq 2.2.0 BRW/NPA without purchase fields',
    'AReq',
    '2.2.0',
    { channel: 'BRW', category: 'NPA' },
    {
      ...without(
        areq220,
        'purchaseAmount',
        'purchaseCurrency',
        'purchaseExponent',
        'purchaseDate',
        'acquirerBIN',
        'acquirerMerchantID',
        'mcc',
        'merchantCountryCode',
        'merchantName',
      ),
      messageCategory: '02',
    },
    true,
  ],
  [
    'AReq 2.3.1 BRW/PA (acceptLanguage, acquirerCountryCode, challengeInd array)',
    'AReq',
    '2.3.1',
    BRW_PA,
    areq231,
    true,
  ],
  [
    'AReq 2.3.1 BRW/PA without acceptLanguage',
    'AReq',
    '2.3.1',
    BRW_PA,
    without(areq231, 'acceptLanguage'),
    false,
    /acceptLanguage/,
  ],
  [
    'AReq 2.3.1 BRW/PA challengeInd as a string',
    'AReq',
    '2.3.1',
    BRW_PA,
    { ...areq231, threeDSRequestorChallengeInd: '01' },
    false,
    /type/,
  ],
  [
    'AReq 2.3.1 BRW/PA http notificationURL (urlHttps)',
    'AReq',
    '2.3.1',
    BRW_PA,
    { ...areq231, notificationURL: 'http://requestor.example.test/n' },
    false,
    /pattern/,
  ],
  ['AReq 2.1.0 BRW/PA browser fields, no browserJavascriptEnabled', 'AReq', '2.1.0', BRW_PA, areq210, true],
  [
    'AReq 2.1.0 BRW/PA with browserJavascriptEnabled (not a 2.1.0 field)',
    'AReq',
    '2.1.0',
    BRW_PA,
    { ...areq210, browserJavascriptEnabled: true },
    false,
  ],
  [
    'AReq 2.1.0 BRW/PA without browserColorDepth',
    'AReq',
    '2.1.0',
    BRW_PA,
    without(areq210, 'browserColorDepth'),
    false,
    /browserColorDepth/,
  ],
  ['ARes 2.2.0 BRW/PA Y with authenticationValue', 'ARes', '2.2.0', BRW_PA, aresY, true],
  [
    'ARes 2.2.0 BRW/PA Y without authenticationValue',
    'ARes',
    '2.2.0',
    BRW_PA,
    without(aresY, 'authenticationValue'),
    false,
    /authenticationValue/,
  ],
  ['ARes 2.2.0 BRW/PA C with acsURL', 'ARes', '2.2.0', BRW_PA, aresC, true],
  ['ARes 2.2.0 BRW/PA C without acsURL', 'ARes', '2.2.0', BRW_PA, without(aresC, 'acsURL'), false, /acsURL/],
  ['ARes 2.2.0 BRW/PA N with transStatusReason', 'ARes', '2.2.0', BRW_PA, aresN, true],
  [
    'ARes 2.2.0 BRW/PA N without transStatusReason',
    'ARes',
    '2.2.0',
    BRW_PA,
    without(aresN, 'transStatusReason'),
    false,
    /transStatusReason/,
  ],
  ['RReq 2.2.0 BRW/PA Y', 'RReq', '2.2.0', BRW_PA, rreqY, true],
  [
    'RReq 2.2.0 BRW/PA Y without authenticationType',
    'RReq',
    '2.2.0',
    BRW_PA,
    without(rreqY, 'authenticationType'),
    false,
    /authenticationType/,
  ],
  ['CRes 2.2.0 BRW/PA N', 'CRes', '2.2.0', BRW_PA, cresN, true],
  [
    'CRes 2.2.0 BRW/PA transStatus A (not allowed in CRes)',
    'CRes',
    '2.2.0',
    BRW_PA,
    { ...cresN, transStatus: 'A' },
    false,
    /enum/,
  ],
  ['Erro 2.2.0', 'Erro', '2.2.0', BRW_PA, erro, true],
  ['Erro 2.2.0 unknown errorCode 999', 'Erro', '2.2.0', BRW_PA, { ...erro, errorCode: '999' }, false, /enum/],
  ['CReq 2.2.0 BRW/PA', 'CReq', '2.2.0', BRW_PA, creq, true],
  [
    'CReq 2.2.0 BRW/PA with messageVersion 2.1.0',
    'CReq',
    '2.2.0',
    BRW_PA,
    { ...creq, messageVersion: '2.1.0' },
    false,
    /const/,
  ],
  ['CRD 2.2.0', 'CRD', '2.2.0', BRW_PA, crd, true],
  ['CRD 2.3.1', 'CRD', '2.3.1', BRW_PA, { ...crd, scheme: 'mastercard', acsEndProtocolVersion: '2.3.1' }, true],
];

describe('EMV message rules (pure)', () => {
  it.each(CASES)('%s', (_name, message, version, scenario, msg, valid, match) => {
    const problems = emvProblems(message, version, scenario, msg);
    expect(problems.length === 0).toBe(valid);
    if (!valid && match) expect(problems.map((p) => `${p.at} ${p.keyword}: ${p.error}`).join('\n')).toMatch(match);
  });

  it('reads the scenario of a message', () => {
    expect(scenarioOf(areq220)).toEqual({ channel: 'BRW', category: 'PA' });
  });

  it('turns integer ranges into patterns that agree with the numbers', () => {
    for (const [min, max, width] of [
      [2, 999, undefined],
      [5, 99, 2],
      [1, 10080, 5],
      [0, 99, 2],
    ] as [number, number, number | undefined][]) {
      const re = new RegExp(integerRangePattern(min, max, width), 'u');
      for (let n = 0; n <= max + 20; n++) {
        for (const c of [String(n), String(n).padStart(width ?? 3, '0')]) {
          const expected = n >= min && n <= max && (width === undefined ? c === String(n) : c.length === width);
          expect(re.test(c), `${c} in ${min}..${max}`).toBe(expected);
        }
      }
    }
  });

  it('builds a schema for every message, version and scenario, every pattern compiling as Unicode', () => {
    const walk = (rules: FieldRule[]): void => {
      for (const r of rules) if (r.pattern !== undefined) expect(() => new RegExp(r.pattern!, 'u')).not.toThrow();
    };
    for (const t of [...Object.values(MESSAGES), ...Object.values(OBJECTS)])
      for (const rules of Object.values(t)) if (rules) walk(rules);
    const channels: Channel[] = ['APP', 'BRW', '3RI'];
    const categories: Category[] = ['PA', 'NPA'];
    let built = 0;
    for (const m of EMV_MESSAGE_TYPES)
      for (const v of EMV_VERSIONS)
        for (const channel of channels)
          for (const category of categories) {
            new Validator(emvJsonSchema(m, v, { channel, category }), '2020-12', false).validate({});
            built++;
          }
    expect(built).toBe(162);
  });

  it.each<[EmvMessageType, EmvVersion, number, number]>([
    ['AReq', '2.1.0', 71, 63],
    ['AReq', '2.2.0', 78, 70],
    ['AReq', '2.3.1', 108, 94],
    ['ARes', '2.2.0', 23, 20],
    ['RReq', '2.2.0', 18, 16],
    ['CRes', '2.2.0', 9, 6],
    ['Erro', '2.2.0', 11, 10],
  ])('holds every field of the %s %s table (%i, %i of them for the browser)', (message, version, all, browser) => {
    const rules = MESSAGES[message][version]!;
    expect(rules).toHaveLength(all);
    expect(rules.filter((r) => r.inclusion.BRW !== undefined)).toHaveLength(browser);
  });
});
