import { beforeEach, describe, expect, it } from 'vitest';
import testPki from '../../data/test-pki.json';
import { toBase64Url, utf8 } from '../../src/bytes';
import { emvMessageProblems } from '../../src/emv/emv-validator';
import type { EmvVersion } from '../../src/emv/emv-rules';
import {
  decryptChallengeMessage,
  encryptChallengeMessage,
  deriveSecureChannelKey,
  generateEphemeralKeyPair,
} from '../../src/emv/secure-channel';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { createTransaction, type AuthenticationParameters, type SdkTransaction } from '../sdk/test-sdk';
import {
  advanceClock,
  api,
  areqFor,
  base64UrlText,
  expectAres,
  expectErro,
  fake,
  fakeFetch,
  preauth,
  resetFake,
  transaction,
  type Json,
} from './fake-client';

/**
 * The fake's app channel (docs/fake-3ds-server.md "The app channel"): its Directory Server opens
 * `sdkEncData` with its own key and its ACS signs `acsSignedContent` under its own CA; an app's
 * SDK (the repository's test SDK) runs the challenge against its CReq endpoint over the secure
 * channel; the result is the RReq that /postauth returns, as for a browser.
 */

beforeEach(resetFake);

const only = (version: EmvVersion): string => ({ '2.1.0': '1', '2.2.0': '2', '2.3.1': '3' })[version];
const BROWSER_FIELDS = [
  'browserAcceptHeader',
  'browserUserAgent',
  'browserLanguage',
  'browserColorDepth',
  'browserJavaEnabled',
  'browserJavascriptEnabled',
  'browserScreenHeight',
  'browserScreenWidth',
  'browserTZ',
  'acceptLanguage',
  'notificationURL',
];

async function directoryServer(): Promise<{ encryptionKey: JsonWebKey; caCertificate: string }> {
  const answer = await fake('/_fake/directory-server');
  expect(answer.status).toBe(200);
  return answer.json();
}

async function sdkFor(version: EmvVersion, maxTimeout = 10): Promise<SdkTransaction> {
  return createTransaction({
    directoryServer: await directoryServer(),
    sdkReferenceNumber: 'CARD-EDGE-TEST-SDK',
    messageVersion: version,
    maxTimeout,
  });
}

/** An app AReq (deviceChannel 01) of `version` with the SDK's fields, as the service builds it. */
function appAReq(version: EmvVersion, sdk: AuthenticationParameters, fields: Json): Json {
  const areq = areqFor(version, {
    deviceChannel: '01',
    sdkAppID: sdk.appId,
    sdkEncData: sdk.encData,
    sdkEphemPubKey: sdk.ephemeralPublicKey,
    sdkMaxTimeout: String(sdk.maxTimeout).padStart(2, '0'),
    sdkReferenceNumber: sdk.referenceNumber,
    sdkTransID: sdk.transactionId,
    deviceRenderOptions: {
      sdkInterface: { native: '01', html: '02', both: '03' }[sdk.interface],
      sdkUiType: ['01', '02', '03', '04', '05'],
    },
    ...(version === '2.3.1' ? { sdkType: '01', defaultSdkType: { sdkVariant: '01' } } : {}),
    ...fields,
  });
  for (const name of BROWSER_FIELDS) delete areq[name];
  return areq;
}

async function authenticateApp(
  suffix: string,
  version: EmvVersion,
  sdk: SdkTransaction,
  fields: Json = {},
): Promise<{ areq: Json; answer: Awaited<ReturnType<typeof api>> }> {
  const acctNumber = scenarioCard(`${only(version)}1${suffix}`);
  const crd = await preauth(acctNumber);
  const areq = appAReq(version, sdk.authenticationParameters(), {
    threeDSServerTransID: crd.threeDSServerTransID,
    acctNumber,
    ...fields,
  });
  expect(emvMessageProblems('AReq', version, areq), JSON.stringify(areq)).toEqual([]);
  return { areq, answer: await api('auth', areq) };
}

/** What the service gives the app for `doChallenge`, from the ARes. */
function payloadOf(ares: Json): string {
  const { threeDSServerTransID, acsTransID, acsReferenceNumber, acsSignedContent } = ares;
  return toBase64Url(
    utf8(JSON.stringify({ threeDSServerTransID, acsTransID, acsRefNumber: acsReferenceNumber, acsSignedContent })),
  );
}

const postauth = (ares: Json) => api('postauth', { threeDSServerTransID: ares.threeDSServerTransID });

