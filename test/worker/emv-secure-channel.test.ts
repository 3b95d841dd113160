import { describe, expect, it } from 'vitest';
import { fromBase64Url, toBase64Url } from '../../src/bytes';
import {
  acsEphemeralKeyPair,
  importAcsEphemeralKeySecret,
  p256KeyPairFromScalar,
} from '../../src/emv/acs-ephemeral-key';
import {
  challengeMessageKid,
  concatKdf,
  decryptChallengeMessage,
  deriveSecureChannelKey,
  ecdhSharedSecret,
  encryptChallengeMessage,
  FIRST_COUNTER,
  generateEphemeralKeyPair,
  isExpectedCounter,
  nextCounter,
} from '../../src/emv/secure-channel';

/**
 * The EMV SDK–ACS secure channel's primitives, inside workerd (no nodejs_compat): the Concat KDF
 * against RFC 7518's published example, the key both sides derive, the CReq/CRes JWEs, the
 * counters, and the ACS's re-derivable ephemeral key. test/scripts/emv-secure-channel-node.test.ts
 * checks the same against Node's own crypto.
 */

/** RFC 7518 Appendix C: Alice's ephemeral key and Bob's key. */
const ALICE = {
  kty: 'EC',
  crv: 'P-256',
  x: 'gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0',
  y: 'SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps',
  d: '0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo',
} as const;
const BOB = {
  kty: 'EC',
  crv: 'P-256',
  x: 'weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ',
  y: 'e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck',
  d: 'VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw',
} as const;

