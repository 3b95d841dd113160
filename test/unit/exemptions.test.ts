import { describe, expect, it } from 'vitest';
import { emvProblems } from '../../src/emv/emv-validator';
import { EMV_VERSIONS, MESSAGES } from '../../src/emv/emv-rules';
import { EXEMPTION_TYPES, exemptionToSend, lowValueProblem, exemptionEci } from '../../src/threeds/exemptions';

/** The exemption rules of src/threeds/exemptions.ts, and that what they send is valid EMV for its version. */

describe('exemptionToSend', () => {
  it.each([
    ['TRA', '2.2.0', '05', false],
    ['TRA', '2.1.0', '02', true],
    ['dataOnly', '2.2.0', '06', false],
    ['scaDelegation', '2.3.1', '07', false],
    ['trustedBeneficiary', '2.2.0', '08', false],
    ['lowValue', '2.2.0', '02', true],
    ['lowValue', '2.3.1', '10', false],
    ['secureCorporate', '2.2.0', '02', true],
    ['secureCorporate', '2.3.1', '11', false],
    ['TRA', '1.0.2', '02', true],
  ] as const)('%s on %s: %s, downgraded %s', (type, version, indicator, downgraded) => {
    expect(exemptionToSend(type, version, ['visa'])).toEqual({
      sent: { threeDSRequestorChallengeInd: indicator, messageCategory: '01' },
      downgraded,
    });
  });

  it('data only on Mastercard is message category 80 in every 2.x version, never downgraded', () => {
    for (const version of EMV_VERSIONS) {
      const { sent, downgraded } = exemptionToSend('dataOnly', version, ['mastercard']);
      expect(sent.messageCategory).toBe('80');
      expect(downgraded).toBe(false);
    }
    expect(exemptionToSend('dataOnly', '1.0.2', ['mastercard']).downgraded).toBe(true);
  });

  it('sends only values the version’s AReq rules have, for every type and version', () => {
    for (const version of EMV_VERSIONS)
      for (const type of EXEMPTION_TYPES)
        for (const brands of [['visa'], ['mastercard']] as const) {
          const { sent } = exemptionToSend(type, version, brands);
          const value = version === '2.3.1' ? [sent.threeDSRequestorChallengeInd] : sent.threeDSRequestorChallengeInd;
          const problems = emvProblems(
            'AReq',
            version,
            { channel: 'BRW', category: 'PA' },
            {
              threeDSRequestorChallengeInd: value,
            },
          ).filter((p) => p.at.startsWith('#/threeDSRequestorChallengeInd'));
          // The checker's scenarios are payment (01) or not (02): Mastercard's 80 is checked by its pattern.
          const category = MESSAGES.AReq[version]!.find((r) => r.name === 'messageCategory')!;
          expect(new RegExp(category.pattern!).test(sent.messageCategory)).toBe(true);
          expect(problems, `${type} ${version} ${brands[0]}`).toEqual([]);
        }
  });
});

describe('lowValueProblem', () => {
  it('allows up to 30 EUR and 25 GBP, another currency only with the entity’s limit', () => {
    expect(lowValueProblem(3000, 'EUR')).toBeUndefined();
    expect(lowValueProblem(3001, 'EUR')).toMatch(/up to 3000/);
    expect(lowValueProblem(2500, 'GBP')).toBeUndefined();
    expect(lowValueProblem(2501, 'GBP')).toBeDefined();
    expect(lowValueProblem(100, 'USD')).toMatch(/no limit in USD/);
    expect(lowValueProblem(100, 'USD', { USD: 3500 })).toBeUndefined();
    expect(lowValueProblem(2000, 'GBP', { GBP: 1000 })).toBeDefined();
  });
});

it('Mastercard’s exemption ECI is 06 and data only 04; others 07', () => {
  expect(exemptionEci(['mastercard'], false)).toBe('06');
  expect(exemptionEci(['maestro'], true)).toBe('04');
  expect(exemptionEci(['visa'], false)).toBe('07');
});
