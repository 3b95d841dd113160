import { describe, expect, it } from 'vitest';
import { emvMessageProblems } from '../../src/emv/emv-validator';
import type { MerchantInitiatedRequest } from '../../src/schemas/threeds-requests';
import { buildThreeRiAReq } from '../../src/threeds/live/three-ri-areq';
import type { EmvVersion } from '../../src/threeds/live/emv-messages';
import { THREE_RI_TYPES, type SeriesRecord, type ThreeRiType } from '../../src/threeds/series-rules';
import { REQUESTOR } from './requestor-fixture';

/**
 * The 3RI AReq (src/threeds/live/three-ri-areq.ts), for each version and each 3RI type: every one
 * it builds passes the EMV rules of its version as a 3RI message (deviceChannel 03); a type the
 * version lacks is a field error at `$.type`, and nothing is built.
 */

const NOW = Date.parse('2026-11-28T09:30:00Z');
const VERSIONS: EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];
const TYPES = Object.keys(THREE_RI_TYPES) as ThreeRiType[];

function series(version: EmvVersion, type: 'recurring' | 'instalment' = 'recurring'): SeriesRecord {
  return {
    terms: { type, expiry: '2027-06-30', frequencyDays: 30, ...(type === 'instalment' ? { instalments: 6 } : {}) },
    amount: 2500,
    currency: 'GBP',
    cardHash: 'h',
    brands: ['mastercard'],
    version,
    acsTransactionId: '0d8e1b9c-6a55-4c1e-9a34-5b1f2e7c8d90',
    dsTransactionId: '7f3a2b1c-4d5e-4f60-8a7b-9c0d1e2f3a4b',
    method: '02',
    authenticatedAt: Date.parse('2026-11-01T08:07:06Z'),
    status: 'Y',
  };
}

function request(type: ThreeRiType): MerchantInitiatedRequest {
  return {
    transactionReference: 'renewal-1',
    merchant: { entity: 'default' },
    priorTransactionReference: 'first-payment',
    type,
    instruction: {
      value: { amount: 1000, currency: 'GBP' },
      paymentInstrument: {
        type: 'card/front',
        cardNumber: '5312650000000004',
        cardExpiryDate: { month: 12, year: 2030 },
      },
    },
  };
}

const card = {
  cardNumber: '5312650000000004',
  cardExpiryDate: { month: 12, year: 2030 },
  cardHolderName: 'A Subscriber',
  brands: ['mastercard'] as const,
  fromToken: false,
};

describe('the 3RI AReq', () => {
  for (const version of VERSIONS)
    for (const type of TYPES) {
      const code = THREE_RI_TYPES[type];
      const has = version !== '2.1.0' || ['addCard', 'maintainCard', 'accountVerification'].includes(type);
      it(`${version} ${type} (${code}): ${has ? 'passes the version’s 3RI rules' : 'refused at $.type'}`, () => {
        const built = buildThreeRiAReq({
          threeDSServerTransID: '6c2b4a8e-1f3d-4b5a-9c7e-2d1f0a3b4c5d',
          now: NOW,
          request: request(type),
          card,
          requestor: REQUESTOR,
          series: series(version, type === 'instalment' ? 'instalment' : 'recurring'),
        });
        if (!has) {
          expect(built).toMatchObject({ ok: false, errors: [{ jsonPath: '$.type' }] });
          return;
        }
        if (!built.ok) throw new Error(JSON.stringify(built.errors));
        expect(emvMessageProblems('AReq', version, built.areq)).toEqual([]);
        expect(built.areq).toMatchObject({ deviceChannel: '03', threeRIInd: code, messageVersion: version });
        for (const browserField of ['browserUserAgent', 'notificationURL', 'threeDSCompInd', 'browserAcceptHeader'])
          expect(built.areq).not.toHaveProperty(browserField);
        const prior =
          version === '2.3.1'
            ? (built.areq.threeDSRequestorPriorAuthenticationInfo as unknown[])[0]
            : built.areq.threeDSRequestorPriorAuthenticationInfo;
        expect(prior).toEqual({
          threeDSReqPriorAuthMethod: '02',
          threeDSReqPriorAuthTimestamp: '202611010807',
          threeDSReqPriorRef: '0d8e1b9c-6a55-4c1e-9a34-5b1f2e7c8d90',
        });
        const payment = !['addCard', 'maintainCard', 'accountVerification'].includes(type);
        expect(built.areq.messageCategory).toBe(payment ? '01' : '02');
        expect(built.areq.purchaseAmount).toBe(payment ? '1000' : undefined);
      });
    }
});
