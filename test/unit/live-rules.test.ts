import { describe, expect, it } from 'vitest';
import { fromBase64Url, toBase64Url, utf8 } from '../../src/bytes';
import type { CardRangeData } from '../../src/threeds/live/emv-messages';
import { answerForEmvResult, notEnrolledAnswer, unavailableAnswer } from '../../src/threeds/live/emv-outcomes';
import { chooseVersion, compareVersions } from '../../src/threeds/live/emv-versions';
import { headerFacts, scriptFacts } from '../../src/threeds/steps/live-pages';
import {
  challengeStartDeadline,
  methodIndicator,
  needsPreparing,
  resultFetchableUntil,
} from '../../src/threeds/live/timing';

/**
 * The pure rules of live 3-D Secure (docs/threeds.md "Live"): which protocol version, the clocks
 * (preparation, 3DS Method, challenge, result), the answer for each EMV result, and what the DDC
 * page may record of a browser.
 */

const crd = (over: Partial<CardRangeData>): CardRangeData => ({
  messageType: 'CRD',
  threeDSServerTransID: '8a880dc0-d2d2-4067-bcb1-b08d1690b26e',
  acsStartProtocolVersion: '2.1.0',
  acsEndProtocolVersion: '2.2.0',
  ...over,
});

describe('protocol versions', () => {
  it('compares dotted versions numerically', () => {
    expect(compareVersions('2.10.0', '2.2.0')).toBeGreaterThan(0);
    expect(compareVersions('2.1.0', '2.2.0')).toBeLessThan(0);
    expect(compareVersions('2.2', '2.2.0')).toBe(0);
  });

  it.each([
    // ACS range, DS range → the highest shared version
    [{ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.2.0' }, '2.2.0'],
    [{ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.3.1' }, '2.3.1'],
    [{ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.1.0' }, '2.1.0'],
    [{ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.3.1', dsEndProtocolVersion: '2.2.0' }, '2.2.0'],
    [
      { acsStartProtocolVersion: '2.2.0', acsEndProtocolVersion: '2.3.1', dsProtocolVersions: ['2.1.0', '2.2.0'] },
      '2.2.0',
    ],
    [{ acsStartProtocolVersion: '2.4.0', acsEndProtocolVersion: '2.4.0' }, undefined],
    [{ acsStartProtocolVersion: '2.3.1', acsEndProtocolVersion: '2.3.1', dsEndProtocolVersion: '2.2.0' }, undefined],
  ] satisfies [Partial<CardRangeData>, string | undefined][])('%o → %s', (range, version) => {
    expect(chooseVersion(crd(range))?.version).toBe(version);
  });

  it("takes the chosen version's own method URL where the provider lists one per version", () => {
    const choice = chooseVersion(
      crd({
        acsEndProtocolVersion: '2.3.1',
        threeDSMethodURL: 'https://acs.example/method-any',
        acsProtocolVersions: [
          { version: '2.2.0', threeDSMethodURL: 'https://acs.example/m220' },
          { version: '2.3.1', threeDSMethodURL: 'https://acs.example/m231' },
        ],
      }),
    );
    expect(choice).toEqual({ version: '2.3.1', methodUrl: 'https://acs.example/m231' });
    expect(chooseVersion(crd({ threeDSMethodURL: 'https://acs.example/m' }))).toEqual({
      version: '2.2.0',
      methodUrl: 'https://acs.example/m',
    });
    expect(chooseVersion(crd({}))).toEqual({ version: '2.2.0' });
  });

  it('chooses below 2.3.1 when the notification URLs are http, and says so only when 2.3.1 was offered', () => {
    const both = crd({ acsStartProtocolVersion: '2.1.0', acsEndProtocolVersion: '2.3.1' });
    expect(chooseVersion(both, { httpsNotifications: true })).toEqual({ version: '2.3.1' });
    expect(chooseVersion(both)).toEqual({ version: '2.3.1' });
    expect(chooseVersion(both, { httpsNotifications: false })).toEqual({ version: '2.2.0', notHttps: '2.3.1' });
    const perVersion = crd({
      acsEndProtocolVersion: '2.3.1',
      acsProtocolVersions: [
        { version: '2.2.0', threeDSMethodURL: 'https://acs.example/m220' },
        { version: '2.3.1', threeDSMethodURL: 'https://acs.example/m231' },
      ],
    });
    expect(chooseVersion(perVersion, { httpsNotifications: false })).toEqual({
      version: '2.2.0',
      methodUrl: 'https://acs.example/m220',
      notHttps: '2.3.1',
    });
    // A 2.2.0 range: nothing to say.
    expect(chooseVersion(crd({}), { httpsNotifications: false })).toEqual({ version: '2.2.0' });
    // A range of 2.3.1 only: nothing in common over http.
    expect(
      chooseVersion(crd({ acsStartProtocolVersion: '2.3.1', acsEndProtocolVersion: '2.3.1' }), {
        httpsNotifications: false,
      }),
    ).toBeUndefined();
  });

  it('uses only the versions a per-version list names', () => {
    const choice = chooseVersion(
      crd({ acsEndProtocolVersion: '2.3.1', acsProtocolVersions: [{ version: '2.1.0' }, { version: '2.2.0' }] }),
    );
    expect(choice?.version).toBe('2.2.0');
  });
});

describe('clocks', () => {
  it('prepares a card again from 70 s on (the provider keeps it 80 s)', () => {
    expect(needsPreparing(undefined, 0)).toBe(true);
    expect(needsPreparing(1_000, 70_999)).toBe(false);
    expect(needsPreparing(1_000, 71_000)).toBe(true);
  });

  it.each([
    [{}, 5_000, { kind: 'indicator', value: 'U' }],
    [{ url: 'https://acs/m' }, 5_000, { kind: 'indicator', value: 'N' }],
    [{ url: 'https://acs/m', startedAt: 0 }, 4_000, { kind: 'wait', ms: 6_000 }],
    [{ url: 'https://acs/m', startedAt: 0 }, 10_000, { kind: 'indicator', value: 'N' }],
    [{ url: 'https://acs/m', startedAt: 0, completedAt: 3_000 }, 4_000, { kind: 'indicator', value: 'Y' }],
    [{ url: 'https://acs/m', startedAt: 0, completedAt: 10_000 }, 12_000, { kind: 'indicator', value: 'Y' }],
    [{ url: 'https://acs/m', startedAt: 0, completedAt: 10_001 }, 12_000, { kind: 'indicator', value: 'N' }],
  ] as const)('3DS Method %o at %d ms → %o', (method, now, expected) => {
    expect(methodIndicator(method, now)).toEqual(expected);
  });

  it('gives the browser 30 s to start the challenge, and fetches its result up to 15 min after the ARes', () => {
    expect(challengeStartDeadline(1_000)).toBe(31_000);
    expect(resultFetchableUntil(1_000)).toBe(1_000 + 600_000 + 300_000);
  });
});

describe('answers for EMV results', () => {
  const context = {
    transactionReference: 'ref-1',
    brands: ['visa'] as const,
    step: 'authenticate' as const,
    apiBase: 'https://edge.test/verifications/customers/3ds',
  };
  const ids = { messageVersion: '2.2.0', acsTransID: 'acs-1', dsTransID: 'ds-1' };

  it('Y: authenticated with the issuer eci and value, as given', () => {
    expect(answerForEmvResult({ ...ids, transStatus: 'Y', eci: '05', authenticationValue: 'AAAB' }, context)).toEqual({
      outcome: 'authenticated',
      transactionReference: 'ref-1',
      acsTransactionId: 'acs-1',
      status: 'Y',
      enrolled: 'Y',
      authentication: { version: '2.2.0', eci: '05', authenticationValue: 'AAAB', transactionId: 'ds-1' },
    });
  });

  it('A and I: authenticated, never an invented eci or value', () => {
    const attempted = answerForEmvResult({ ...ids, transStatus: 'A' }, context);
    expect(attempted).toMatchObject({ outcome: 'authenticated', status: 'A' });
    expect(attempted.authentication).toEqual({ version: '2.2.0', transactionId: 'ds-1' });
    const exempt = answerForEmvResult(
      { ...ids, messageVersion: '2.3.1', transStatus: 'I', eci: '07', transChallengeExemption: '05' },
      context,
    );
    expect(exempt).toMatchObject({ outcome: 'authenticated', status: 'I' });
    expect(exempt.authentication).toEqual({ version: '2.3.1', eci: '07', transactionId: 'ds-1', exemption: '05' });
  });

  it('N and R: authenticationFailed, eci 07 or 00 for Mastercard when the issuer gives none, reason kept', () => {
    const failed = answerForEmvResult({ ...ids, transStatus: 'N', transStatusReason: '01' }, context);
    expect(failed).toMatchObject({ outcome: 'authenticationFailed', status: 'N', enrolled: 'Y' });
    expect(failed.authentication).toEqual({ version: '2.2.0', eci: '07', transactionId: 'ds-1', statusReason: '01' });
    const rejected = answerForEmvResult({ ...ids, transStatus: 'R' }, { ...context, brands: ['mastercard'] });
    expect(rejected).toMatchObject({ outcome: 'authenticationFailed', status: 'R', authentication: { eci: '00' } });
    const cancelled = answerForEmvResult({ ...ids, transStatus: 'N', challengeCancel: '01' }, context);
    expect(cancelled.authentication?.cancellationIndicator).toBe('01');
  });

  it.each(['U', 'D', 'S', undefined])('%s: unavailable, no authentication', (transStatus) => {
    const answer = answerForEmvResult({ ...ids, ...(transStatus ? { transStatus } : {}) }, context);
    expect(answer).toEqual(unavailableAnswer(context));
    expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
    expect(answer.authentication).toBeUndefined();
  });

  it('verification offers authenticate and verify again when unavailable; notEnrolled says N', () => {
    expect(unavailableAnswer({ ...context, step: 'verification' })._links).toHaveProperty('3ds:verify');
    expect(notEnrolledAnswer(context)).toEqual({
      outcome: 'notEnrolled',
      transactionReference: 'ref-1',
      enrolled: 'N',
    });
  });
});

describe('what the DDC page records of a browser', () => {
  it('takes accepted languages by preference, and the IP address', () => {
    const facts = headerFacts(
      new Headers({
        'Accept-Language': 'fr;q=0.5, en-GB , en;q=0.9, *;q=0.1, de;q=0, not a tag',
        'CF-Connecting-IP': '192.0.2.1',
        'User-Agent': 'Mozilla/5.0',
      }),
    );
    expect(facts).toEqual({ acceptLanguage: ['en-GB', 'en', 'fr'], ip: '192.0.2.1' });
    expect(headerFacts(new Headers())).toEqual({});
  });

  it('keeps each script fact only when it is what a browser reports', () => {
    expect(
      scriptFacts({
        javascriptEnabled: true,
        javaEnabled: false,
        language: 'en-GB',
        colorDepth: 24,
        screenHeight: 1080,
        screenWidth: 1920,
        timeZone: -60,
        extra: 'dropped',
      }),
    ).toEqual({
      javascriptEnabled: true,
      javaEnabled: false,
      language: 'en-GB',
      colorDepth: 24,
      screenHeight: 1080,
      screenWidth: 1920,
      timeZone: -60,
    });
    expect(
      scriptFacts({
        javascriptEnabled: 'yes',
        language: '<script>',
        colorDepth: 1.5,
        screenHeight: -1,
        timeZone: 9999,
      }),
    ).toEqual({});
    expect(scriptFacts(null)).toEqual({});
    expect(scriptFacts('text')).toEqual({});
  });
});

describe('base64url', () => {
  it('reads padded and unpadded, and refuses anything else', () => {
    const text = JSON.stringify({ messageType: 'CRes', transStatus: 'Y' });
    const unpadded = toBase64Url(utf8(text));
    expect(unpadded).not.toMatch(/[=+/]/);
    const padded = unpadded.padEnd(unpadded.length + ((4 - (unpadded.length % 4)) % 4), '=');
    for (const form of [unpadded, padded]) expect(new TextDecoder().decode(fromBase64Url(form))).toBe(text);
    expect(() => fromBase64Url('a+b/')).toThrow();
    expect(() => fromBase64Url('a===')).toThrow();
  });
});
