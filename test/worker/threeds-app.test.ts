import { runInDurableObject } from 'cloudflare:test';
import { CompactEncrypt, decodeProtectedHeader, importJWK } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Outbox } from '../../src/storage/projection-outbox';
import { fromBase64Url, toBase64, toBase64Url, toHex, utf8 } from '../../src/bytes';
import {
  decryptChallengeMessage,
  deriveSecureChannelKey,
  encryptChallengeMessage,
  generateEphemeralKeyPair,
  type P256PublicJwk,
} from '../../src/emv/secure-channel';
import { createTransaction, type ChallengeAnswer, type DirectoryServer } from '../sdk/test-sdk';
import { burst, call, quiet, type Fetch } from './helpers';
import { jwkPrivateMembers, storedTexts, threeDsObject } from './projection-helpers';
import { cardFront, newReference, threeDs, transaction, verifyBody } from './threeds-helpers';
import { restoreObjects, StorageHarness } from './faulty-env';
import { receivingAtTestEndpoint, restoreTransport, settledOutcomes } from './event-helpers';
import { liveBody, liveHarness, liveJson } from './live-helpers';

/**
 * The app channel in `test` (CONTRACT.md §12, docs/threeds.md "The app channel"): authenticate
 * with an app's SDK data, the test issuer's ACS reached by the test SDK (test/sdk/) through its
 * CReq endpoint, and the guarantees of the challenge under replays, races and its deadline.
 */

type Json = Record<string, any>;

async function directoryServer(): Promise<DirectoryServer> {
  const response = await call('/3ds/test/directory-server', { method: 'GET' });
  expect(response.status).toBe(200);
  return response.json<DirectoryServer>();
}

/** The app's authenticate body: its SDK's data, no browser field, no return URL. */
function appBody(sdk: unknown, o: { reference?: string; cardHolderName?: string } = {}): Json {
  return {
    transactionReference: o.reference ?? newReference(),
    merchant: { entity: 'default' },
    instruction: { value: { amount: 250, currency: 'GBP' }, paymentInstrument: cardFront(o.cardHolderName) },
    deviceData: { channel: 'app', sdk },
    challenge: {},
  };
}

/** The SDK's CReqs, posted as an app posts them (through the Worker's fetch handler). */
const postCReq = async (request: Request): Promise<Response> =>
  call(new URL(request.url).pathname, {
    headers: { 'Content-Type': 'application/jose' },
    rawBody: new Uint8Array(await request.arrayBuffer()),
  });

function cardholder(...answers: ChallengeAnswer[]) {
  return (): Promise<ChallengeAnswer> => Promise.resolve(answers.shift() ?? { cancel: true });
}

/** An app whose keys the test holds: to write CReqs the SDK never would. */
async function rawApp(ds: DirectoryServer, maxTimeout = 10) {
  const ephemeral = await generateEphemeralKeyPair();
  const encData = await new CompactEncrypt(utf8(JSON.stringify({ DV: '1.6' })))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128CBC-HS256' })
    .encrypt(await importJWK(ds.encryptionKey, 'ECDH-ES'));
  const sdk = {
    appId: crypto.randomUUID(),
    encData,
    ephemeralPublicKey: ephemeral.publicKey,
    maxTimeout,
    referenceNumber: 'CARD-EDGE-RAW',
    transactionId: crypto.randomUUID(),
    interface: 'native',
    uiTypes: ['text'],
  };
  return { sdk, ephemeral };
}

