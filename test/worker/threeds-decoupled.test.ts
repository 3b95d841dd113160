import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { testIssuer } from '../../src/threeds/scenarios';
import {
  restoreTransport,
  receivingAtTestEndpoint,
  settledOwner,
  settledOutcomes,
  completedEvents,
} from './event-helpers';
import { burst } from './helpers';
import { threeDsObject } from './projection-helpers';
import { authenticateBody, threeDs, THREEDS_HEADERS, transaction, verifyBody } from './threeds-helpers';
import { call } from './helpers';
import { createTransaction, type DirectoryServer } from '../sdk/test-sdk';

/**
 * Decoupled authentication in `test` (docs/threeds.md "Decoupled"; CONTRACT §12): a request that
 * allows it (`decoupled.maxMinutes`) and a decoupled scenario gets `outcome: "decoupled"`; the
 * test issuer answers 5 s later (or never), and the result reaches `verification`, GET and the
 * event `threeDS.authentication.completed` once. Before it, `verification` answers `decoupled`
 * again; past `expiresAt` with none, `unavailable` for good. The tests make the issuer's answer
 * due at once (`testIssuer.decoupledAnswerMs`) or move the stored deadline, never wait.
 */

type Json = Record<string, any>;

const DEFAULT_ANSWER_MS = testIssuer.decoupledAnswerMs;

afterEach(async () => {
  testIssuer.decoupledAnswerMs = DEFAULT_ANSWER_MS;
  await restoreTransport();
});

async function authenticate(name: string, decoupledMinutes?: number): Promise<{ body: Json; answer: Json }> {
  const body = authenticateBody({ cardHolderName: name, decoupledMinutes });
  const response = await threeDs('authenticate', body);
  const answer = await response.json<Json>();
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return { body, answer };
}

