import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { burst, CARD_BIN_HEADERS, luhnComplete, panLookup } from './helpers';
import { liveBody, liveHarness, liveJson, livePage, liveStep } from './live-helpers';
import {
  authenticateBody,
  completeChallenge as cardholder,
  postForm,
  THREEDS,
  threeDs,
  verifyBody,
} from './threeds-helpers';
import { createToken, tokenBody } from './token-helpers';

/**
 * The sandbox controls of the `test` environment: completing a challenge without a browser, and
 * the WP-Sandbox-Simulate header; both refused in `live`.
 */

type Json = Record<string, any>;

async function challenged(): Promise<{ reference: string; challenge: string; jwt: string }> {
  const body = authenticateBody();
  const auth: Json = await (await threeDs('authenticate', body)).json();
  expect(auth.outcome).toBe('challenged');
  return {
    reference: body.transactionReference as string,
    challenge: auth.challenge.reference,
    jwt: auth.challenge.jwt,
  };
}

function complete(reference: string, challenge: string, result: string, entity = 'default'): Promise<Response> {
  return threeDs('sandbox/completeChallenge', { ...verifyBody(reference, challenge, entity), result });
}

describe('sandbox: completing a challenge without a browser', () => {
  it.each([
    ['passed', 'authenticated'],
    ['failed', 'authenticationFailed'],
    ['cancelled', 'authenticationFailed'],
    ['timedOut', 'authenticationFailed'],
  ])('completes it as %s; verification then answers %s', async (result, outcome) => {
    const t = await challenged();
    const response = await complete(t.reference, t.challenge, result);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      outcome: 'challengeCompleted',
      transactionReference: t.reference,
      challenge: { reference: t.challenge, result },
      _links: { '3ds:verify': { href: `https://edge.test${THREEDS}/verification` } },
    });
    const verified: Json = await (await threeDs('verification', verifyBody(t.reference, t.challenge))).json();
    expect(verified.outcome).toBe(outcome);
  });

  it('gives the challenge one result whatever 20 parallel calls ask, and the page agrees', async () => {
    const t = await challenged();
    const results = ['passed', 'failed', 'cancelled', 'timedOut'];
    const answers: Json[] = await burst(20, (i) =>
      complete(t.reference, t.challenge, results[i % 4]!).then((r) => r.json()),
    );
    const reported = new Set(answers.map((a) => a.challenge.result));
    expect(reported.size).toBe(1);
    const [result] = [...reported];
    const verified: Json = await (await threeDs('verification', verifyBody(t.reference, t.challenge))).json();
    expect(verified.outcome).toBe(result === 'passed' ? 'authenticated' : 'authenticationFailed');
    // The cardholder's page no longer offers the form: nothing can change the result afterwards.
    const page = await (await postForm('/3ds/challenge', { JWT: t.jwt })).text();
    expect(page).not.toContain('name="code"');
  });

  it('does not reopen a challenge the cardholder already ended', async () => {
    const t = await challenged();
    await cardholder(t.jwt, ['cancel']);
    const answer: Json = await (await complete(t.reference, t.challenge, 'passed')).json();
    expect(answer.challenge.result).toBe('cancelled');
  });

  it('answers 404 challengeNotFound for a challenge the transaction does not have, or another merchant', async () => {
    const t = await challenged();
    const wrong = await complete(t.reference, 'A'.repeat(20), 'passed');
    expect(wrong.status).toBe(404);
    expect(await wrong.json()).toMatchObject({ errorName: 'challengeNotFound' });
    const other = await complete(t.reference, t.challenge, 'passed', 'other');
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ errorName: 'entityIsNotConfigured' });
  });

  it('validates its body like every endpoint', async () => {
    const t = await challenged();
    const response = await complete(t.reference, t.challenge, 'maybe');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      errorName: 'bodyDoesNotMatchSchema',
      validationErrors: [{ errorName: 'fieldHasInvalidValue', jsonPath: '$.result' }],
    });
  });
});

