import { compactDecrypt, importJWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import testPki from '../../data/test-pki.json';
import { fromBase64Url, toBase64Url, utf8 } from '../../src/bytes';
import { importAcsEphemeralKeySecret } from '../../src/emv/acs-ephemeral-key';
import { importAcsSigningKey, type AcsSigningIdentity } from '../../src/emv/acs-signed-content';
import { generateEphemeralKeyPair } from '../../src/emv/secure-channel';
import { makeTestPki } from '../../scripts/test-pki';
import { createTransaction, type ChallengeAnswer, type DirectoryServer, type SdkTransaction } from '../sdk/test-sdk';
import { CODE, MinimalAcs } from './minimal-acs';

/**
 * The test 3DS SDK (test/sdk/) inside workerd, against a minimal ACS made of the protocol modules
 * (src/emv/): what it refuses in `acsSignedContent`, and a whole text challenge with its counters,
 * the ACS continuing it on a fresh instance that keeps no key.
 */

const directoryServer: DirectoryServer = {
  encryptionKey: testPki.directoryServer.encryptionKey.publicJwk,
  caCertificate: testPki.directoryServer.caCertificate,
};
const SECRET = new Uint8Array(32).fill(9);

let identity: AcsSigningIdentity;
beforeAll(async () => {
  identity = { privateKey: await importAcsSigningKey(testPki.acs.privateJwk), x5c: [testPki.x5c[0]!, testPki.x5c[1]!] };
});

async function newAcs(store = new Map<string, string>(), signing = identity): Promise<MinimalAcs> {
  return new MinimalAcs(store, await importAcsEphemeralKeySecret(SECRET), signing);
}

function newTransaction(): Promise<SdkTransaction> {
  return createTransaction({ directoryServer, sdkReferenceNumber: 'CARD-EDGE-TEST-SDK' });
}

/** Answers each CRes with the next of `answers`, and keeps the CRes it was shown. */
function cardholder(...answers: ChallengeAnswer[]) {
  const shown: Record<string, unknown>[] = [];
  return {
    shown,
    answer: (cres: Record<string, unknown>) => {
      shown.push(cres);
      return Promise.resolve(answers.shift() ?? { cancel: true });
    },
  };
}

/** The payload with its acsSignedContent replaced. */
function withSignedContent(payload: string, acsSignedContent: string): string {
  const json = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)));
  return toBase64Url(utf8(JSON.stringify({ ...json, acsSignedContent })));
}

function signedContentOf(payload: string): string {
  return JSON.parse(new TextDecoder().decode(fromBase64Url(payload))).acsSignedContent;
}

describe('the test SDK: its transaction', () => {
  it("gives authenticate's deviceData.sdk, with encData that the Directory Server's key opens", async () => {
    const params = (await newTransaction()).authenticationParameters();
    expect(Object.keys(params).sort()).toEqual(
      [
        'appId',
        'encData',
        'ephemeralPublicKey',
        'interface',
        'maxTimeout',
        'referenceNumber',
        'transactionId',
        'uiTypes',
      ].sort(),
    );
    expect(params.ephemeralPublicKey).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: expect.any(String),
      y: expect.any(String),
    });
    // `both` by default: it offers every UI type, the HTML one among them (a native-only SDK may not).
    expect(params).toMatchObject({ maxTimeout: 10, referenceNumber: 'CARD-EDGE-TEST-SDK', interface: 'both' });
    expect(params.appId).toMatch(/^[0-9a-f-]{36}$/);
    expect(params.transactionId).toMatch(/^[0-9a-f-]{36}$/);

    const dsKey = await importJWK(testPki.directoryServer.encryptionKey.privateJwk, 'ECDH-ES');
    const { plaintext, protectedHeader } = await compactDecrypt(params.encData, dsKey);
    expect(protectedHeader).toMatchObject({ alg: 'ECDH-ES', enc: 'A128CBC-HS256' });
    expect(JSON.parse(new TextDecoder().decode(plaintext))).toMatchObject({ DV: '1.6' });
  });
});

