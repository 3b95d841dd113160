/**
 * A test EMV 3DS SDK (CONTRACT.md §12): what a certified app SDK does on the wire, for tests,
 * examples and merchants' CI; never part of a production bundle. Web platform and jose only, so it
 * runs in workerd (the Worker tests) and on Node (a terminal checkout).
 *
 * @example
 * const tx = await createTransaction({ directoryServer, sdkReferenceNumber: 'CARD-EDGE-TEST-SDK' });
 * // POST authenticate with deviceData: { channel: 'app', sdk: tx.authenticationParameters() }
 * const result = await tx.doChallenge(answer.challenge.payload, { answer: async () => ({ code: '1234' }) });
 * // result.ok && result.transStatus === 'Y'
 */
import { CompactEncrypt, compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { fromBase64Url, utf8 } from '../../src/bytes';
import {
  decryptChallengeMessage,
  deriveSecureChannelKey,
  encryptChallengeMessage,
  FIRST_COUNTER,
  generateEphemeralKeyPair,
  isExpectedCounter,
  isP256PublicJwk,
  nextCounter,
  type P256PublicJwk,
} from '../../src/emv/secure-channel';
import { checkAcsChain, type CertificateProblem } from './certificates';

/** A Directory Server as the SDK knows it: `GET /3ds/test/directory-server`'s answer. */
export interface DirectoryServer {
  /** EC P-256 public JWK that `encData` is encrypted to (ECDH-ES). */
  encryptionKey: JsonWebKey;
  /** PEM of the CA that issues its ACSs' signing certificates. */
  caCertificate: string;
}

export type UiType = 'text' | 'singleSelect' | 'multiSelect' | 'oob' | 'html';

export interface TransactionOptions {
  directoryServer: DirectoryServer;
  sdkReferenceNumber: string;
  /** `sdkAppID`; a new UUID by default (an app keeps one per installation). */
  appId?: string;
  /** Minutes, 5–99; 10 by default. */
  maxTimeout?: number;
  interface?: 'native' | 'html' | 'both';
  uiTypes?: UiType[];
  /** The device information `encData` carries (EMV 3DS SDK Device Information); a fixed test device by default. */
  deviceInfo?: Record<string, unknown>;
  /** The CReq's `messageVersion`; 2.2.0 by default. */
  messageVersion?: string;
}

/** CONTRACT.md §12's `deviceData.sdk` of `authenticate`. */
export interface AuthenticationParameters {
  appId: string;
  encData: string;
  ephemeralPublicKey: P256PublicJwk;
  maxTimeout: number;
  referenceNumber: string;
  transactionId: string;
  interface: 'native' | 'html' | 'both';
  uiTypes: UiType[];
}

/** What the cardholder does with a CRes's challenge: enter a code, or cancel. */
export interface ChallengeAnswer {
  code?: string;
  cancel?: boolean;
}

export interface ChallengeOptions {
  /** Shows a CRes to the "cardholder" and gives their answer. */
  answer: (cres: Record<string, unknown>) => Promise<ChallengeAnswer>;
  /** How CReqs are posted; globalThis.fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** The time certificates are checked at; now by default. */
  now?: Date;
  /** The CReqs' `messageVersion` when the authentication's differs from the transaction's (its answer's `authentication.version`). */
  messageVersion?: string;
}

/** An EMV Erro message as the ACS sent it. */
export interface ErroMessage {
  messageType: 'Erro';
  errorCode?: string;
  errorComponent?: string;
  errorDescription?: string;
  errorDetail?: string;
  [field: string]: unknown;
}

export type SdkProblem =
  | CertificateProblem
  /** The payload is not base64url JSON with the four ids. */
  | 'payloadMalformed'
  /** acsSignedContent is not an ES256 JWS with x5c, or its payload lacks acsURL or the keys. */
  | 'acsSignedContentMalformed'
  | 'acsSignedContentSignatureInvalid'
  /** acsSignedContent's sdkEphemPubKey is not this transaction's key. */
  | 'sdkEphemPubKeyMismatch'
  /** The ACS answered an EMV Erro message (`erro` holds it). */
  | 'erroReceived'
  /** The ACS answered neither a CRes JWE nor an Erro (status, media type). */
  | 'unexpectedAnswer'
  | 'cresDoesNotDecrypt'
  /** A CRes that is not one, or names another transaction. */
  | 'cresMalformed'
  | 'acsCounterMismatch'
  /** More rounds than any challenge needs: the ACS never completed. */
  | 'tooManyRounds';

export type ChallengeResult =
  | { ok: true; transStatus: string; cres: Record<string, unknown> }
  | { ok: false; problem: SdkProblem; detail: string; erro?: ErroMessage };

type Failed = Extract<ChallengeResult, { ok: false }>;

export interface SdkTransaction {
  authenticationParameters(): AuthenticationParameters;
  /** Runs the challenge the 3DS Server's `challenge.payload` describes, to its end. */
  doChallenge(payload: string, options: ChallengeOptions): Promise<ChallengeResult>;
}

const ROUNDS = 20;

const TEST_DEVICE = { DV: '1.6', DD: { C001: 'card-edge test SDK', C005: 'en-GB' }, DPNA: {}, SW: [] };

/**
 * Starts an app transaction: a new ephemeral P-256 key (its private key in this object only) and
 * the device information encrypted to the Directory Server's key.
 */
export async function createTransaction(options: TransactionOptions): Promise<SdkTransaction> {
  const ephemeral = await generateEphemeralKeyPair();
  const dsKey = await importJWK(options.directoryServer.encryptionKey, 'ECDH-ES');
  const header = { alg: 'ECDH-ES', enc: 'A128CBC-HS256', ...kidOf(options.directoryServer.encryptionKey) };
  const encData = await new CompactEncrypt(utf8(JSON.stringify(options.deviceInfo ?? TEST_DEVICE)))
    .setProtectedHeader(header)
    .encrypt(dsKey);
  const parameters: AuthenticationParameters = {
    appId: options.appId ?? crypto.randomUUID(),
    encData,
    ephemeralPublicKey: ephemeral.publicKey,
    maxTimeout: options.maxTimeout ?? 10,
    referenceNumber: options.sdkReferenceNumber,
    transactionId: crypto.randomUUID(),
    interface: options.interface ?? 'both',
    uiTypes: options.uiTypes ?? ['text', 'singleSelect', 'multiSelect', 'oob', 'html'],
  };
  return {
    authenticationParameters: () => structuredClone(parameters),
    doChallenge: (payload, challengeOptions) =>
      runChallenge(payload, challengeOptions, {
        privateKey: ephemeral.privateKey,
        parameters,
        caCertificate: options.directoryServer.caCertificate,
        messageVersion: options.messageVersion ?? '2.2.0',
      }),
  };
}

interface Own {
  privateKey: CryptoKey;
  parameters: AuthenticationParameters;
  caCertificate: string;
  messageVersion: string;
}

interface ChallengeIds {
  threeDSServerTransID: string;
  acsTransID: string;
}

async function runChallenge(payload: string, options: ChallengeOptions, own: Own): Promise<ChallengeResult> {
  const ids = readPayload(payload);
  if (!ids)
    return failed('payloadMalformed', 'not base64url JSON with threeDSServerTransID, acsTransID, acsSignedContent');
  const signed = await verifyAcsSignedContent(ids.acsSignedContent, own, options.now ?? new Date());
  if (!signed.ok) return signed;
  const key = await deriveSecureChannelKey(own.privateKey, signed.acsEphemPubKey, own.parameters.referenceNumber);
  const post = options.fetch ?? ((request: Request) => fetch(request));
  const base = {
    threeDSServerTransID: ids.threeDSServerTransID,
    acsTransID: ids.acsTransID,
    sdkTransID: own.parameters.transactionId,
    messageType: 'CReq',
    messageVersion: options.messageVersion ?? own.messageVersion,
  };
  // The first CReq asks for the challenge's screen; each after it carries the cardholder's answer.
  let creq: Record<string, unknown> = { ...base, sdkCounterStoA: FIRST_COUNTER };
  let expectedAcsCounter = FIRST_COUNTER;
  for (let round = 0; round < ROUNDS; round++) {
    const answer = await post(
      new Request(signed.acsURL, {
        method: 'POST',
        headers: { 'content-type': 'application/jose; charset=utf-8' },
        body: await encryptChallengeMessage(creq, key, ids.acsTransID),
      }),
    );
    const cres = await readCres(answer, key, ids, own, expectedAcsCounter);
    if (!cres.ok) return cres;
    if (cres.message.challengeCompletionInd === 'Y') {
      const transStatus = cres.message.transStatus;
      if (typeof transStatus !== 'string') return failed('cresMalformed', 'a final CRes without transStatus');
      return { ok: true, transStatus, cres: cres.message };
    }
    const given = await options.answer(cres.message);
    const counter = nextCounter(creq.sdkCounterStoA as string);
    // EMV challengeCancel 01: the cardholder selected Cancel.
    creq = given.cancel
      ? { ...base, sdkCounterStoA: counter, challengeCancel: '01' }
      : { ...base, sdkCounterStoA: counter, challengeDataEntry: given.code ?? '' };
    expectedAcsCounter = nextCounter(expectedAcsCounter);
  }
  return failed('tooManyRounds', `no final CRes after ${ROUNDS} CReqs`);
}

function readPayload(payload: string): (ChallengeIds & { acsSignedContent: string }) | null {
  try {
    const json = JSON.parse(new TextDecoder().decode(fromBase64Url(payload))) as Record<string, unknown>;
    const { threeDSServerTransID, acsTransID, acsSignedContent } = json;
    if (typeof threeDSServerTransID !== 'string' || typeof acsTransID !== 'string') return null;
    if (typeof acsSignedContent !== 'string') return null;
    return { threeDSServerTransID, acsTransID, acsSignedContent };
  } catch {
    return null;
  }
}

type Verified = { ok: true; acsURL: string; acsEphemPubKey: P256PublicJwk };

async function verifyAcsSignedContent(jws: string, own: Own, now: Date): Promise<Verified | Failed> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return failed('acsSignedContentMalformed', 'not a compact JWS');
  }
  if (header.alg !== 'ES256') return failed('acsSignedContentMalformed', `alg ${String(header.alg)}, not ES256`);
  const chain = await checkAcsChain(header.x5c, own.caCertificate, now);
  if (!chain.ok) return failed(chain.problem, chain.detail);
  let body: Record<string, unknown>;
  try {
    const { payload } = await compactVerify(jws, chain.acsKey, { algorithms: ['ES256'] });
    body = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch (e) {
    return failed('acsSignedContentSignatureInvalid', (e as Error).message);
  }
  const { acsURL, acsEphemPubKey, sdkEphemPubKey } = body;
  if (typeof acsURL !== 'string' || !URL.canParse(acsURL) || !isP256PublicJwk(acsEphemPubKey)) {
    return failed('acsSignedContentMalformed', 'the payload lacks acsURL or acsEphemPubKey');
  }
  const mine = own.parameters.ephemeralPublicKey;
  if (!isP256PublicJwk(sdkEphemPubKey) || sdkEphemPubKey.x !== mine.x || sdkEphemPubKey.y !== mine.y) {
    return failed('sdkEphemPubKeyMismatch', "the signed sdkEphemPubKey is not this transaction's key");
  }
  return { ok: true, acsURL, acsEphemPubKey };
}