describe('sandbox: WP-Sandbox-Simulate', () => {
  const lookup = (simulate: string): Promise<Response> =>
    panLookup(
      { merchant: { entity: 'default' }, cardNumber: luhnComplete('341142', 15) },
      { 'WP-Sandbox-Simulate': simulate },
    );

  it('answers 503 serviceUnavailable with Retry-After', async () => {
    const response = await lookup('503');
    expect(response.status).toBe(503);
    expect(response.headers.get('Retry-After')).toBe('1');
    expect(await response.json()).toMatchObject({ errorName: 'serviceUnavailable' });
  });

  it('answers 500 internalErrorOccurred', async () => {
    const response = await lookup('500');
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ errorName: 'internalErrorOccurred' });
  });

  it('answers 429 tooManyRequests with Retry-After', async () => {
    const response = await lookup('429');
    expect(response.status).toBe(429);
    expect(response.headers.get('Retry-After')).toBe('60');
    expect(await response.json()).toMatchObject({ errorName: 'tooManyRequests' });
  });

  it('delays the answer, alone or before a failure', async () => {
    let began = Date.now();
    const slow = await lookup('delay=300');
    expect(slow.status).toBe(200);
    expect(Date.now() - began).toBeGreaterThanOrEqual(300);
    began = Date.now();
    const slowFailure = await lookup('delay=200, 503');
    expect(slowFailure.status).toBe(503);
    expect(Date.now() - began).toBeGreaterThanOrEqual(200);
  });

  it('refuses a value it does not know with 400 headerHasInvalidValue', async () => {
    for (const value of ['404', 'delay=20000', 'slow', '503,500', '']) {
      const response = await lookup(value);
      expect(response.status, value).toBe(400);
      expect(await response.json()).toMatchObject({
        errorName: 'headerHasInvalidValue',
        headerName: 'WP-Sandbox-Simulate',
      });
    }
  });

  it('acts after authentication: a request without credentials still gets its 401', async () => {
    const response = await panLookup(
      { merchant: { entity: 'default' }, cardNumber: luhnComplete('341142', 15) },
      { Authorization: undefined, 'WP-Sandbox-Simulate': '503' },
    );
    expect(response.status).toBe(401);
  });

  it('changes no stored state: a token whose creation was failed is not created', async () => {
    const body = tokenBody({ cardNumber: luhnComplete(`4000${String(Math.random()).slice(2, 10)}`) });
    const failedCreate = await createToken(body, { 'WP-Sandbox-Simulate': '503' });
    expect(failedCreate.status).toBe(503);
    expect((await createToken(body)).status).toBe(201);
  });

  it('works on every API: 3DS and tokens too', async () => {
    expect((await threeDs('authenticate', authenticateBody(), { 'WP-Sandbox-Simulate': '429' })).status).toBe(429);
    expect((await createToken(tokenBody(), { 'WP-Sandbox-Simulate': '500' })).status).toBe(500);
  });
});

describe('sandbox controls in live', () => {
  const LIVE = { ...env, ENVIRONMENT: 'live' };
  const live = (path: string, headers: Record<string, string>, body: unknown): Promise<Response> =>
    worker.fetch(
      new Request<unknown, IncomingRequestCfProperties>(`https://edge.test${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      }),
      LIVE,
      createExecutionContext(),
    );

  it('refuses to complete a challenge: 403 sandboxIsNotEnabled', async () => {
    const h = liveHarness();
    const body = liveBody('2172', { browser: true });
    const auth = await liveJson(h, 'authenticate', body);
    expect(auth.outcome).toBe('challenged');
    const response = await liveStep(h, 'sandbox/completeChallenge', {
      ...verifyBody(body.transactionReference as string, auth.challenge.reference as string),
      result: 'passed',
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ errorName: 'sandboxIsNotEnabled' });
    // The challenge is still the cardholder's to complete, at the issuer's ACS.
    const page = await (await livePage(h, '/3ds/challenge', { JWT: auth.challenge.jwt })).text();
    expect(page).toContain('name="creq"');
  });

  it('refuses WP-Sandbox-Simulate: 400 headerHasInvalidValue, nothing simulated', async () => {
    const response = await live(
      '/api/cardBin/panLookup',
      { ...CARD_BIN_HEADERS, 'WP-Sandbox-Simulate': '503' },
      { merchant: { entity: 'default' }, cardNumber: luhnComplete('341142', 15) },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      errorName: 'headerHasInvalidValue',
      headerName: 'WP-Sandbox-Simulate',
    });
  });
});