describe('the test SDK: acsSignedContent', () => {
  it('refuses an altered acsSignedContent (a byte of its payload changed)', async () => {
    const tx = await newTransaction();
    const acs = await newAcs();
    const payload = await acs.challenge(tx.authenticationParameters());
    const [header, body, signature] = signedContentOf(payload).split('.');
    const json = JSON.parse(new TextDecoder().decode(fromBase64Url(body!)));
    const altered = toBase64Url(utf8(JSON.stringify({ ...json, acsURL: 'https://attacker.test/creq' })));
    const result = await tx.doChallenge(withSignedContent(payload, `${header}.${altered}.${signature}`), {
      ...cardholder(),
      fetch: () => Promise.reject(new Error('must not post')),
    });
    expect(result).toMatchObject({ ok: false, problem: 'acsSignedContentSignatureInvalid' });
  });

  it('refuses an ACS certificate issued by another CA, even one with the same name', async () => {
    const other = await makeTestPki();
    const tx = await newTransaction();
    const otherIdentity = {
      privateKey: await importAcsSigningKey(other.acs.privateJwk),
      x5c: [other.x5c[0], other.x5c[1]] as const,
    };
    const payload = await (await newAcs(new Map(), otherIdentity)).challenge(tx.authenticationParameters());
    const result = await tx.doChallenge(payload, cardholder());
    // Both CAs have the same name: only the signature tells them apart.
    expect(result).toMatchObject({ ok: false, problem: 'certificateNotIssuedByCa' });
    expect(result.ok || result.detail).toMatch(/signature|another CA/);

    // The other CA's leaf sent with the trusted CA in x5c: the signature check refuses it.
    const mixed = { ...otherIdentity, x5c: [other.x5c[0], testPki.x5c[1]!] as const };
    const mixedPayload = await (await newAcs(new Map(), mixed)).challenge(tx.authenticationParameters());
    expect(await tx.doChallenge(mixedPayload, cardholder())).toMatchObject({
      ok: false,
      problem: 'certificateNotIssuedByCa',
      detail: expect.stringMatching(/signature does not verify/),
    });
  });

  it('refuses an ACS certificate outside its validity at the time of the check', async () => {
    const tx = await newTransaction();
    const payload = await (await newAcs()).challenge(tx.authenticationParameters());
    for (const now of [new Date('2025-12-31T23:59:59Z'), new Date('2046-01-01T00:00:01Z')]) {
      expect(await tx.doChallenge(payload, { ...cardholder(), now })).toMatchObject({
        ok: false,
        problem: 'certificateOutsideValidity',
      });
    }
  });

  it('refuses a signed sdkEphemPubKey that is not its own', async () => {
    const tx = await newTransaction();
    const someoneElse = (await generateEphemeralKeyPair()).publicKey;
    const payload = await (await newAcs()).challenge(tx.authenticationParameters(), someoneElse);
    expect(await tx.doChallenge(payload, cardholder())).toMatchObject({ ok: false, problem: 'sdkEphemPubKeyMismatch' });
  });

  it('refuses a payload that is not base64url JSON', async () => {
    const tx = await newTransaction();
    expect(await tx.doChallenge('%%%', cardholder())).toMatchObject({ ok: false, problem: 'payloadMalformed' });
  });
});

