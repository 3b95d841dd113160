import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fromBase64Url } from '../../src/bytes';
import { objectProvider } from '../../src/threeds/live/challenge-watch';
import { createTransaction, type ChallengeAnswer, type DirectoryServer, type SdkTransaction } from '../sdk/test-sdk';
import {
  receivingAtTestEndpoint,
  restoreTransport,
  settledOwner,
  settledOutcomes,
  completedEvents,
} from './event-helpers';
import { restoreObjects, type StorageHarness } from './faulty-env';
import { burst, quiet } from './helpers';
import { storedTexts, threeDsObject } from './projection-helpers';
import { newReference, transaction } from './threeds-helpers';
import {
  card,
  deadlinesFor,
  expectValidMessages,
  fake,
  fakeTransaction,
  issuerAnswers,
  liveHarness,
  liveJson,
  lastAres,
  liveStep,
  verifyBodyOf,
  type Json,
} from './live-helpers';

/**
 * The app channel in `live` (CONTRACT.md §12, docs/threeds.md "The app channel"), against the fake
 * provider's app Directory Server and ACS (docs/fake-3ds-server.md "The app channel"): the AReq
 * with deviceChannel 01 and the SDK's fields for its version, an ARes C answered as `challenge
 * {reference, payload}`, the repository's test SDK running the challenge with the fake's ACS,
 * and the result from the RReq, fetched by the transaction's object.
 */

afterEach(async () => {
  vi.restoreAllMocks();
  restoreObjects();
  await restoreTransport();
});

async function fakeDirectoryServer(): Promise<DirectoryServer> {
  const response = await fake('/_fake/directory-server');
  expect(response.status).toBe(200);
  return response.json<DirectoryServer>();
}

async function sdkFor(version = '2.2.0', maxTimeout = 10): Promise<SdkTransaction> {
  return createTransaction({
    directoryServer: await fakeDirectoryServer(),
    sdkReferenceNumber: 'CARD-EDGE-TEST-SDK',
    messageVersion: version,
    maxTimeout,
  });
}

/** An app's authenticate body for a card of the fake's grid: its SDK's data, no browser field, no return URL. */
function appBody(suffix: string, sdk: SdkTransaction, extra: Json = {}, challenge: Json = {}): Json {
  return {
    transactionReference: newReference(),
    merchant: { entity: 'default' },
    instruction: {
      value: { amount: 250, currency: 'GBP' },
      paymentInstrument: { type: 'card/front', cardNumber: card(suffix), cardExpiryDate: { month: 12, year: 2030 } },
    },
    deviceData: { channel: 'app', sdk: { ...sdk.authenticationParameters(), ...extra } },
    challenge,
  };
}

/** The SDK reaches the fake's ACS (its acsURL) as an app would reach the issuer's. */
const toFake = (request: Request): Promise<Response> => env.THREEDS_SERVER!.fetch(request);

function cardholder(...answers: ChallengeAnswer[]) {
  return (): Promise<ChallengeAnswer> => Promise.resolve(answers.shift() ?? { cancel: true });
}

const authCalls = (h: StorageHarness): number => h.count((c) => c.store === 'provider' && c.op === 'auth');

