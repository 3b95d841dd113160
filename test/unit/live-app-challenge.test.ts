import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { fromBase64Url } from '../../src/bytes';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { AUTHENTICATE } from '../../src/schemas/threeds-requests';
import type { AppAuthenticateRequest } from '../../src/threeds/app-channel-rules';
import type { AuthenticationResponse } from '../../src/threeds/live/emv-messages';
import { appChallengeOf } from '../../src/threeds/live/live-app-challenge';

/**
 * An ARes C to an app, as the live run reads it (src/threeds/live/live-app-challenge.ts): the
 * payload for the app's SDK from `acsSignedContent`, `acsReferenceNumber` and `acsTransID`, the
 * challenge's end at the SDK's maxTimeout; and no challenge from an ARes that cannot start one
 * (the run then answers as for any other unusable ARes: `unavailable`).
 */

const SDK_TRANS_ID = '1a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d';
const ARES_AT = Date.parse('2026-11-29T10:00:00Z');

function request(appUrl?: string): AppAuthenticateRequest {
  const body = {
    transactionReference: 'order-app-1',
    merchant: { entity: 'default' },
    instruction: {
      value: { amount: 250, currency: 'GBP' },
      paymentInstrument: {
        type: 'card/front',
        cardNumber: scenarioCard('2172'),
        cardExpiryDate: { month: 1, year: 2030 },
      },
    },
    deviceData: {
      channel: 'app',
      sdk: {
        appId: '0f2a3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d',
        encData: 'eyJhbGciOiJFQ0RILUVTIn0..aXY.Y2lwaGVy.dGFn',
        ephemeralPublicKey: { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'B'.repeat(43) },
        maxTimeout: 7,
        referenceNumber: 'SDK-REF-1',
        transactionId: SDK_TRANS_ID,
        interface: 'both',
        uiTypes: ['text'],
        ...(appUrl ? { appUrl } : {}),
      },
    },
    challenge: {},
  };
  return v.parse(AUTHENTICATE, body) as AppAuthenticateRequest;
}

const ARES: AuthenticationResponse = {
  messageType: 'ARes',
  messageVersion: '2.2.0',
  threeDSServerTransID: '6f1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c',
  acsTransID: '7a1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c',
  dsTransID: '8b1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c',
  transStatus: 'C',
  acsReferenceNumber: 'ACS-REF',
  acsSignedContent: 'eyJhbGciOiJFUzI1NiJ9.eyJhY3NVUkwiOiJ4In0.c2ln',
  sdkTransID: SDK_TRANS_ID,
};

const start = (ares: AuthenticationResponse, appUrl?: string) =>
  appChallengeOf({ request: request(appUrl), baseUrl: 'https://edge.test', brands: ['visa'] }, ares, ARES_AT);

describe('an app challenge from an ARes C', () => {
  it('gives the SDK its payload (the app URL from 2.2.0) and ends at the SDK’s maxTimeout', () => {
    const started = start(ARES, 'https://shop.example/app')!;
    expect(started.answer).toMatchObject({
      outcome: 'challenged',
      transactionReference: 'order-app-1',
      authentication: { version: '2.2.0' },
      challenge: { reference: started.challenge.reference },
    });
    const payload = JSON.parse(
      new TextDecoder().decode(fromBase64Url((started.answer.challenge as { payload: string }).payload)),
    );
    expect(payload).toEqual({
      threeDSServerTransID: ARES.threeDSServerTransID,
      acsTransID: ARES.acsTransID,
      acsRefNumber: 'ACS-REF',
      acsSignedContent: ARES.acsSignedContent,
      threeDSRequestorAppURL: 'https://shop.example/app',
    });
    expect(started.challenge).toMatchObject({ aresAt: ARES_AT, app: { expiresAt: ARES_AT + 7 * 60_000 } });
    expect(started.challenge).not.toHaveProperty('acsURL');
    expect(started.challenge).not.toHaveProperty('returnUrl');
  });

  it.each([
    ['no acsSignedContent', { acsSignedContent: undefined }],
    ['an acsSignedContent that is no compact JWS', { acsSignedContent: 'not-a-jws' }],
    ['no acsReferenceNumber', { acsReferenceNumber: undefined }],
    ['another SDK transaction', { sdkTransID: '99999999-5e6f-4a1b-8c9d-0e1f2a3b4c5d' }],
  ])('starts none from an ARes with %s', (_what, change) => {
    expect(start({ ...ARES, ...change })).toBeUndefined();
  });
});