describe('the test SDK: a text challenge with the minimal ACS', () => {
  it('completes with code 1234 (Y), the counters counting up on both sides', async () => {
    const tx = await newTransaction();
    const acs = await newAcs();
    const payload = await acs.challenge(tx.authenticationParameters());
    const person = cardholder({ code: CODE });
    const result = await tx.doChallenge(payload, { answer: person.answer, fetch: (r) => acs.fetch(r) });

    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
    expect(person.shown).toHaveLength(1);
    expect(person.shown[0]).toMatchObject({ messageType: 'CRes', acsUiType: '01', challengeCompletionInd: 'N' });
    const { acsTransID } = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)));
    expect(acs.record(acsTransID).exchanged).toEqual([
      { sdkCounterStoA: '000', acsCounterAtoS: '000' },
      { sdkCounterStoA: '001', acsCounterAtoS: '001' },
    ]);
  });

  it('fails (N) after three wrong codes', async () => {
    const tx = await newTransaction();
    const acs = await newAcs();
    const payload = await acs.challenge(tx.authenticationParameters());
    const person = cardholder({ code: '1111' }, { code: '2222' }, { code: '3333' }, { code: CODE });
    const result = await tx.doChallenge(payload, { answer: person.answer, fetch: (r) => acs.fetch(r) });
    expect(result).toMatchObject({ ok: true, transStatus: 'N' });
    expect(person.shown.map((c) => c.challengeInfoText)).toEqual([
      expect.stringContaining('Enter the code'),
      'Wrong code: 2 tries left.',
      'Wrong code: 1 tries left.',
    ]);
    const { acsTransID } = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)));
    expect(acs.record(acsTransID).exchanged.map((e) => e.sdkCounterStoA)).toEqual(['000', '001', '002', '003']);
  });

  it('ends (N) when the cardholder cancels', async () => {
    const tx = await newTransaction();
    const acs = await newAcs();
    const payload = await acs.challenge(tx.authenticationParameters());
    const result = await tx.doChallenge(payload, { ...cardholder({ cancel: true }), fetch: (r) => acs.fetch(r) });
    expect(result).toMatchObject({ ok: true, transStatus: 'N', cres: { challengeCompletionInd: 'Y' } });
  });

  it('is continued by a fresh ACS instance that has only the acsTransID, the SDK public key and the secret', async () => {
    const tx = await newTransaction();
    const store = new Map<string, string>();
    const payload = await (await newAcs(store)).challenge(tx.authenticationParameters());
    const { acsTransID } = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)));
    // What the ACS kept: ids, counters, the SDK's public key; no key of its own, private or derived.
    const kept = JSON.parse(store.get(acsTransID)!);
    expect(Object.keys(kept).sort()).toEqual(
      [
        'acsTransID',
        'exchanged',
        'nextAcsCounter',
        'nextSdkCounter',
        'sdkEphemPubKey',
        'sdkReferenceNumber',
        'sdkTransID',
        'threeDSServerTransID',
        'wrongCodes',
      ].sort(),
    );
    expect(Object.keys(kept.sdkEphemPubKey).sort()).toEqual(['crv', 'kty', 'x', 'y']);

    // Each CReq goes to a new instance: nothing in memory carries over.
    const result = await tx.doChallenge(payload, {
      ...cardholder({ code: '0000' }, { code: CODE }),
      fetch: async (request) => (await newAcs(store)).fetch(request),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
  });

  it('names the Erro the ACS answers (a CReq that does not decrypt)', async () => {
    const tx = await newTransaction();
    const acs = await newAcs();
    const payload = await acs.challenge(tx.authenticationParameters());
    const result = await tx.doChallenge(payload, {
      ...cardholder(),
      fetch: async (request) => {
        const [h, k, iv, ct, tag] = new TextDecoder().decode(await request.arrayBuffer()).split('.');
        const flipped = `${ct!.startsWith('A') ? 'B' : 'A'}${ct!.slice(1)}`;
        return acs.fetch(new Request(request.url, { method: 'POST', body: [h, k, iv, flipped, tag].join('.') }));
      },
    });
    expect(result).toMatchObject({
      ok: false,
      problem: 'erroReceived',
      erro: { messageType: 'Erro', errorCode: '302', errorComponent: 'A' },
    });
  });

  it('refuses a replayed CRes (acsCounterAtoS does not follow)', async () => {
    const tx = await newTransaction();
    const acs = await newAcs();
    const payload = await acs.challenge(tx.authenticationParameters());
    let first: string | undefined;
    const result = await tx.doChallenge(payload, {
      ...cardholder({ code: '0000' }),
      fetch: async (request) => {
        const answer = await acs.fetch(request);
        first ??= new TextDecoder().decode(await answer.clone().arrayBuffer());
        return new Response(first, { headers: { 'content-type': 'application/jose' } });
      },
    });
    expect(result).toMatchObject({ ok: false, problem: 'acsCounterMismatch' });
  });
});