describe('the app channel in live, against the fake provider', () => {
  it.each([
    ['1100', '2.1.0'],
    ['2100', '2.2.0'],
    ['3100', '2.3.1'],
  ] as const)(
    'card …%s: an AReq of deviceChannel 01 with the SDK fields of %s and no browser field; frictionless',
    async (suffix, version) => {
      const h = liveHarness();
      const sdk = await sdkFor(version);
      const body = appBody(suffix, sdk, { interface: 'both', uiTypes: ['text', 'oob'] });
      const answer = await liveJson(h, 'authenticate', body);
      expect(answer).toMatchObject({ outcome: 'authenticated', authentication: { version } });
      const saw = await expectValidMessages(lastAres(h).threeDSServerTransID as string);
      const parameters = body.deviceData.sdk as Json;
      expect(saw.areq).toMatchObject({
        deviceChannel: '01',
        sdkAppID: parameters.appId,
        sdkEncData: parameters.encData,
        sdkEphemPubKey: parameters.ephemeralPublicKey,
        sdkMaxTimeout: '10',
        sdkReferenceNumber: 'CARD-EDGE-TEST-SDK',
        sdkTransID: parameters.transactionId,
        deviceRenderOptions: { sdkInterface: '03', sdkUiType: ['01', '04'] },
      });
      for (const field of ['threeDSCompInd', 'notificationURL', 'browserUserAgent', 'browserAcceptHeader'])
        expect(saw.areq).not.toHaveProperty(field);
      if (version === '2.3.1') expect(saw.areq).toMatchObject({ sdkType: '01', defaultSdkType: { sdkVariant: '01' } });
      else expect(saw.areq).not.toHaveProperty('sdkType');
    },
  );

  it('2.3.1: the SDK variant and wrapping the request names reach the AReq', async () => {
    const h = liveHarness();
    const body = appBody('3100', await sdkFor('2.3.1'), { variant: '80', wrapped: true });
    expect((await liveJson(h, 'authenticate', body)).outcome).toBe('authenticated');
    const saw = await expectValidMessages(lastAres(h).threeDSServerTransID as string);
    expect(saw.areq.defaultSdkType).toEqual({ sdkVariant: '80', wrappedInd: 'Y' });
  });

  it('an app challenge: {reference, payload} the test SDK runs with the fake ACS; verification, GET and the event once', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const sdk = await sdkFor();
    const body = appBody('2172', sdk, { appUrl: 'https://shop.example/app/3ds' });
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer).toMatchObject({
      outcome: 'challenged',
      authentication: { version: '2.2.0' },
      challenge: { reference: expect.stringMatching(/^[A-Za-z0-9]{20}$/), payload: expect.any(String) },
    });
    expect(answer.challenge.url).toBeUndefined();
    expect(answer.challenge.jwt).toBeUndefined();
    const payload = JSON.parse(new TextDecoder().decode(fromBase64Url(answer.challenge.payload))) as Json;
    const ares = lastAres(h);
    expect(payload).toEqual({
      threeDSServerTransID: ares.threeDSServerTransID,
      acsTransID: ares.acsTransID,
      acsRefNumber: ares.acsReferenceNumber,
      acsSignedContent: ares.acsSignedContent,
      threeDSRequestorAppURL: 'https://shop.example/app/3ds',
    });
    const result = await sdk.doChallenge(answer.challenge.payload as string, {
      fetch: toFake,
      answer: cardholder({ code: '0000' }, { code: '1234' }),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
    const reference = body.transactionReference as string;
    const verified = await burst(20, () =>
      liveStep(h, 'verification', verifyBodyOf(body, answer)).then((r) => r.json<Json>()),
    );
    expect(verified[0]).toMatchObject({ outcome: 'authenticated', authentication: { version: '2.2.0' } });
    for (const v of verified) expect(v).toEqual(verified[0]);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).result).toEqual(verified[0]);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticated']);
    const saw = await expectValidMessages(ares.threeDSServerTransID as string);
    expect(saw.rreq).toMatchObject({ transStatus: 'Y', sdkTransID: (body.deviceData.sdk as Json).transactionId });
  });

  it('three wrong codes at the ACS: authenticationFailed, from the RReq', async () => {
    const h = liveHarness();
    const sdk = await sdkFor();
    const body = appBody('2172', sdk);
    const answer = await liveJson(h, 'authenticate', body);
    const result = await sdk.doChallenge(answer.challenge.payload as string, {
      fetch: toFake,
      answer: cardholder({ code: '1' }, { code: '2' }, { code: '3' }),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'N' });
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toMatchObject({
      outcome: 'authenticationFailed',
    });
  });

  it('an app allowing decoupled: an AReq of deviceChannel 01 with DecReqInd Y, decoupled, then the RReq through verification, GET and one event', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    // …2177: no RReq until the issuer answers (the control route below), however slow the machine.
    const body: Json = { ...appBody('2177', await sdkFor()), decoupled: { maxMinutes: 20 } };
    const reference = body.transactionReference as string;
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer).toMatchObject({ outcome: 'decoupled', decoupled: { expiresAt: expect.any(String) } });
    expect(answer.challenge.payload).toBeUndefined();
    const saw = await expectValidMessages(lastAres(h).threeDSServerTransID as string);
    expect(saw.areq).toMatchObject({
      deviceChannel: '01',
      threeDSRequestorDecReqInd: 'Y',
      threeDSRequestorDecMaxTime: '00020',
    });
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toEqual(answer);
    // The issuer confirms in its own app (the fake's control route): the RReq is at the provider.
    await issuerAnswers(h, 'Y');
    const verified = await liveJson(h, 'verification', verifyBodyOf(body, answer));
    expect(verified).toMatchObject({ outcome: 'authenticated', status: 'Y' });
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).result).toEqual(verified);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticated']);
  });

  it('the object’s watch fetches the RReq of an app challenge nobody verified, from its alarm, after a look that failed', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const sdk = await sdkFor();
    const body = appBody('2172', sdk);
    const answer = await liveJson(h, 'authenticate', body);
    const reference = body.transactionReference as string;
    const result = await sdk.doChallenge(answer.challenge.payload as string, {
      fetch: toFake,
      answer: cardholder({ code: '1234' }),
    });
    expect(result).toMatchObject({ ok: true, transStatus: 'Y' });
    // The watch's next look is due (moved, not waited for): the alarm asks the provider.
    const lookDue = () =>
      runInDurableObject(threeDsObject(reference), (_o, state) => {
        state.storage.sql.exec('DELETE FROM live_watch');
        state.storage.sql.exec(
          "UPDATE live_challenge SET data = json_set(data, '$.aresAt', ?)",
          Date.now() - 5 * 60_000,
        );
      });
    // First the provider cannot be reached: nothing recorded, the watch looks again.
    quiet();
    const provider = objectProvider.of;
    objectProvider.of = (e) => ({ ...provider(e)!, result: () => Promise.reject(new Error('provider down')) });
    await lookDue();
    await runDurableObjectAlarm(threeDsObject(reference));
    const watch = await runInDurableObject(threeDsObject(reference), (_o, state) =>
      state.storage.sql.exec<{ failed: number }>('SELECT failed FROM live_watch').one(),
    );
    expect(watch.failed).toBe(1);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).state).toBe('challenged');
    await settledOwner(threeDsObject(reference));
    expect(completedEvents(receiver, reference)).toEqual([]);
    objectProvider.of = provider;
    await lookDue();
    await runDurableObjectAlarm(threeDsObject(reference));
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticated']);
  });

  it('the watch waits out the SDK’s maxTimeout (past the browser’s 15 minutes), then ends a challenge with no RReq as failed, once', async () => {
    const receiver = await receivingAtTestEndpoint();
    const h = liveHarness();
    const body = appBody('2172', await sdkFor('2.2.0', 30));
    const answer = await liveJson(h, 'authenticate', body);
    const reference = body.transactionReference as string;
    const owner = threeDsObject(reference);
    // 16 minutes in, the SDK's 30 are not over: the watch asks, the ACS has no RReq, nothing is decided.
    await runInDurableObject(owner, (_o, state) => {
      state.storage.sql.exec('DELETE FROM live_watch');
      state.storage.sql.exec(
        "UPDATE live_challenge SET data = json_set(data, '$.aresAt', ?, '$.app.expiresAt', ?)",
        ...[Date.now() - 16 * 60_000, Date.now() + 14 * 60_000],
      );
    });
    await runDurableObjectAlarm(owner);
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).state).toBe('challenged');
    // The SDK's time and the provider's 300 s after it are over, with no RReq: not completed.
    await runInDurableObject(owner, (_o, state) => {
      state.storage.sql.exec('DELETE FROM live_watch');
      state.storage.sql.exec(
        "UPDATE live_challenge SET data = json_set(data, '$.app.expiresAt', ?)",
        Date.now() - 301_000,
      );
    });
    await runDurableObjectAlarm(owner);
    expect(await settledOutcomes(receiver, reference, owner)).toEqual(['authenticationFailed']);
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toMatchObject({
      outcome: 'authenticationFailed',
    });
  });

  it('refuses an HTML UI type on a native SDK, a reserved SDK variant and a card number as the reference number: 400 at the path, no AReq', async () => {
    const h = liveHarness();
    const sdk = await sdkFor('2.3.1');
    for (const [extra, path] of [
      [{ interface: 'native', uiTypes: ['text', 'html'] }, '$.deviceData.sdk.uiTypes'],
      [{ variant: '00' }, '$.deviceData.sdk.variant'],
      [{ variant: '42' }, '$.deviceData.sdk.variant'],
      [{ referenceNumber: '4111 1111 1111 1111' }, '$.deviceData.sdk.referenceNumber'],
    ] as const) {
      const answer = await liveJson(h, 'authenticate', appBody('3100', sdk, extra), 400);
      expect(JSON.stringify(answer)).toContain(path);
    }
    expect(h.count((c) => c.store === 'provider')).toBe(0);
  });

  it('the SDK’s maxTimeout passing at the ACS: the RReq says so and verification answers authenticationFailed', async () => {
    const h = liveHarness();
    const sdk = await sdkFor('2.2.0', 5);
    const body = appBody('2172', sdk);
    const answer = await liveJson(h, 'authenticate', body);
    const clock = await fake('/_fake/clock', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ advanceMs: 5 * 60_000 }),
    });
    expect(clock.status).toBe(200);
    try {
      expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toMatchObject({
        outcome: 'authenticationFailed',
      });
      const saw = await expectValidMessages(lastAres(h).threeDSServerTransID as string);
      expect(saw.rreq).toMatchObject({ transStatus: 'N', challengeCancel: '04' });
    } finally {
      await fake('/_fake/clock', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ reset: true }),
      });
    }
  });

  it('an ephemeral key off the curve: 400 at its path, and no AReq leaves', async () => {
    const h = liveHarness();
    const sdk = await sdkFor();
    const key = sdk.authenticationParameters().ephemeralPublicKey;
    const body = appBody('2100', sdk, { ephemeralPublicKey: { ...key, y: key.x } });
    const answer = await liveJson(h, 'authenticate', body, 400);
    expect(JSON.stringify(answer)).toContain('$.deviceData.sdk.ephemeralPublicKey');
    expect(h.count((c) => c.store === 'provider')).toBe(0);
  });

  it('answers 20 identical app requests with one answer from one AReq', async () => {
    const h = liveHarness();
    const body = appBody('2172', await sdkFor());
    const answers = await burst(20, () => liveStep(h, 'authenticate', body).then((r) => r.json<Json>()));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.outcome).toBe('challenged');
    expect(authCalls(h)).toBe(1);
  });

  it('the app AReq not reaching the provider: 503 with Retry-After, nothing kept, and the retry sends it', async () => {
    const h = liveHarness();
    const body = appBody('2100', await sdkFor());
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'before' });
    const failed = await liveStep(h, 'authenticate', body);
    expect(failed.status).toBe(503);
    expect(Number(failed.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect((await failed.json<Json>()).errorName).toBe('serviceUnavailable');
    expect(h.providerAnswers.filter((a) => a.op === 'auth')).toHaveLength(0);
    expect((await liveJson(h, 'authenticate', body)).outcome).toBe('authenticated');
    // The provider answered one AReq: the one that never reached it was sent once, by the retry.
    expect(h.providerAnswers.filter((a) => a.op === 'auth')).toHaveLength(1);
    expect((await fakeTransaction(lastAres(h).threeDSServerTransID as string)).authCalls).toBe(1);
  });

  it('the app AReq’s answer lost on the way back: unavailable, and never a second AReq', async () => {
    const h = liveHarness();
    const body = appBody('2172', await sdkFor());
    h.failOn({ of: 'provider', op: 'auth', nth: 0, when: 'after' });
    const first = await liveStep(h, 'authenticate', body);
    expect(first.status).toBe(503);
    const answer = await liveJson(h, 'authenticate', body);
    expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U' });
    expect(await liveJson(h, 'authenticate', body)).toEqual(answer);
  });

  it.each(['hang', 'late'] as const)(
    'the app AReq past the deadline (%s): unavailable at once and for good, never sent again',
    async (when) => {
      const h = liveHarness(deadlinesFor(when));
      const body = appBody('2172', await sdkFor());
      h.failOn({ of: 'provider', op: 'auth', nth: 0, when, delayMs: 3_000 });
      const first = await liveJson(h, 'authenticate', body);
      expect(first).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
      expect(await liveJson(h, 'authenticate', body)).toEqual(first);
      expect(authCalls(h)).toBe(1);
    },
  );

  it('the RReq fetch failing: verification answers 503 and records nothing; the next one gets the result', async () => {
    const h = liveHarness();
    const sdk = await sdkFor();
    const body = appBody('2172', sdk);
    const answer = await liveJson(h, 'authenticate', body);
    await sdk.doChallenge(answer.challenge.payload as string, { fetch: toFake, answer: cardholder({ code: '1234' }) });
    const receiver = await receivingAtTestEndpoint();
    const reference = body.transactionReference as string;
    h.failOn({ of: 'provider', op: 'postauth', nth: 0, when: 'before' });
    const failed = await liveStep(h, 'verification', verifyBodyOf(body, answer));
    expect(failed.status).toBe(503);
    expect(failed.headers.get('Retry-After')).toMatch(/^\d+$/);
    // Nothing recorded: the transaction is still challenged, and no event left.
    expect((await transaction(reference, { via: (r) => h.fetch(r) })).state).toBe('challenged');
    await settledOwner(threeDsObject(reference));
    expect(completedEvents(receiver, reference)).toEqual([]);
    expect(await liveJson(h, 'verification', verifyBodyOf(body, answer))).toMatchObject({ outcome: 'authenticated' });
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticated']);
  });

  it('logs and stores no encData, no key and no card number', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const h = liveHarness();
    const sdk = await sdkFor();
    const body = appBody('2172', sdk);
    const answer = await liveJson(h, 'authenticate', body);
    await sdk.doChallenge(answer.challenge.payload as string, { fetch: toFake, answer: cardholder({ code: '1234' }) });
    await liveJson(h, 'verification', verifyBodyOf(body, answer));
    const parameters = body.deviceData.sdk as Json;
    const stored = (await storedTexts(threeDsObject(body.transactionReference as string))).join('\n');
    const pan = body.instruction.paymentInstrument.cardNumber as string;
    const logged = lines.join('\n');
    expect(logged).toContain(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
    for (const secret of [pan, parameters.encData, (parameters.ephemeralPublicKey as Json).x])
      expect(logged).not.toContain(secret);
    expect(stored).toContain(answer.challenge.reference as string);
    expect(stored).not.toContain(parameters.encData);
    expect(stored).not.toContain((parameters.ephemeralPublicKey as Json).x);
    expect(stored).not.toContain(body.instruction.paymentInstrument.cardNumber);
  });
});