/** Opens a challenge for a raw app: the ids, the ACS URL and the secure channel key. */
async function openRawChallenge(cardHolderName = '3ds2-challenge-identified', maxTimeout = 10) {
  const ds = await directoryServer();
  const { sdk, ephemeral } = await rawApp(ds, maxTimeout);
  const body = appBody(sdk, { cardHolderName });
  const answer = await (await threeDs('authenticate', body)).json<Json>();
  expect(answer.outcome).toBe('challenged');
  const payload = JSON.parse(new TextDecoder().decode(fromBase64Url(answer.challenge.payload))) as Json;
  const signed = JSON.parse(new TextDecoder().decode(fromBase64Url(payload.acsSignedContent.split('.')[1]))) as {
    acsURL: string;
    acsEphemPubKey: P256PublicJwk;
  };
  const key = await deriveSecureChannelKey(ephemeral.privateKey, signed.acsEphemPubKey, sdk.referenceNumber);
  const ids = {
    threeDSServerTransID: payload.threeDSServerTransID as string,
    acsTransID: payload.acsTransID as string,
    sdkTransID: sdk.transactionId,
  };
  type Options = { ids?: Json; key?: Uint8Array; kid?: string; via?: Fetch };
  /** Posts a CReq with these fields (the transaction's ids and version, a counter among them): the raw answer. */
  const post = async (fields: Json, o: Options = {}): Promise<Response> => {
    const creq = { ...ids, ...o.ids, messageType: 'CReq', messageVersion: answer.authentication.version, ...fields };
    const jwe = await encryptChallengeMessage(creq, o.key ?? key, o.kid ?? ids.acsTransID);
    return call(new URL(signed.acsURL).pathname, {
      headers: { 'Content-Type': 'application/jose' },
      rawBody: utf8(jwe),
      via: o.via,
    });
  };
  /** Posts a CReq: the CRes it answers, opened, or the Erro. */
  const send = async (fields: Json, o: Options = {}): Promise<Json> => {
    const response = await post(fields, o);
    expect(response.status).toBe(200);
    const type = response.headers.get('Content-Type') ?? '';
    if (type.startsWith('application/json')) return response.json<Json>();
    expect(type).toBe('application/jose');
    const opened = await decryptChallengeMessage(new TextDecoder().decode(await response.arrayBuffer()), key);
    if (!opened.ok) throw new Error(`a CRes that does not open: ${opened.problem}`);
    return opened.message;
  };
  return { body, answer, ids, key, signed, post, send, reference: answer.challenge.reference as string, sdk };
}

/** The challenge's row in its object: the codes evaluated and its one result. */
function challengeRow(transactionReference: string): Promise<Json> {
  return runInDurableObject(threeDsObject(transactionReference), (_o, state) =>
    state.storage.sql.exec('SELECT evaluated, outcome, reason FROM challenge').one(),
  );
}

async function verification(body: Json, reference: string): Promise<Json> {
  const response = await threeDs('verification', verifyBody(body.transactionReference, reference));
  expect(response.status).toBe(200);
  return response.json<Json>();
}