async function readCres(
  answer: Response,
  key: Uint8Array,
  ids: ChallengeIds,
  own: Own,
  expectedCounter: string,
): Promise<{ ok: true; message: Record<string, unknown> } | Failed> {
  const type = answer.headers.get('content-type') ?? '';
  // Bytes, then UTF-8: workerd warns when text() reads a body of a media type it does not know as text.
  const text = new TextDecoder().decode(await answer.arrayBuffer());
  if (type.startsWith('application/json')) {
    const erro = parseJson(text);
    if (erro?.messageType === 'Erro') {
      const { errorCode, errorDescription } = erro as ErroMessage;
      return { ...failed('erroReceived', `Erro ${errorCode}: ${errorDescription}`), erro: erro as ErroMessage };
    }
  }
  if (!answer.ok || !type.startsWith('application/jose')) {
    return failed('unexpectedAnswer', `HTTP ${answer.status} ${type}: ${text.slice(0, 200)}`);
  }
  const opened = await decryptChallengeMessage(text.trim(), key);
  if (!opened.ok) return failed('cresDoesNotDecrypt', opened.problem);
  const cres = opened.message;
  if (cres.messageType !== 'CRes') return failed('cresMalformed', `messageType ${String(cres.messageType)}`);
  for (const [field, expected] of [
    ['threeDSServerTransID', ids.threeDSServerTransID],
    ['acsTransID', ids.acsTransID],
    ['sdkTransID', own.parameters.transactionId],
  ] as const) {
    if (cres[field] !== expected) return failed('cresMalformed', `${field} ${String(cres[field])}, not ${expected}`);
  }
  if (!isExpectedCounter(cres.acsCounterAtoS, expectedCounter)) {
    return failed('acsCounterMismatch', `acsCounterAtoS ${String(cres.acsCounterAtoS)}, expected ${expectedCounter}`);
  }
  return { ok: true, message: cres };
}

function failed(problem: SdkProblem, detail: string): Failed {
  return { ok: false, problem, detail };
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function kidOf(jwk: JsonWebKey): { kid?: string } {
  const kid = (jwk as { kid?: unknown }).kid;
  return typeof kid === 'string' ? { kid } : {};
}
