/**
 * What the test 3DS SDK checks of `acsSignedContent`'s `x5c` before it trusts the ACS's key: the
 * ACS certificate is issued by the Directory Server CA it was given (issuer name and ECDSA
 * signature), the chain names that CA, and both certificates are valid at the time of the check.
 * A small DER reader of its own, with WebCrypto alone, so that the SDK runs unchanged in workerd
 * and on Node and checks the test PKI independently of the library that made it
 * (scripts/make-test-pki.ts). Scope: EC P-256 certificates signed with ecdsa-with-SHA256, the only
 * kind the test PKIs hold; no revocation, no name constraints, no path longer than the CA.
 */
import { fromBase64 } from '../../src/bytes';

/** Why a chain was refused. */
export type CertificateProblem =
  /** Not DER the reader understands, or not an EC P-256 key. */
  | 'certificateMalformed'
  /** The ACS certificate names another issuer, its signature does not verify with the CA's key, or x5c names another CA. */
  | 'certificateNotIssuedByCa'
  /** The ACS certificate or the CA certificate is not valid at the time of the check. */
  | 'certificateOutsideValidity';

export type ChainCheck = { ok: true; acsKey: CryptoKey } | { ok: false; problem: CertificateProblem; detail: string };

interface Tlv {
  tag: number;
  /** Where the element starts (its tag) and where its content starts and ends. */
  start: number;
  contentStart: number;
  end: number;
}

interface Certificate {
  der: Uint8Array<ArrayBuffer>;
  tbs: Uint8Array<ArrayBuffer>;
  signatureAlgorithm: string;
  signature: Uint8Array<ArrayBuffer>;
  issuer: Uint8Array<ArrayBuffer>;
  subject: Uint8Array<ArrayBuffer>;
  notBefore: Date;
  notAfter: Date;
  spki: Uint8Array<ArrayBuffer>;
  isCa: boolean;
}

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const BASIC_CONSTRAINTS = '2.5.29.19';
const P256 = { name: 'ECDSA', namedCurve: 'P-256' };

/**
 * Checks `x5c` (base64 DER: the ACS certificate, then the CA's) against the CA certificate the SDK
 * trusts (PEM), at `at`; gives the ACS certificate's key to verify the JWS with.
 */
export async function checkAcsChain(x5c: unknown, caPem: string, at: Date): Promise<ChainCheck> {
  let ca: Certificate;
  let leaf: Certificate;
  try {
    ca = parseCertificate(derOfPem(caPem));
    if (!Array.isArray(x5c) || x5c.length < 1 || !x5c.every((c) => typeof c === 'string')) {
      return { ok: false, problem: 'certificateMalformed', detail: 'x5c is not a list of base64 certificates' };
    }
    leaf = parseCertificate(fromBase64(x5c[0] as string));
    if (x5c.length > 2) return notIssued('x5c holds more than [ACS certificate, CA certificate]');
    if (x5c.length === 2 && !equalBytes(fromBase64(x5c[1] as string), ca.der)) return notIssued('x5c names another CA');
  } catch (e) {
    return { ok: false, problem: 'certificateMalformed', detail: (e as Error).message };
  }
  if (!ca.isCa) return notIssued('the trusted certificate is not a CA');
  if (!equalBytes(leaf.issuer, ca.subject)) return notIssued('the ACS certificate names another issuer');
  if (leaf.signatureAlgorithm !== ECDSA_WITH_SHA256) {
    return { ok: false, problem: 'certificateMalformed', detail: `signature algorithm ${leaf.signatureAlgorithm}` };
  }
  let caKey: CryptoKey;
  let acsKey: CryptoKey;
  try {
    caKey = await crypto.subtle.importKey('spki', ca.spki, P256, false, ['verify']);
    acsKey = await crypto.subtle.importKey('spki', leaf.spki, P256, false, ['verify']);
  } catch (e) {
    return { ok: false, problem: 'certificateMalformed', detail: `not an EC P-256 key: ${(e as Error).message}` };
  }
  const signature = rawEcdsaSignature(leaf.signature);
  if (!signature || !(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, caKey, signature, leaf.tbs))) {
    return notIssued("the ACS certificate's signature does not verify with the CA's key");
  }
  for (const [what, cert] of [
    ['ACS certificate', leaf],
    ['CA certificate', ca],
  ] as const) {
    if (at < cert.notBefore || at > cert.notAfter) {
      return {
        ok: false,
        problem: 'certificateOutsideValidity',
        detail: `the ${what} is valid from ${cert.notBefore.toISOString()} to ${cert.notAfter.toISOString()}, not at ${at.toISOString()}`,
      };
    }
  }
  return { ok: true, acsKey };
}

function notIssued(detail: string): ChainCheck {
  return { ok: false, problem: 'certificateNotIssuedByCa', detail };
}

/** The DER of the first certificate in a PEM text. */
export function derOfPem(pem: string): Uint8Array<ArrayBuffer> {
  const match = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
  if (!match) throw new Error('no PEM certificate');
  return fromBase64(match[1]!.replace(/\s+/g, ''));
}