describe('the test Directory Server', () => {
  it('publishes its encryption key and CA certificate without authentication', async () => {
    const ds = await directoryServer();
    expect(ds.encryptionKey).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(ds.encryptionKey).not.toHaveProperty('d');
    expect(ds.caCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });
});

describe('authenticate through an app', () => {
  it('answers a frictionless authentication without browser fields or a return URL', async () => {
    const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-1' });
    const body = appBody(sdk.authenticationParameters(), { cardHolderName: '3ds2-frictionless-identified' });
    const response = await threeDs('authenticate', body);
    const answer = await response.json<Json>();
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer.outcome).toBe('authenticated');
    expect((await transaction(body.transactionReference)).outcome ?? 'authenticated').toBe('authenticated');
  });

  it('refuses encData the test Directory Server cannot open, at its path', async () => {
    const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-1' });
    const params = sdk.authenticationParameters();
    const other = await generateEphemeralKeyPair();
    const wrong = await new CompactEncrypt(utf8('{}'))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128CBC-HS256' })
      .encrypt(await importJWK({ ...other.publicKey }, 'ECDH-ES'));
    const response = await threeDs('authenticate', appBody({ ...params, encData: wrong }));
    expect(response.status).toBe(400);
    const body = await response.json<Json>();
    expect(body.validationErrors ?? body.errors ?? body).toEqual(
      expect.arrayContaining([expect.objectContaining({ jsonPath: '$.deviceData.sdk.encData' })]),
    );
  });

  it("requires an app's SDK data, and a browser's return URL", async () => {
    const noSdk = await threeDs('authenticate', { ...appBody(undefined), deviceData: { channel: 'app' } });
    expect(noSdk.status).toBe(400);
    expect(JSON.stringify(await noSdk.json())).toContain('$.deviceData.sdk');
    const browser = appBody(undefined);
    browser.deviceData = { acceptHeader: 'text/html', userAgentHeader: 'test' };
    const noReturn = await threeDs('authenticate', browser);
    expect(noReturn.status).toBe(400);
    const text = JSON.stringify(await noReturn.json());
    expect(text).toContain('fieldIsMissing');
    expect(text).toContain('$.challenge.returnUrl');
  });

  it("in live, encData made for the test issuer's Directory Server goes to the provider's, whose Erro makes it unavailable", async () => {
    const h = liveHarness();
    try {
      // The test Directory Server's key (this Worker's, in test): the live provider's DS cannot open it.
      const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-1' });
      const body = liveBody('2100');
      body.deviceData = { channel: 'app', sdk: sdk.authenticationParameters() };
      body.challenge = {};
      const answer = await liveJson(h, 'authenticate', body);
      expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U' });
      const erro = h.providerAnswers.filter((a) => a.op === 'auth').map((a) => a.body);
      expect(erro).toEqual([
        expect.objectContaining({ messageType: 'Erro', errorCode: '203', errorDetail: 'sdkEncData' }),
      ]);
    } finally {
      restoreObjects();
    }
  });

  it('refuses an ephemeral key that is not a P-256 point, SDK data without the app channel, and a browser without returnUrl as a schema error', async () => {
    const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-1' });
    const params = sdk.authenticationParameters();
    const offCurve = { ...params, ephemeralPublicKey: { ...params.ephemeralPublicKey, y: 'A'.repeat(43) } };
    const refused = await threeDs('authenticate', appBody(offCurve, { cardHolderName: '3ds2-challenge-identified' }));
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('$.deviceData.sdk.ephemeralPublicKey');
    const noChannel = appBody(params);
    noChannel.deviceData = { acceptHeader: 'text/html', userAgentHeader: 'test', sdk: params };
    noChannel.challenge = { returnUrl: 'https://shop.example/3ds/return' };
    const mixed = await threeDs('authenticate', noChannel);
    expect(mixed.status).toBe(400);
    expect(JSON.stringify(await mixed.json())).toContain('$.deviceData.sdk');
    // A browser's missing returnUrl is a schema error (before the business rules: an unknown entity
    // does not hide it), with the schema's message.
    const browser = appBody(undefined);
    browser.deviceData = { acceptHeader: 'text/html', userAgentHeader: 'test' };
    browser.merchant = { entity: 'nosuchentity' };
    const missing = await threeDs('authenticate', browser);
    expect(missing.status).toBe(400);
    expect((await missing.json<Json>()).validationErrors).toEqual([
      { errorName: 'fieldIsMissing', message: 'This field is required.', jsonPath: '$.challenge.returnUrl' },
    ]);
  });

  it('answers unavailable for a 3-D Secure 1 issuer, which has no app channel', async () => {
    const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-1' });
    const body = appBody(sdk.authenticationParameters(), { cardHolderName: '3ds1-challenge-identified' });
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    expect(answer.outcome).toBe('unavailable');
  });

  it('gives 20 identical requests one answer', async () => {
    const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-1' });
    const body = appBody(sdk.authenticationParameters(), { cardHolderName: '3ds2-challenge-identified' });
    const answers = await burst(20, async () => (await threeDs('authenticate', body)).json<Json>());
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.challenge).toEqual({ reference: expect.any(String), payload: expect.any(String) });
  });
});

describe("an app's challenge through the test SDK", () => {
  it('passes with the right code: the CRes, verification and GET give one result', async () => {
    const sdk = await createTransaction({ directoryServer: await directoryServer(), sdkReferenceNumber: 'REF-2' });
    const body = appBody(sdk.authenticationParameters(), { cardHolderName: '3ds2-challenge-identified' });
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    expect(answer.challenge.url).toBeUndefined();
    expect(answer.challenge.jwt).toBeUndefined();
    const result = await sdk.doChallenge(answer.challenge.payload, {
      answer: cardholder({ code: '0000' }, { code: '1234' }),
      fetch: postCReq,
      messageVersion: answer.authentication.version,
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
    expect((await verification(body, answer.challenge.reference)).outcome).toBe('authenticated');
    const facts = await transaction(body.transactionReference);
    expect(JSON.stringify(facts)).toContain('authenticated');
    expect(await challengeRow(body.transactionReference)).toMatchObject({ evaluated: 2, outcome: 'passed' });
  });

  it('fails after three wrong codes, and after a cancel', async () => {
    const ds = await directoryServer();
    for (const answers of [[{ code: '1' }, { code: '2' }, { code: '3' }], [{ cancel: true }]]) {
      const sdk = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'REF-3' });
      const body = appBody(sdk.authenticationParameters(), { cardHolderName: '3ds2-challenge-identified' });
      const answer = await (await threeDs('authenticate', body)).json<Json>();
      const result = await sdk.doChallenge(answer.challenge.payload, {
        answer: cardholder(...answers),
        fetch: postCReq,
        messageVersion: answer.authentication.version,
      });
      expect(result).toMatchObject({ ok: true, transStatus: 'N' });
      expect((await verification(body, answer.challenge.reference)).outcome).not.toBe('authenticated');
    }
  });
});

