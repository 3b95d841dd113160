import { createECDH, createHash, createPrivateKey, createPublicKey, hkdfSync, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import testPki from '../../data/test-pki.json';
import {
  acsEphemeralKeyPair,
  importAcsEphemeralKeySecret,
  p256KeyPairFromScalar,
} from '../../src/emv/acs-ephemeral-key';
import { importAcsSigningKey } from '../../src/emv/acs-signed-content';
import { deriveSecureChannelKey, type P256PublicJwk } from '../../src/emv/secure-channel';
import { NOT_AFTER, NOT_BEFORE } from '../../scripts/test-pki';
import { createTransaction } from '../sdk/test-sdk';
import { CODE, MinimalAcs } from '../worker/minimal-acs';

/**
 * The app channel's cryptography against Node's own (OpenSSL), independent of WebCrypto and jose:
 * the SDK–ACS key, the ACS's re-derived ephemeral key, the committed test PKI; and the test SDK
 * running on Node, as a terminal example will run it.
 */

/** Concat KDF as RFC 7518 §4.6.2 writes it out, with node:crypto's SHA-256 (one round: 256 bits). */
function nodeConcatKdf256(z: Buffer, partyVInfo: string): Buffer {
  const len = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const v = Buffer.from(partyVInfo, 'utf8');
  const otherInfo = Buffer.concat([len(0), len(0), len(v.length), v, len(256)]);
  return createHash('sha256').update(len(1)).update(z).update(otherInfo).digest();
}

function nodePublicJwk(ecdh: ReturnType<typeof createECDH>): P256PublicJwk {
  const point = ecdh.getPublicKey();
  return {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
}

const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

describe('the app channel against node:crypto', () => {
  it('derives the SDK–ACS key as ECDH and Concat KDF computed by OpenSSL do', async () => {
    const acs = createECDH('prime256v1');
    acs.generateKeys();
    const sdk = createECDH('prime256v1');
    sdk.generateKeys();
    const expected = nodeConcatKdf256(acs.computeSecret(sdk.getPublicKey()), 'SDK-REF-7');

    const sdkPrivate = await crypto.subtle.importKey(
      'jwk',
      { ...nodePublicJwk(sdk), d: sdk.getPrivateKey().toString('base64url') },
      { name: 'ECDH', namedCurve: 'P-256' },
      false,
      ['deriveBits'],
    );
    const key = await deriveSecureChannelKey(sdkPrivate, nodePublicJwk(acs), 'SDK-REF-7');
    expect(Buffer.from(key).toString('hex')).toBe(expected.toString('hex'));
  });

  it("computes the ACS ephemeral key's public point as OpenSSL does, from the same HKDF bits", async () => {
    const secret = Buffer.alloc(32, 5);
    const acsTransID = '8a880dc0-d2d2-4067-bcb1-b08d1690b26e';
    const bits = hkdfSync(
      'sha256',
      secret,
      Buffer.alloc(0),
      `card-edge EMV ACS ephemeral key v1\u0000${acsTransID}`,
      40,
    );
    const d = (BigInt(`0x${Buffer.from(bits).toString('hex')}`) % (P256_ORDER - 1n)) + 1n;
    const node = createECDH('prime256v1');
    node.setPrivateKey(Buffer.from(d.toString(16).padStart(64, '0'), 'hex'));

    const { publicKey } = await acsEphemeralKeyPair(await importAcsEphemeralKeySecret(secret), acsTransID);
    expect(publicKey).toEqual(nodePublicJwk(node));

    const random = createECDH('prime256v1');
    random.generateKeys();
    const scalar = Buffer.from(random.getPrivateKey('hex').padStart(64, '0'), 'hex');
    expect((await p256KeyPairFromScalar(scalar)).publicKey).toEqual(nodePublicJwk(random));
  });
});

describe('the committed test PKI (data/test-pki.json), read by OpenSSL', () => {
  const ca = new X509Certificate(testPki.directoryServer.caCertificate);
  const acs = new X509Certificate(testPki.acs.certificate);

  it('has a CA that signs itself and the ACS certificate, valid 2026-01-01 to 2046-01-01', () => {
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(acs.ca).toBe(false);
    expect(acs.checkIssued(ca)).toBe(true);
    expect(acs.verify(ca.publicKey)).toBe(true);
    for (const cert of [ca, acs]) {
      expect(new Date(cert.validFrom)).toEqual(NOT_BEFORE);
      expect(new Date(cert.validTo)).toEqual(NOT_AFTER);
      expect(cert.subject).toContain('TEST ONLY');
    }
    expect(testPki.x5c).toEqual([acs.raw.toString('base64'), ca.raw.toString('base64')]);
  });

  it("holds the ACS certificate's private key, and a P-256 encryption key pair", async () => {
    const acsPrivate = createPrivateKey({
      key: testPki.acs.privateJwk as import('node:crypto').JsonWebKey,
      format: 'jwk',
    });
    expect(createPublicKey(acsPrivate).export({ format: 'jwk' })).toEqual(acs.publicKey.export({ format: 'jwk' }));
    await expect(importAcsSigningKey(testPki.acs.privateJwk)).resolves.toBeDefined();

    const { publicJwk, privateJwk } = testPki.directoryServer.encryptionKey;
    expect(publicJwk).toEqual({ kty: 'EC', crv: 'P-256', x: privateJwk.x, y: privateJwk.y });
    const dsPrivate = createPrivateKey({ key: privateJwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    expect(createPublicKey(dsPrivate).export({ format: 'jwk' })).toEqual(publicJwk);
  });
});

describe('the test SDK on Node', () => {
  it('completes a text challenge with the minimal ACS', async () => {
    const tx = await createTransaction({
      directoryServer: {
        encryptionKey: testPki.directoryServer.encryptionKey.publicJwk,
        caCertificate: testPki.directoryServer.caCertificate,
      },
      sdkReferenceNumber: 'CARD-EDGE-TEST-SDK',
    });
    const acs = new MinimalAcs(new Map(), await importAcsEphemeralKeySecret(new Uint8Array(32).fill(1)), {
      privateKey: await importAcsSigningKey(testPki.acs.privateJwk),
      x5c: [testPki.x5c[0]!, testPki.x5c[1]!],
    });
    const payload = await acs.challenge(tx.authenticationParameters());
    const result = await tx.doChallenge(payload, {
      answer: () => Promise.resolve({ code: CODE }),
      fetch: (request) => acs.fetch(request),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
  });
});
