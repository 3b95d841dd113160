/**
 * Makes the test PKI of the EMV app channel (scripts/make-test-pki.ts writes it to
 * data/test-pki.json): the Directory Server CA, the ACS certificate it issues, the Directory
 * Server's encryption key. WebCrypto and @peculiar/x509 only, so that the Worker tests can make
 * another PKI inside workerd (an ACS under another CA). TEST ONLY: see make-test-pki.ts.
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

export const NOT_BEFORE = new Date('2026-01-01T00:00:00Z');
export const NOT_AFTER = new Date('2046-01-01T00:00:00Z');
const SIGNING = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** What data/test-pki.json holds. */
export interface TestPki {
  warning: string;
  directoryServer: {
    /** PEM. */
    caCertificate: string;
    /** ECDH-ES key for `encData`: the public JWK the service publishes, and its private JWK. */
    encryptionKey: { publicJwk: JsonWebKey; privateJwk: JsonWebKey };
  };
  acs: {
    /** PEM, issued by the CA above. */
    certificate: string;
    /** ECDSA P-256 private JWK of the certificate's key. */
    privateJwk: JsonWebKey;
  };
  /** `acsSignedContent`'s `x5c`: the ACS certificate then the CA certificate, base64 DER. */
  x5c: [string, string];
}

/** Whose PKI it is: the names in its certificates, and the warning the file carries. */
export interface PkiOwner {
  name: string;
  organisation: string;
  warning: string;
}

/** The test issuer's (data/test-pki.json). */
export const TEST_ISSUER: PkiOwner = {
  name: 'card-edge Test',
  organisation: 'card-edge test PKI',
  warning:
    'TEST ONLY: test PKI of the EMV app channel, made by scripts/make-test-pki.ts. Its private keys are public; ' +
    'the service uses and publishes these in the test environment only. Never use them in live.',
};

/** The fake 3DS Server provider's Directory Server and ACS (data/fake-pki.json): another CA, as another scheme's. */
export const FAKE_PROVIDER: PkiOwner = {
  name: 'fake-3ds-server',
  organisation: 'card-edge fake provider PKI',
  warning:
    'TEST ONLY: PKI of the fake 3DS Server provider (src/fake-3ds-server), made by scripts/make-test-pki.ts --fake. ' +
    'Its private keys are public; only the fake uses them. Never use them anywhere else.',
};

/** A JWK with only the members of the key (WebCrypto adds `ext` and `key_ops`). */
function keyMembers(jwk: JsonWebKey): JsonWebKey {
  const { kty, crv, x, y, d } = jwk;
  return d === undefined ? { kty, crv, x, y } : { kty, crv, x, y, d };
}

/** A positive 128-bit serial number (RFC 5280 §4.1.2.2: at most 20 octets, positive). */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x10;
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * An extractable EC P-256 key pair. (Typed through `unknown`: the file is checked both with the
 * DOM's types, where generateKey gives a pair, and with the Workers' types, a key or a pair.)
 */
async function keyPair(
  algorithm: { name: string; namedCurve: string },
  usages: ('sign' | 'verify' | 'deriveBits')[],
): Promise<CryptoKeyPair> {
  const pair: unknown = await crypto.subtle.generateKey(algorithm, true, usages);
  return pair as CryptoKeyPair;
}

/**
 * A new test PKI (see scripts/make-test-pki.ts). `validity` is for the tests that need another
 * CA or other dates; the committed PKI uses the defaults.
 */
export async function makeTestPki(
  validity: { notBefore: Date; notAfter: Date } = { notBefore: NOT_BEFORE, notAfter: NOT_AFTER },
  owner: PkiOwner = TEST_ISSUER,
): Promise<TestPki> {
  x509.cryptoProvider.set(crypto);
  const caKeys = await keyPair(SIGNING, ['sign', 'verify']);
  const acsKeys = await keyPair(SIGNING, ['sign', 'verify']);
  const dsEncryption = await keyPair({ name: 'ECDH', namedCurve: 'P-256' }, ['deriveBits']);

  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${owner.name} Directory Server CA (TEST ONLY),O=${owner.organisation}`,
    notBefore: validity.notBefore,
    notAfter: validity.notAfter,
    signingAlgorithm: SIGNING,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const acs = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${owner.name} ACS (TEST ONLY),O=${owner.organisation}`,
    issuer: ca.subject,
    notBefore: validity.notBefore,
    notAfter: validity.notAfter,
    signingAlgorithm: SIGNING,
    publicKey: acsKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
      await x509.SubjectKeyIdentifierExtension.create(acsKeys.publicKey),
    ],
  });

  const jwk = async (key: CryptoKey) => {
    const exported: unknown = await crypto.subtle.exportKey('jwk', key);
    return keyMembers(exported as JsonWebKey);
  };
  return {
    warning: owner.warning,
    directoryServer: {
      caCertificate: ca.toString('pem'),
      encryptionKey: { publicJwk: await jwk(dsEncryption.publicKey), privateJwk: await jwk(dsEncryption.privateKey) },
    },
    acs: { certificate: acs.toString('pem'), privateJwk: await jwk(acsKeys.privateKey) },
    x5c: [acs.toString('base64'), ca.toString('base64')],
  };
}