describe("the test issuer's ACS refuses with an Erro, and the one result does not change", () => {
  it('a replayed counter, a skipped counter, a CReq that does not open, another transaction, one after the end', async () => {
    const c = await openRawChallenge();
    const first = await c.send({ sdkCounterStoA: '000' });
    expect(first).toMatchObject({ messageType: 'CRes', acsCounterAtoS: '000', challengeCompletionInd: 'N' });
    // Replayed: the same counter again.
    expect(await c.send({ sdkCounterStoA: '000', challengeDataEntry: '1234' })).toMatchObject({
      messageType: 'Erro',
      errorCode: '302',
    });
    // Skipped: 002 where 001 is next.
    expect(await c.send({ sdkCounterStoA: '002', challengeDataEntry: '1234' })).toMatchObject({ errorCode: '302' });
    // Does not open: another key.
    const other = new Uint8Array(32).fill(7);
    expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' }, { key: other })).toMatchObject({
      errorCode: '302',
    });
    // Names another transaction.
    expect(
      await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' }, { ids: { sdkTransID: crypto.randomUUID() } }),
    ).toMatchObject({ errorCode: '301' });
    // Nothing was counted: still open, no code evaluated.
    expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 0, outcome: null });
    // The next counter passes, then the challenge is over: a CReq after it is an Erro.
    expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({
      messageType: 'CRes',
      acsCounterAtoS: '001',
      transStatus: 'Y',
    });
    expect(await c.send({ sdkCounterStoA: '002', challengeDataEntry: '0000' })).toMatchObject({ errorCode: '301' });
    expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 1, outcome: 'passed' });
    expect((await verification(c.body, c.reference)).outcome).toBe('authenticated');
  });

  it('the final CRes says what verification will: N for an issuer that fails the identity despite the right code', async () => {
    const c = await openRawChallenge('3ds2-challenge-unknown-identity');
    await c.send({ sdkCounterStoA: '000' });
    expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({ transStatus: 'N' });
    expect((await verification(c.body, c.reference)).outcome).toBe('authenticationFailed');
  });

  it('a challenge out of counters is refused with an Erro, nothing counted', async () => {
    const c = await openRawChallenge();
    await runInDurableObject(threeDsObject(c.body.transactionReference), (_o, state) => {
      state.storage.sql.exec("UPDATE app_challenge SET next_sdk_counter = '999', next_acs_counter = '999'");
    });
    expect(await c.send({ sdkCounterStoA: '999', challengeDataEntry: '1234' })).toMatchObject({ messageType: 'Erro' });
    expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 0, outcome: null });
  });

  it('16 wrong codes at once evaluate at most three', async () => {
    const c = await openRawChallenge();
    await c.send({ sdkCounterStoA: '000' });
    const counters = Array.from({ length: 16 }, (_, i) => String(1 + (i % 4)).padStart(3, '0'));
    const answers = await burst(16, (i) => c.send({ sdkCounterStoA: counters[i], challengeDataEntry: `9${i}` }));
    const cres = answers.filter((a) => a.messageType === 'CRes');
    expect(cres.length).toBeLessThanOrEqual(3);
    expect(answers.filter((a) => a.messageType === 'Erro')).toHaveLength(16 - cres.length);
    const row = await challengeRow(c.body.transactionReference);
    expect(row.evaluated).toBeGreaterThanOrEqual(1);
    expect(row.evaluated).toBeLessThanOrEqual(3);
    expect(row.evaluated).toBe(cres.length);
    // Three wrong codes end it failed; fewer leave it open for the cardholder's next try.
    expect(row.outcome).toBe(row.evaluated === 3 ? 'failed' : null);
  });

  it('the right code racing the third wrong one gives one result everywhere: CRes, verification, GET, the event', async () => {
    const receiver = await receivingAtTestEndpoint();
    try {
      const c = await openRawChallenge();
      const transactionReference = c.body.transactionReference as string;
      await c.send({ sdkCounterStoA: '000' });
      await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1111' });
      await c.send({ sdkCounterStoA: '002', challengeDataEntry: '2222' });
      const [right, wrong] = await Promise.all([
        c.send({ sdkCounterStoA: '003', challengeDataEntry: '1234' }),
        c.send({ sdkCounterStoA: '003', challengeDataEntry: '3333' }),
      ]);
      const ends = [right, wrong].filter((a) => a.messageType === 'CRes');
      expect(ends).toHaveLength(1);
      const transStatus = ends[0]!.transStatus as string;
      const row = await challengeRow(transactionReference);
      expect(row.outcome).toBe(transStatus === 'Y' ? 'passed' : 'failed');
      const verified = await verification(c.body, c.reference);
      expect(verified.outcome).toBe(transStatus === 'Y' ? 'authenticated' : 'authenticationFailed');
      const got = await transaction(transactionReference);
      expect(got.state).toBe('completed');
      expect(got.result).toEqual(verified);
      expect(await settledOutcomes(receiver, transactionReference, threeDsObject(transactionReference))).toEqual([
        verified.outcome,
      ]);
    } finally {
      await restoreTransport();
    }
  });

  it("a CReq whose object call fails is a 503 with Retry-After, and the SDK's next try with the same counter is answered", async () => {
    const c = await openRawChallenge();
    await c.send({ sdkCounterStoA: '000' });
    const h = new StorageHarness().failOn({ nth: 0, of: 'do', op: 'appChallengeMessage', when: 'before' });
    try {
      const failed = await c.post({ sdkCounterStoA: '001', challengeDataEntry: '1234' }, { via: (r) => h.fetch(r) });
      expect(failed.status).toBe(503);
      expect(failed.headers.get('Retry-After')).not.toBeNull();
      expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 0, outcome: null });
    } finally {
      restoreObjects();
    }
    expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({ transStatus: 'Y' });
  });

  it.each(['after', 'late', 'hang'] as const)(
    "a CReq whose object call fails (%s: after deciding, its answer late, or never reaching the object): 503, and the SDK's retry keeps the one result",
    async (when) => {
      quiet();
      const c = await openRawChallenge();
      await c.send({ sdkCounterStoA: '000' });
      const h = new StorageHarness({ STORAGE_TIMEOUT_MS: '300' }).failOn({
        nth: 0,
        of: 'do',
        op: 'appChallengeMessage',
        when,
        delayMs: 1_000,
      });
      try {
        const failed = await c.post({ sdkCounterStoA: '001', challengeDataEntry: '1234' }, { via: (r) => h.fetch(r) });
        expect(failed.status).toBe(503);
        expect(failed.headers.get('Retry-After')).not.toBeNull();
      } finally {
        restoreObjects();
      }
      if (when !== 'hang') {
        // The object decided (the call went through; only its answer was lost or too late).
        await vi.waitFor(async () => expect((await challengeRow(c.body.transactionReference)).outcome).toBe('passed'));
        // The SDK's retry with the same counter: the challenge has ended (301), nothing counted again;
        // the SDK ends on the Erro, and the result is the one decided (EMV: the RReq, here verification).
        expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({ errorCode: '301' });
        expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 1, outcome: 'passed' });
        expect((await verification(c.body, c.reference)).outcome).toBe('authenticated');
      } else {
        // A hang never reached the object: the retry is answered.
        expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({ transStatus: 'Y' });
        expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 1, outcome: 'passed' });
      }
    },
  );

  it("the SDK's maxTimeout passing ends the challenge as failed, everywhere", async () => {
    const receiver = await receivingAtTestEndpoint();
    try {
      const before = Date.now();
      // 7 minutes, not the default: the deadline is the SDK's.
      const c = await openRawChallenge('3ds2-challenge-identified', 7);
      const after = Date.now();
      const transactionReference = c.body.transactionReference as string;
      const deadline = await runInDurableObject(threeDsObject(transactionReference), (_o, state) =>
        state.storage.sql.exec<{ expires_at: number }>('SELECT expires_at FROM challenge').one(),
      );
      expect(deadline.expires_at).toBeGreaterThanOrEqual(before + 7 * 60_000);
      expect(deadline.expires_at).toBeLessThanOrEqual(after + 7 * 60_000);
      await c.send({ sdkCounterStoA: '000' });
      await runInDurableObject(threeDsObject(c.body.transactionReference), (_o, state) => {
        state.storage.sql.exec('UPDATE challenge SET expires_at = ?', Date.now() - 1);
      });
      expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({ errorCode: '402' });
      expect(await challengeRow(transactionReference)).toMatchObject({ outcome: 'failed', reason: 'expired' });
      const verified = await verification(c.body, c.reference);
      expect(verified.outcome).toBe('authenticationFailed');
      const got = await transaction(transactionReference);
      expect(got.result).toEqual(verified);
      expect(await settledOutcomes(receiver, transactionReference, threeDsObject(transactionReference))).toEqual([
        'authenticationFailed',
      ]);
    } finally {
      await restoreTransport();
    }
  });

  it('keeps no key, no encData and no card number in storage or in a log line', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(String(line)));
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(String(line)));
    const c = await openRawChallenge();
    await c.send({ sdkCounterStoA: '000' });
    await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' });
    expect((await verification(c.body, c.reference)).outcome).toBe('authenticated');
    // Every text cell, and each BLOB in hex, base64 and text, so that raw key bytes are seen too.
    const cells = await storedTexts(threeDsObject(c.body.transactionReference));
    const stored = cells.join('\n');
    const logged = lines.join('\n');
    // What must be there (so that the scans below read the real rows and lines).
    expect(stored).toContain(c.ids.acsTransID);
    const pan = c.body.instruction.paymentInstrument.cardNumber as string;
    expect(logged).toContain(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
    // The card number, the SDK's encData and the secure channel's key, in any of its spellings.
    const secrets = [pan, c.sdk.encData, toBase64Url(c.key), toBase64(c.key), toHex(c.key)];
    for (const secret of secrets) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
    // No private JWK member (`d`) in any JSON a cell holds, however deeply (the SDK's public key is kept).
    const privateMembers = cells.flatMap((cell) => jwkPrivateMembers(cell));
    expect(stored).toContain('"crv":"P-256"');
    expect(privateMembers).toEqual([]);
    expect(decodeProtectedHeader(c.sdk.encData).alg).toBe('ECDH-ES');
  });
});