function parseCertificate(der: Uint8Array<ArrayBuffer>): Certificate {
  const cert = readTlv(der, 0);
  if (cert.tag !== 0x30 || cert.end !== der.length) throw new Error('not a DER certificate');
  const [tbs, signatureAlgorithm, signatureValue] = childrenOf(der, cert);
  if (!tbs || !signatureAlgorithm || signatureValue?.tag !== 0x03) throw new Error('not a certificate');
  const fields = childrenOf(der, tbs);
  // version [0] is optional (v1 certificates omit it).
  if (fields[0]?.tag === 0xa0) fields.shift();
  const [, , issuer, validity, subject, spki, ...rest] = fields;
  if (!issuer || !validity || !subject || !spki) throw new Error('the certificate lacks a field');
  const [notBefore, notAfter] = childrenOf(der, validity);
  if (!notBefore || !notAfter) throw new Error('the certificate lacks its validity');
  const extensions = rest.find((t) => t.tag === 0xa3);
  return {
    der,
    tbs: der.subarray(tbs.start, tbs.end),
    signatureAlgorithm: oidOf(der, childrenOf(der, signatureAlgorithm)[0]),
    // A BIT STRING's first content byte counts its unused bits: 0 for a signature.
    signature: der.subarray(signatureValue.contentStart + 1, signatureValue.end),
    issuer: der.subarray(issuer.start, issuer.end),
    subject: der.subarray(subject.start, subject.end),
    notBefore: timeOf(der, notBefore),
    notAfter: timeOf(der, notAfter),
    spki: der.subarray(spki.start, spki.end),
    isCa: extensions ? basicConstraintsCa(der, extensions) : false,
  };
}

function basicConstraintsCa(der: Uint8Array<ArrayBuffer>, extensions: Tlv): boolean {
  const list = childrenOf(der, extensions)[0];
  for (const extension of list ? childrenOf(der, list) : []) {
    const parts = childrenOf(der, extension);
    if (oidOf(der, parts[0]) !== BASIC_CONSTRAINTS) continue;
    const value = parts[parts.length - 1]!;
    const constraints = readTlv(der, value.contentStart);
    const ca = childrenOf(der, constraints)[0];
    return ca?.tag === 0x01 && der[ca.contentStart] !== 0;
  }
  return false;
}

function readTlv(der: Uint8Array<ArrayBuffer>, start: number): Tlv {
  const tag = der[start];
  let length = der[start + 1];
  if (tag === undefined || length === undefined) throw new Error('DER cut short');
  let contentStart = start + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets < 1 || octets > 3) throw new Error('DER length out of range');
    length = 0;
    for (let i = 0; i < octets; i++) length = (length << 8) | der[contentStart + i]!;
    contentStart += octets;
  }
  const end = contentStart + length;
  if (end > der.length) throw new Error('DER cut short');
  return { tag, start, contentStart, end };
}

function childrenOf(der: Uint8Array<ArrayBuffer>, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = parent.contentStart; at < parent.end;) {
    const child = readTlv(der, at);
    if (child.end > parent.end) throw new Error('DER element overruns its parent');
    out.push(child);
    at = child.end;
  }
  return out;
}

function oidOf(der: Uint8Array<ArrayBuffer>, tlv: Tlv | undefined): string {
  if (tlv?.tag !== 0x06) throw new Error('expected an OBJECT IDENTIFIER');
  const bytes = der.subarray(tlv.contentStart, tlv.end);
  const arcs: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

/** UTCTime (YYMMDDHHMMSSZ, RFC 5280: 50–99 are 19xx) or GeneralizedTime (YYYYMMDDHHMMSSZ). */
function timeOf(der: Uint8Array<ArrayBuffer>, tlv: Tlv): Date {
  const text = new TextDecoder().decode(der.subarray(tlv.contentStart, tlv.end));
  const utc = tlv.tag === 0x17 && /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  const generalized = tlv.tag === 0x18 && /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  const m = utc || generalized;
  if (!m) throw new Error(`certificate time ${JSON.stringify(text)} is not UTCTime or GeneralizedTime`);
  const year = utc ? (Number(m[1]) < 50 ? 2000 : 1900) + Number(m[1]) : Number(m[1]);
  return new Date(Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
}

/** ECDSA-Sig-Value (DER SEQUENCE of r, s) as WebCrypto's r ‖ s, 32 bytes each; null when malformed. */
function rawEcdsaSignature(der: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> | null {
  try {
    const sequence = readTlv(der, 0);
    const [r, s] = childrenOf(der, sequence);
    if (sequence.tag !== 0x30 || r?.tag !== 0x02 || s?.tag !== 0x02) return null;
    const out = new Uint8Array(64);
    for (const [i, n] of [r, s].entries()) {
      let bytes = der.subarray(n.contentStart, n.end);
      while (bytes.length > 32 && bytes[0] === 0) bytes = bytes.subarray(1);
      if (bytes.length > 32) return null;
      out.set(bytes, i * 32 + 32 - bytes.length);
    }
    return out;
  } catch {
    return null;
  }
}

function equalBytes(a: Uint8Array<ArrayBuffer>, b: Uint8Array<ArrayBuffer>): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