describe('the fake Directory Server of the app channel', () => {
  it('publishes its own encryption key and CA, not the service test issuer’s', async () => {
    const published = await directoryServer();
    expect(published.encryptionKey).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(published.encryptionKey).not.toHaveProperty('d');
    expect(published.caCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(published.caCertificate).not.toBe(testPki.directoryServer.caCertificate);
    expect(published.encryptionKey).not.toEqual(testPki.directoryServer.encryptionKey.publicJwk);
  });

  it('refuses encData made for another Directory Server, a key off the curve and an HTML UI on a native SDK: Erro 203 (D) naming the field', async () => {
    const other = await createTransaction({
      directoryServer: {
        encryptionKey: testPki.directoryServer.encryptionKey.publicJwk,
        caCertificate: testPki.directoryServer.caCertificate,
      },
      sdkReferenceNumber: 'CARD-EDGE-TEST-SDK',
    });
    const wrongDs = await authenticateApp('00', '2.2.0', other);
    expect(expectErro(wrongDs.answer, '203', 'D').errorDetail).toBe('sdkEncData');

    const sdk = await sdkFor('2.2.0');
    const key = sdk.authenticationParameters().ephemeralPublicKey;
    const offCurve = await authenticateApp('00', '2.2.0', sdk, { sdkEphemPubKey: { ...key, y: key.x } });
    expect(expectErro(offCurve.answer, '203', 'D').errorDetail).toBe('sdkEphemPubKey');

    // EMV: the HTML UI type (05) is an HTML interface's, not a native-only SDK's.
    const native = await authenticateApp('00', '2.2.0', await sdkFor('2.2.0'), {
      deviceRenderOptions: { sdkInterface: '01', sdkUiType: ['01', '05'] },
    });
    expect(expectErro(native.answer, '203', 'D').errorDetail).toBe('deviceRenderOptions.sdkUiType');
  });
});

describe('app frictionless', () => {
  it.each(['2.1.0', '2.2.0', '2.3.1'] as const)(
    'answers Y with the SDK transaction id, no acsURL; %s',
    async (version) => {
      const sdk = await sdkFor(version);
      const { areq, answer } = await authenticateApp('00', version, sdk);
      const ares = expectAres(answer);
      expect(emvMessageProblems('ARes', version, ares, areq)).toEqual([]);
      expect(ares).toMatchObject({ transStatus: 'Y', sdkTransID: areq.sdkTransID });
      expect(ares.acsURL).toBeUndefined();
      expect(ares.acsSignedContent).toBeUndefined();
      if (version === '2.3.1') expect(ares).toMatchObject({ deviceInfoRecognisedVersion: '1.6' });
    },
  );

  it('takes no threeDSCompInd: an app has no 3DS Method', async () => {
    const sdk = await sdkFor('2.2.0');
    const { areq, answer } = await authenticateApp('00', '2.2.0', sdk);
    expect(areq.threeDSCompInd).toBeUndefined();
    expect(expectAres(answer).transStatus).toBe('Y');
  });
});

describe('app challenge (…72: a code; …70 passes, …71 fails at the first CReq)', () => {
  it.each(['2.1.0', '2.2.0', '2.3.1'] as const)(
    'signs acsSignedContent under its own CA; the test SDK enters 1234 and the RReq says Y; %s',
    async (version) => {
      const sdk = await sdkFor(version);
      const { areq, answer } = await authenticateApp('72', version, sdk);
      const ares = expectAres(answer);
      expect(emvMessageProblems('ARes', version, ares, areq)).toEqual([]);
      expect(ares).toMatchObject({ transStatus: 'C', acsRenderingType: { acsInterface: '01', acsUiTemplate: '01' } });
      expect(ares.acsURL).toBeUndefined();
      const screens: Json[] = [];
      const result = await sdk.doChallenge(payloadOf(ares), {
        fetch: fakeFetch,
        answer: (cres) => {
          screens.push(cres);
          return Promise.resolve({ code: '1234' });
        },
      });
      expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
      expect(screens).toHaveLength(1);
      expect(screens[0]).toMatchObject({ acsUiType: '01', challengeCompletionInd: 'N' });
      const rreq = (await postauth(ares)).json;
      expect(rreq).toMatchObject({ messageType: 'RReq', transStatus: 'Y', acsTransID: ares.acsTransID });
      expect(emvMessageProblems('RReq', version, rreq, areq)).toEqual([]);
    },
  );

  it('…70 passes and …71 fails at the first CReq', async () => {
    for (const [suffix, transStatus] of [
      ['70', 'Y'],
      ['71', 'N'],
    ] as const) {
      const sdk = await sdkFor('2.2.0');
      const ares = expectAres((await authenticateApp(suffix, '2.2.0', sdk)).answer);
      const result = await sdk.doChallenge(payloadOf(ares), {
        fetch: fakeFetch,
        answer: () => Promise.reject(new Error('no screen expected')),
      });
      expect(result).toMatchObject({ ok: true, transStatus });
      expect((await postauth(ares)).json).toMatchObject({ transStatus });
    }
  });

  it('three wrong codes fail (reason 19); cancel fails with challengeCancel 01', async () => {
    const wrong = await sdkFor('2.2.0');
    const ares = expectAres((await authenticateApp('72', '2.2.0', wrong)).answer);
    const failed = await wrong.doChallenge(payloadOf(ares), {
      fetch: fakeFetch,
      answer: () => Promise.resolve({ code: '0000' }),
    });
    expect(failed).toMatchObject({ ok: true, transStatus: 'N' });
    expect((await postauth(ares)).json).toMatchObject({
      transStatus: 'N',
      transStatusReason: '19',
      interactionCounter: '03',
    });

    const cancelling = await sdkFor('2.2.0');
    const cancelled = expectAres((await authenticateApp('72', '2.2.0', cancelling)).answer);
    const result = await cancelling.doChallenge(payloadOf(cancelled), {
      fetch: fakeFetch,
      answer: () => Promise.resolve({ cancel: true }),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'N' });
    expect((await postauth(cancelled)).json).toMatchObject({ transStatus: 'N', challengeCancel: '01' });
  });

  it('an SDK holding the test issuer’s CA refuses the fake ACS’s signed content', async () => {
    const sdk = await sdkFor('2.2.0');
    const ares = expectAres((await authenticateApp('72', '2.2.0', sdk)).answer);
    const misled = await createTransaction({
      directoryServer: { ...(await directoryServer()), caCertificate: testPki.directoryServer.caCertificate },
      sdkReferenceNumber: 'CARD-EDGE-TEST-SDK',
    });
    const result = await misled.doChallenge(payloadOf(ares), {
      fetch: fakeFetch,
      answer: () => Promise.resolve({ code: '1234' }),
    });
    expect(result).toMatchObject({ ok: false, problem: 'certificateNotIssuedByCa' });
  });

  it('answers Erro 302, changing nothing, to a CReq that does not open, before and after the end', async () => {
    const sdk = await sdkFor('2.2.0');
    const ares = expectAres((await authenticateApp('72', '2.2.0', sdk)).answer);
    const acsURL = `https://fake.test/acs/app/creq/${ares.threeDSServerTransID as string}`;
    const post = (body: string) =>
      fake(new URL(acsURL).pathname, { method: 'POST', headers: { 'Content-Type': 'application/jose' }, body });

    // Another key (not the SDK's): the JWE does not open.
    const stranger = await generateEphemeralKeyPair();
    const wrongKey = await deriveSecureChannelKey(stranger.privateKey, stranger.publicKey, 'X');
    const creq = {
      threeDSServerTransID: ares.threeDSServerTransID,
      acsTransID: ares.acsTransID,
      sdkTransID: ares.sdkTransID,
      messageType: 'CReq',
      messageVersion: '2.2.0',
      sdkCounterStoA: '000',
    };
    const unopened = await post(await encryptChallengeMessage(creq, wrongKey, ares.acsTransID));
    expect(unopened.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(await unopened.json()).toMatchObject({ messageType: 'Erro', errorCode: '302', errorComponent: 'A' });
    const before = await transaction(ares.threeDSServerTransID);
    expect(before.app).toMatchObject({ nextSdkCounter: '000', nextAcsCounter: '000' });

    // The SDK runs to the end; the fake's state then refuses any further CReq.
    const result = await sdk.doChallenge(payloadOf(ares), {
      fetch: fakeFetch,
      answer: () => Promise.resolve({ code: '1234' }),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
    const after = await transaction(ares.threeDSServerTransID);
    expect(after.app).toMatchObject({ nextSdkCounter: '002', nextAcsCounter: '002' });
    const late = await post(await encryptChallengeMessage(creq, wrongKey, ares.acsTransID));
    expect(await late.json()).toMatchObject({ messageType: 'Erro', errorCode: '302' });
    expect(await transaction(ares.threeDSServerTransID)).toEqual(after);
  });

  it('answers a replayed or skipped counter (302), another transaction’s ids and a CReq after the end (301) with an Erro that changes nothing', async () => {
    const sdk = await sdkFor('2.2.0');
    const params = sdk.authenticationParameters();
    // The test holds the SDK's key pair, to write CReqs an SDK never would.
    const raw = await generateEphemeralKeyPair();
    const ares = expectAres((await authenticateApp('72', '2.2.0', sdk, { sdkEphemPubKey: raw.publicKey })).answer);
    const signed = JSON.parse(base64UrlText((ares.acsSignedContent as string).split('.')[1]!)) as Json;
    const key = await deriveSecureChannelKey(raw.privateKey, signed.acsEphemPubKey, params.referenceNumber);
    const ids = {
      threeDSServerTransID: ares.threeDSServerTransID,
      acsTransID: ares.acsTransID,
      sdkTransID: params.transactionId,
    };
    const send = async (fields: Json): Promise<Json> => {
      const creq = { ...ids, messageType: 'CReq', messageVersion: '2.2.0', ...fields };
      const response = await fake(new URL(signed.acsURL as string).pathname, {
        method: 'POST',
        headers: { 'Content-Type': 'application/jose' },
        body: await encryptChallengeMessage(creq, key, ares.acsTransID as string),
      });
      if ((response.headers.get('Content-Type') ?? '').startsWith('application/json')) return response.json();
      const opened = await decryptChallengeMessage(new TextDecoder().decode(await response.arrayBuffer()), key);
      if (!opened.ok) throw new Error(`the CRes does not open: ${opened.problem}`);
      return opened.message;
    };
    const id = ares.threeDSServerTransID as string;
    expect(await send({ sdkCounterStoA: '000' })).toMatchObject({ messageType: 'CRes', acsCounterAtoS: '000' });
    const before = await transaction(id);
    expect(await send({ sdkCounterStoA: '000', challengeDataEntry: '1234' })).toMatchObject({
      messageType: 'Erro',
      errorCode: '302',
    });
    expect(await transaction(id)).toEqual(before);
    // Skipped: 002 where 001 is next.
    expect(await send({ sdkCounterStoA: '002', challengeDataEntry: '1234' })).toMatchObject({
      messageType: 'Erro',
      errorCode: '302',
    });
    expect(await transaction(id)).toEqual(before);
    // Another transaction's ids in the CReq (under this one's key and kid): not this transaction's.
    for (const other of [{ sdkTransID: crypto.randomUUID() }, { acsTransID: crypto.randomUUID() }]) {
      const erro = await send({ ...other, sdkCounterStoA: '001', challengeDataEntry: '1234' });
      expect(erro).toMatchObject({ messageType: 'Erro' });
      expect(['101', '102', '201', '203', '301']).toContain(erro.errorCode);
      expect(await transaction(id)).toEqual(before);
    }
    expect(await send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({
      messageType: 'CRes',
      challengeCompletionInd: 'Y',
      transStatus: 'Y',
    });
    const after = await transaction(id);
    expect(await send({ sdkCounterStoA: '002', challengeDataEntry: '0000' })).toMatchObject({
      messageType: 'Erro',
      errorCode: '301',
    });
    expect(await transaction(id)).toEqual(after);
    expect((await postauth(ares)).json).toMatchObject({ transStatus: 'Y' });
  });

  it('ends at the SDK’s maxTimeout: the RReq arrives then (N, challengeCancel 04) and a CReq gets Erro 402', async () => {
    const sdk = await sdkFor('2.2.0', 5);
    const ares = expectAres((await authenticateApp('72', '2.2.0', sdk)).answer);
    expectErro(await postauth(ares), '305');
    await advanceClock(5 * 60_000);
    expect((await postauth(ares)).json).toMatchObject({ transStatus: 'N', challengeCancel: '04' });
    const result = await sdk.doChallenge(payloadOf(ares), {
      fetch: fakeFetch,
      answer: () => Promise.resolve({ code: '1234' }),
    });
    expect(result).toMatchObject({ ok: false, problem: 'erroReceived', erro: { errorCode: '402' } });
  });

  it('decoupled works for an app as for a browser (…75: ARes D, the RReq 3 s later)', async () => {
    const sdk = await sdkFor('2.2.0');
    const { answer } = await authenticateApp('75', '2.2.0', sdk, {
      threeDSRequestorDecReqInd: 'Y',
      threeDSRequestorDecMaxTime: '00030',
    });
    const ares = expectAres(answer);
    expect(ares).toMatchObject({ transStatus: 'D', sdkTransID: sdk.authenticationParameters().transactionId });
    await advanceClock(3_000);
    expect((await postauth(ares)).json).toMatchObject({ transStatus: 'Y' });
  });
});