describe("a challenge's decision lands whole or not at all", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a CReq whose decision fails midway (the projection cannot be staged) counts nothing; the next try passes', async () => {
    quiet();
    const c = await openRawChallenge();
    await c.send({ sdkCounterStoA: '000' });
    vi.spyOn(Outbox.prototype, 'stage').mockImplementationOnce(() => {
      throw new Error('injected: staging failed');
    });
    const failed = await c.post({ sdkCounterStoA: '001', challengeDataEntry: '1234' });
    expect(failed.status).toBe(500);
    expect(await challengeRow(c.body.transactionReference)).toMatchObject({ evaluated: 0, outcome: null });
    expect(await c.send({ sdkCounterStoA: '001', challengeDataEntry: '1234' })).toMatchObject({ transStatus: 'Y' });
  });

  it("a browser challenge's verification whose decision fails midway leaves it open; the next verification ends it once", async () => {
    quiet();
    const body = appBody(undefined, { cardHolderName: '3ds2-challenge-identified' });
    body.deviceData = { acceptHeader: 'text/html', userAgentHeader: 'test' };
    body.challenge = { returnUrl: 'https://shop.example/3ds/return' };
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    expect(answer.outcome).toBe('challenged');
    vi.spyOn(Outbox.prototype, 'stage').mockImplementationOnce(() => {
      throw new Error('injected: staging failed');
    });
    const failed = await threeDs('verification', verifyBody(body.transactionReference, answer.challenge.reference));
    expect(failed.status).toBe(500);
    expect(await challengeRow(body.transactionReference)).toMatchObject({ outcome: null });
    expect((await verification(body, answer.challenge.reference)).outcome).toBe('authenticationFailed');
    expect(await challengeRow(body.transactionReference)).toMatchObject({ outcome: 'failed', reason: 'notCompleted' });
  });
});
