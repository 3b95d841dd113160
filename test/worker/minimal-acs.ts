import { toBase64Url, utf8 } from '../../src/bytes';
import { acsEphemeralKeyPair } from '../../src/emv/acs-ephemeral-key';
import { signAcsSignedContent, type AcsSigningIdentity } from '../../src/emv/acs-signed-content';
import {
  challengeMessageKid,
  decryptChallengeMessage,
  deriveSecureChannelKey,
  encryptChallengeMessage,
  FIRST_COUNTER,
  isExpectedCounter,
  nextCounter,
  type P256PublicJwk,
} from '../../src/emv/secure-channel';
import type { AuthenticationParameters } from '../sdk/test-sdk';

/**
 * A minimal app-channel ACS for the tests, built from the protocol modules alone (src/emv/): it
 * answers an ARes's challenge with a payload and then the SDK's CReqs, with the text challenge of
 * CONTRACT.md §12 (code 1234, three wrong codes fail). What it keeps between messages is JSON in
 * `store` (a Durable Object's storage, in the service): ids, the SDK's public key and reference
 * number, counters; never a key. Each CReq re-derives the ACS's ephemeral key from the secret and
 * the JWE's `kid`, so any instance sharing `store` and the secret continues any challenge.
 */

export interface AcsRecord {
  threeDSServerTransID: string;
  acsTransID: string;
  sdkTransID: string;
  sdkEphemPubKey: P256PublicJwk;
  sdkReferenceNumber: string;
  nextSdkCounter: string;
  nextAcsCounter: string;
  wrongCodes: number;
  transStatus?: 'Y' | 'N';
  /** Each CReq's counter and the CRes's answer to it, in order. */
  exchanged: { sdkCounterStoA: string; acsCounterAtoS: string }[];
}

export const CODE = '1234';

export class MinimalAcs {
  constructor(
    readonly store: Map<string, string>,
    private readonly secret: CryptoKey,
    private readonly identity: AcsSigningIdentity,
    readonly acsURL = 'https://acs.test/creq',
  ) {}

  /** The ARes side: a challenge for this SDK, as the `challenge.payload` the SDK gets. */
  async challenge(
    sdk: AuthenticationParameters,
    signedSdkKey: P256PublicJwk = sdk.ephemeralPublicKey,
  ): Promise<string> {
    const acsTransID = crypto.randomUUID();
    const record: AcsRecord = {
      threeDSServerTransID: crypto.randomUUID(),
      acsTransID,
      sdkTransID: sdk.transactionId,
      sdkEphemPubKey: sdk.ephemeralPublicKey,
      sdkReferenceNumber: sdk.referenceNumber,
      nextSdkCounter: FIRST_COUNTER,
      nextAcsCounter: FIRST_COUNTER,
      wrongCodes: 0,
      exchanged: [],
    };
    this.store.set(acsTransID, JSON.stringify(record));
    const { publicKey } = await acsEphemeralKeyPair(this.secret, acsTransID);
    const acsSignedContent = await signAcsSignedContent(
      { acsURL: this.acsURL, acsEphemPubKey: publicKey, sdkEphemPubKey: signedSdkKey },
      this.identity,
    );
    const { threeDSServerTransID } = record;
    const payload = { threeDSServerTransID, acsTransID, acsRefNumber: 'card-edge-test-acs', acsSignedContent };
    return toBase64Url(utf8(JSON.stringify(payload)));
  }

  record(acsTransID: string): AcsRecord {
    return JSON.parse(this.store.get(acsTransID)!) as AcsRecord;
  }

  /** The CReq endpoint. */
  async fetch(request: Request): Promise<Response> {
    // Bytes, then UTF-8: workerd warns when text() reads an application/jose body.
    const jwe = new TextDecoder().decode(await request.arrayBuffer());
    const kid = challengeMessageKid(jwe);
    const stored = kid === null ? undefined : this.store.get(kid);
    if (kid === null || stored === undefined) return erro('301', 'Transaction ID not recognised');
    const record = JSON.parse(stored) as AcsRecord;
    const { privateKey } = await acsEphemeralKeyPair(this.secret, kid);
    const key = await deriveSecureChannelKey(privateKey, record.sdkEphemPubKey, record.sdkReferenceNumber);
    const opened = await decryptChallengeMessage(jwe, key);
    if (!opened.ok) return erro('302', `Data decryption failure (${opened.problem})`);
    const creq = opened.message;
    if (creq.messageType !== 'CReq') return erro('101', 'Not a CReq');
    if (creq.sdkTransID !== record.sdkTransID || creq.threeDSServerTransID !== record.threeDSServerTransID) {
      return erro('301', 'Transaction ID not recognised');
    }
    if (record.transStatus) return erro('203', 'The challenge has ended');
    if (!isExpectedCounter(creq.sdkCounterStoA, record.nextSdkCounter)) {
      return erro('302', `sdkCounterStoA ${String(creq.sdkCounterStoA)}, expected ${record.nextSdkCounter}`);
    }

    let text = `Enter the code sent to your phone (${CODE} in test).`;
    if (creq.challengeCancel !== undefined) record.transStatus = 'N';
    else if (creq.challengeDataEntry === CODE) record.transStatus = 'Y';
    else if (creq.challengeDataEntry !== undefined) {
      record.wrongCodes += 1;
      if (record.wrongCodes >= 3) record.transStatus = 'N';
      else text = `Wrong code: ${3 - record.wrongCodes} tries left.`;
    }
    const cres: Record<string, unknown> = {
      threeDSServerTransID: record.threeDSServerTransID,
      acsTransID: record.acsTransID,
      sdkTransID: record.sdkTransID,
      messageType: 'CRes',
      messageVersion: creq.messageVersion,
      acsCounterAtoS: record.nextAcsCounter,
      ...(record.transStatus
        ? { challengeCompletionInd: 'Y', transStatus: record.transStatus }
        : {
            challengeCompletionInd: 'N',
            acsUiType: '01',
            challengeInfoHeader: 'Confirm your payment',
            challengeInfoText: text,
            challengeInfoLabel: 'Code',
            submitAuthenticationLabel: 'Confirm',
          }),
    };
    record.exchanged.push({ sdkCounterStoA: record.nextSdkCounter, acsCounterAtoS: record.nextAcsCounter });
    record.nextSdkCounter = nextCounter(record.nextSdkCounter);
    record.nextAcsCounter = nextCounter(record.nextAcsCounter);
    this.store.set(kid, JSON.stringify(record));
    return new Response(await encryptChallengeMessage(cres, key, kid), {
      headers: { 'content-type': 'application/jose' },
    });
  }
}

/** An Erro: plain JSON, HTTP 200 (CONTRACT.md §12: the SDK may not be able to decrypt anything). */
function erro(errorCode: string, errorDescription: string): Response {
  return Response.json({ messageType: 'Erro', errorCode, errorComponent: 'A', errorDescription });
}