async function verify(body: Json, reference: string): Promise<Json> {
  const response = await threeDs('verification', verifyBody(body.transactionReference as string, reference));
  const answer = await response.json<Json>();
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

/** Moves the decoupled authentication's stored deadline into the past (as if maxMinutes had passed). */
function expireDecoupled(transactionReference: string): Promise<void> {
  return runInDurableObject(threeDsObject(transactionReference), (_o, state) => {
    state.storage.sql.exec('UPDATE challenge SET expires_at = ? WHERE decoupled = 1', Date.now() - 1);
  });
}

describe('decoupled authentication, in test', () => {
  it('answers decoupled with the challenge reference and expiresAt, and verification answers decoupled again until the issuer answers', async () => {
    const before = Date.now();
    const { body, answer } = await authenticate('3ds2-decoupled-authenticated', 30);
    expect(answer).toEqual({
      outcome: 'decoupled',
      transactionReference: body.transactionReference,
      authentication: { version: '2.2.0' },
      challenge: { reference: expect.stringMatching(/^[A-Za-z0-9]{20}$/) },
      decoupled: { expiresAt: expect.any(String) },
      _links: { '3ds:verify': { href: expect.stringMatching(/\/verification$/) } },
    });
    const expiresAt = Date.parse(answer.decoupled.expiresAt as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    // The issuer answers 5 s after authenticate: not yet.
    expect(await verify(body, answer.challenge.reference as string)).toEqual(answer);
    expect((await transaction(body.transactionReference as string)).state).toBe('decoupled');
  });

  it('gives the issuer’s result to verification, GET and the event, once; identical verifications agree', async () => {
    testIssuer.decoupledAnswerMs = 0;
    const receiver = await receivingAtTestEndpoint();
    for (const [name, outcome, status] of [
      ['3ds2-decoupled-authenticated', 'authenticated', 'Y'],
      ['3ds2-decoupled-failed', 'authenticationFailed', 'N'],
    ] as const) {
      const { body, answer } = await authenticate(name, 10);
      const reference = body.transactionReference as string;
      const verified = await burst(20, () => verify(body, answer.challenge.reference as string));
      expect(verified[0]).toMatchObject({ outcome, status, authentication: { version: '2.2.0' } });
      for (const v of verified) expect(v).toEqual(verified[0]);
      const got = await transaction(reference);
      expect(got.state).toBe('completed');
      expect(got.result).toEqual(verified[0]);
      await receiver.until(() => completedEvents(receiver, reference).length > 0);
      await settledOwner(threeDsObject(reference));
      const events = completedEvents(receiver, reference);
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ outcome, status });
    }
  });

  it('sends the event from the alarm when nobody asks: the issuer’s answer is the alarm’s time', async () => {
    testIssuer.decoupledAnswerMs = 60_000;
    const receiver = await receivingAtTestEndpoint();
    const { body } = await authenticate('3ds2-decoupled-authenticated', 10);
    const reference = body.transactionReference as string;
    const owner = threeDsObject(reference);
    await settledOwner(owner);
    const { alarm, answersAt } = await runInDurableObject(owner, async (_o, state) => ({
      alarm: await state.storage.getAlarm(),
      answersAt: state.storage.sql.exec<{ at: number }>('SELECT answers_at AS at FROM challenge').one().at,
    }));
    expect(alarm).toBe(answersAt);
    // The issuer's time comes (moved, not waited for); no call after authenticate: the alarm ends it.
    await runInDurableObject(owner, (_o, state) => {
      state.storage.sql.exec('UPDATE challenge SET answers_at = ?', Date.now() - 1);
    });
    await runDurableObjectAlarm(owner);
    expect(await settledOutcomes(receiver, reference, owner)).toEqual(['authenticated']);
  });

  it('past expiresAt with no answer: unavailable (status U) for good, from verification, GET and the event', async () => {
    const receiver = await receivingAtTestEndpoint();
    const { body, answer } = await authenticate('3ds2-decoupled-timeout', 1);
    const reference = body.transactionReference as string;
    expect((await verify(body, answer.challenge.reference as string)).outcome).toBe('decoupled');
    await expireDecoupled(reference);
    const first = await verify(body, answer.challenge.reference as string);
    expect(first).toMatchObject({ outcome: 'unavailable', status: 'U' });
    expect(await verify(body, answer.challenge.reference as string)).toEqual(first);
    expect((await transaction(reference)).result).toEqual(first);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['unavailable']);
  });

  it('an issuer’s answer due after expiresAt changes nothing: unavailable stays, in verification, GET and the one event', async () => {
    testIssuer.decoupledAnswerMs = 60 * 60_000;
    const receiver = await receivingAtTestEndpoint();
    const { body, answer } = await authenticate('3ds2-decoupled-authenticated', 1);
    const reference = body.transactionReference as string;
    const challenge = answer.challenge.reference as string;
    // The time ran out, and the issuer's answer (Y) came due after that, before anyone asked:
    // it came too late, so the first verification after the end records unavailable.
    const now = Date.now();
    await runInDurableObject(threeDsObject(reference), (_o, state) => {
      state.storage.sql.exec(
        'UPDATE challenge SET expires_at = ?, answers_at = ? WHERE decoupled = 1',
        now - 10,
        now - 5,
      );
    });
    const first = await verify(body, challenge);
    expect(first).toMatchObject({ outcome: 'unavailable', status: 'U' });
    // Neither a later verification nor the alarm takes it.
    await runDurableObjectAlarm(threeDsObject(reference));
    expect(await verify(body, challenge)).toEqual(first);
    expect((await transaction(reference)).result).toEqual(first);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['unavailable']);
  });

  it('an app (its SDK’s data, no browser) is decoupled the same way: decoupled, then the issuer’s result, the event once', async () => {
    testIssuer.decoupledAnswerMs = 0;
    const receiver = await receivingAtTestEndpoint();
    const ds = await (await call('/3ds/test/directory-server', { method: 'GET' })).json<DirectoryServer>();
    const sdk = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'CARD-EDGE-TEST-SDK' });
    const body = authenticateBody({ cardHolderName: '3ds2-decoupled-authenticated', decoupledMinutes: 10 });
    body.deviceData = { channel: 'app', sdk: sdk.authenticationParameters() };
    body.challenge = {};
    const response = await threeDs('authenticate', body);
    const answer = await response.json<Json>();
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer).toMatchObject({ outcome: 'decoupled', decoupled: { expiresAt: expect.any(String) } });
    expect(answer.challenge.payload).toBeUndefined();
    const reference = body.transactionReference as string;
    const verified = await verify(body, answer.challenge.reference as string);
    expect(verified).toMatchObject({ outcome: 'authenticated', status: 'Y' });
    expect((await transaction(reference)).result).toEqual(verified);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticated']);
  });

  it('an issuer’s answer racing verification gives one result everywhere, the event once', async () => {
    const receiver = await receivingAtTestEndpoint();
    const { body, answer } = await authenticate('3ds2-decoupled-failed', 10);
    const reference = body.transactionReference as string;
    const challenge = answer.challenge.reference as string;
    // The issuer's answer becomes due while 20 verifications are under way.
    await runInDurableObject(threeDsObject(reference), (_o, state) => {
      state.storage.sql.exec('UPDATE challenge SET answers_at = ? WHERE decoupled = 1', Date.now() + 20);
    });
    const answers = await burst(20, async (i) => {
      await new Promise((r) => setTimeout(r, i * 2));
      return verify(body, challenge);
    });
    const results = answers.filter((a) => a.outcome !== 'decoupled');
    for (const a of results) expect(a).toEqual(results[0]);
    const final = await verify(body, challenge);
    expect(final.outcome).toBe('authenticationFailed');
    for (const a of results) expect(a).toEqual(final);
    expect((await transaction(reference)).result).toEqual(final);
    expect(await settledOutcomes(receiver, reference, threeDsObject(reference))).toEqual(['authenticationFailed']);
  });

  it('the sandbox ends it at once, as the caller says; timedOut is unavailable', async () => {
    for (const [result, outcome] of [
      ['passed', 'authenticated'],
      ['timedOut', 'unavailable'],
    ] as const) {
      const { body, answer } = await authenticate('3ds2-decoupled-timeout', 10);
      const response = await threeDs('sandbox/completeChallenge', {
        transactionReference: body.transactionReference,
        merchant: { entity: 'default' },
        challenge: { reference: answer.challenge.reference },
        result,
      });
      expect(response.status).toBe(200);
      expect((await response.json<Json>()).challenge.result).toBe(result);
      expect((await verify(body, answer.challenge.reference as string)).outcome).toBe(outcome);
    }
  });

  it('answers 20 identical authenticate requests at once with one decoupled answer and one reference', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-decoupled-authenticated', decoupledMinutes: 10 });
    const answers = await burst(20, async () => (await threeDs('authenticate', body)).json<Json>());
    expect(answers[0]!.outcome).toBe('decoupled');
    for (const a of answers) expect(a).toEqual(answers[0]);
    const rows = await runInDurableObject(threeDsObject(body.transactionReference as string), (_o, state) =>
      state.storage.sql.exec('SELECT reference FROM challenge').toArray(),
    );
    expect(rows).toEqual([{ reference: answers[0]!.challenge.reference }]);
  });

  it('without a decoupled block, a decoupled scenario answers unavailable (an unrequested D)', async () => {
    const { answer } = await authenticate('3ds2-decoupled-authenticated');
    expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
  });

  it('has no challenge page: the form routes know no decoupled reference', async () => {
    const { answer } = await authenticate('3ds2-decoupled-authenticated', 10);
    expect(answer.challenge.url).toBeUndefined();
    expect(answer.challenge.jwt).toBeUndefined();
  });

  it('an object of the version before (its challenge without the decoupled columns) is upgraded once and its open challenge goes on', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    const answer = await (await threeDs('authenticate', body)).json<Json>();
    const reference = body.transactionReference as string;
    await runInDurableObject(threeDsObject(reference), (_o, state) => {
      const sql = state.storage.sql;
      for (const column of ['decoupled', 'answers_at', 'issuer_outcome'])
        sql.exec(`ALTER TABLE challenge DROP COLUMN ${column}`);
      sql.exec('UPDATE schema_version SET version = 1');
    });
    await abortAllDurableObjects();
    const ended = await threeDs('sandbox/completeChallenge', {
      ...verifyBody(reference, answer.challenge.reference as string),
      result: 'passed',
    });
    expect(ended.status).toBe(200);
    expect((await verify(body, answer.challenge.reference as string)).outcome).toBe('authenticated');
    const columns = await runInDurableObject(threeDsObject(reference), (_o, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('challenge')")
        .toArray()
        .map((c) => c.name),
    );
    expect(columns).toEqual(expect.arrayContaining(['decoupled', 'answers_at', 'issuer_outcome']));
  });

  it.each([
    [0, 'integerIsTooSmall'],
    [10_081, 'integerIsTooLarge'],
  ])('refuses maxMinutes %s with %s at $.decoupled.maxMinutes', async (maxMinutes, errorName) => {
    const body = { ...authenticateBody({ cardHolderName: '3ds2-decoupled-authenticated' }), decoupled: { maxMinutes } };
    const response = await call('/verifications/customers/3ds/authenticate', { headers: THREEDS_HEADERS, body });
    expect(response.status).toBe(400);
    const error = await response.json<Json>();
    expect(error.validationErrors ?? error).toEqual(
      expect.arrayContaining([expect.objectContaining({ errorName, jsonPath: '$.decoupled.maxMinutes' })]),
    );
  });
});