async function privateKeyOf(jwk: JsonWebKey): Promise<CryptoKey> {
  return crypto.subtle.importKey('jwk', jwk, { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
}

const publicOf = ({ x, y }: { x: string; y: string }) => ({ kty: 'EC' as const, crv: 'P-256' as const, x, y });

describe('Concat KDF', () => {
  it("reproduces RFC 7518 Appendix C's ECDH-ES key (A128GCM, Alice, Bob, 128 bits)", async () => {
    const z = await ecdhSharedSecret(await privateKeyOf(ALICE), publicOf(BOB));
    const key = await concatKdf(z, 128, { algorithmId: 'A128GCM', partyUInfo: 'Alice', partyVInfo: 'Bob' });
    expect(toBase64Url(key)).toBe('VqqN6vgjbSBcIijNcacQGg');
    // Bob, from his side, gets the same Z.
    expect(await ecdhSharedSecret(await privateKeyOf(BOB), publicOf(ALICE))).toEqual(z);
  });

  it('takes bytes as it takes their UTF-8 strings, and goes past one hash for longer keys', async () => {
    const z = new Uint8Array(32).fill(7);
    const asText = await concatKdf(z, 512, { algorithmId: '', partyUInfo: '', partyVInfo: 'ref' });
    const asBytes = await concatKdf(z, 512, {
      algorithmId: new Uint8Array(),
      partyUInfo: new Uint8Array(),
      partyVInfo: new TextEncoder().encode('ref'),
    });
    expect(asBytes).toEqual(asText);
    expect(asText).toHaveLength(64);
    // SuppPubInfo binds the length: a 512-bit key does not start with the 256-bit one.
    expect((await concatKdf(z, 256, { algorithmId: '', partyUInfo: '', partyVInfo: 'ref' })).slice(0, 32)).not.toEqual(
      asText.slice(0, 32),
    );
  });

  it('refuses a key length that is not whole bytes', async () => {
    await expect(
      concatKdf(new Uint8Array(32), 100, { algorithmId: '', partyUInfo: '', partyVInfo: '' }),
    ).rejects.toThrow(RangeError);
  });
});

describe('the SDK–ACS key', () => {
  it('is the same 32 bytes on both sides, and another reference number gives another key', async () => {
    const sdk = await generateEphemeralKeyPair();
    const acs = await generateEphemeralKeyPair();
    const onSdk = await deriveSecureChannelKey(sdk.privateKey, acs.publicKey, 'SDK-REF-1');
    const onAcs = await deriveSecureChannelKey(acs.privateKey, sdk.publicKey, 'SDK-REF-1');
    expect(onSdk).toHaveLength(32);
    expect(onAcs).toEqual(onSdk);
    expect(await deriveSecureChannelKey(acs.privateKey, sdk.publicKey, 'SDK-REF-2')).not.toEqual(onSdk);
  });

  it('keeps the ephemeral private key in memory only: it cannot be exported', async () => {
    const { privateKey, publicKey } = await generateEphemeralKeyPair();
    expect(privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', privateKey)).rejects.toThrow();
    expect(Object.keys(publicKey).sort()).toEqual(['crv', 'kty', 'x', 'y']);
  });
});

describe('CReq/CRes JWEs', () => {
  const key = new Uint8Array(32).map((_, i) => i);
  const creq = { messageType: 'CReq', acsTransID: 'a1', sdkCounterStoA: '000', challengeDataEntry: '1234' };

  it('round-trips with alg dir, enc A128CBC-HS256 and kid the ACS transaction id', async () => {
    const jwe = await encryptChallengeMessage(creq, key, 'a1');
    const header = JSON.parse(new TextDecoder().decode(fromBase64Url(jwe.split('.')[0]!)));
    expect(header).toEqual({ alg: 'dir', enc: 'A128CBC-HS256', kid: 'a1' });
    expect(challengeMessageKid(jwe)).toBe('a1');
    expect(await decryptChallengeMessage(jwe, key)).toEqual({ ok: true, message: creq, kid: 'a1' });
  });

  it('answers a typed problem, never a thrown library error, for what does not open', async () => {
    const jwe = await encryptChallengeMessage(creq, key, 'a1');
    const otherKey = key.map((b) => b ^ 1);
    expect(await decryptChallengeMessage(jwe, otherKey)).toEqual({ ok: false, problem: 'decryptionFailed' });
    const parts = jwe.split('.');
    const flipped = parts[3]!.startsWith('A') ? `B${parts[3]!.slice(1)}` : `A${parts[3]!.slice(1)}`;
    const altered = [...parts.slice(0, 3), flipped, parts[4]].join('.');
    expect(await decryptChallengeMessage(altered, key)).toEqual({ ok: false, problem: 'decryptionFailed' });
    expect(await decryptChallengeMessage('not a jwe', key)).toEqual({ ok: false, problem: 'notCompactJwe' });
    expect(challengeMessageKid('not a jwe')).toBeNull();

    const gcm = await new (await import('jose')).CompactEncrypt(new TextEncoder().encode('{}'))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'a1' })
      .encrypt(key);
    expect(await decryptChallengeMessage(gcm, key)).toEqual({ ok: false, problem: 'algorithmNotAllowed' });

    const notJson = await new (await import('jose')).CompactEncrypt(new TextEncoder().encode('[1]'))
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256' })
      .encrypt(key);
    expect(await decryptChallengeMessage(notJson, key)).toEqual({ ok: false, problem: 'notJsonObject' });
  });
});

describe('counters', () => {
  it('count up from 000 in three digits', () => {
    expect(FIRST_COUNTER).toBe('000');
    expect(nextCounter('000')).toBe('001');
    expect(nextCounter('009')).toBe('010');
    expect(nextCounter('998')).toBe('999');
    expect(() => nextCounter('999')).toThrow(RangeError);
    expect(() => nextCounter('1')).toThrow(RangeError);
  });

  it('accept exactly the expected counter', () => {
    expect(isExpectedCounter('001', '001')).toBe(true);
    expect(isExpectedCounter('002', '001')).toBe(false);
    expect(isExpectedCounter('000', '001')).toBe(false);
    expect(isExpectedCounter('1', '001')).toBe(false);
    expect(isExpectedCounter(1, '001')).toBe(false);
  });
});

describe("the ACS's re-derivable ephemeral key", () => {
  const secretBytes = new Uint8Array(32).fill(42);

  it("computes the public point of a scalar: RFC 7518's Alice from her d alone", async () => {
    const { privateKey, publicKey } = await p256KeyPairFromScalar(fromBase64Url(ALICE.d));
    expect(publicKey).toEqual(publicOf(ALICE));
    expect(privateKey.extractable).toBe(false);
  });

  it('is the same pair for the same acsTransID on a fresh instance, another for another id', async () => {
    const first = await acsEphemeralKeyPair(await importAcsEphemeralKeySecret(secretBytes), 'acs-1');
    const again = await acsEphemeralKeyPair(await importAcsEphemeralKeySecret(secretBytes.slice()), 'acs-1');
    expect(again.publicKey).toEqual(first.publicKey);
    const other = await acsEphemeralKeyPair(await importAcsEphemeralKeySecret(secretBytes), 'acs-2');
    expect(other.publicKey).not.toEqual(first.publicKey);
    const otherSecret = await acsEphemeralKeyPair(
      await importAcsEphemeralKeySecret(secretBytes.map((b) => b + 1)),
      'acs-1',
    );
    expect(otherSecret.publicKey).not.toEqual(first.publicKey);

    // The re-derived private key opens what the SDK sent to the first one's public key.
    const sdk = await generateEphemeralKeyPair();
    const onSdk = await deriveSecureChannelKey(sdk.privateKey, first.publicKey, 'REF');
    expect(await deriveSecureChannelKey(again.privateKey, sdk.publicKey, 'REF')).toEqual(onSdk);
  });

  it('refuses a secret shorter than 32 bytes', async () => {
    await expect(importAcsEphemeralKeySecret(new Uint8Array(16))).rejects.toThrow(RangeError);
  });
});
