import { env } from 'cloudflare:workers';
import { createExecutionContext, runInDurableObject } from 'cloudflare:test';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { utf8 } from '../../src/bytes';
import worker from '../../src/index';
import { isIsoDateTime } from '../../src/schemas/fields';
import { JWT_ISSUER, verifyJwt } from '../../src/threeds/jwt';
import { call, CARD_BIN_HEADERS, expectErrorCase, panLookup } from './helpers';
import { createToken, tokenBody, tokenCall, TOKENS_MEDIA } from './token-helpers';
import { authenticateBody, hiddenField, newReference, postForm, threeDs, THREEDS_MEDIA } from './threeds-helpers';

type Json = Record<string, any>;

afterEach(() => {
  vi.restoreAllMocks();
});

function captureLogs(): string[] {
  const lines: string[] = [];
  const keep = (...args: unknown[]): void => void lines.push(args.map(String).join(' '));
  vi.spyOn(console, 'log').mockImplementation(keep);
  vi.spyOn(console, 'error').mockImplementation(keep);
  return lines;
}

describe('tokenExpiryDateTime', () => {
  const inTwoDays = new Date(Date.now() + 2 * 86_400_000);
  const day = inTwoDays.toISOString().slice(0, 10);

  it.each([
    ['an offset of 24 hours', `${day}T10:00:00+24:00`],
    ['an offset past +14:00', `${day}T10:00:00+14:30`],
    ['an offset past -12:00', `${day}T10:00:00-12:30`],
    ['minutes of 60 in the offset', `${day}T10:00:00+01:60`],
    ['30 February', '2027-02-30T10:00:00Z'],
    ['no zone', `${day}T10:00:00`],
    ['hour 24', `${day}T24:00:00Z`],
    ['free text', 'next tuesday'],
  ])('answers %s with dateHasInvalidFormat at $.tokenExpiryDateTime', async (_name, value) => {
    await expectErrorCase(
      {
        name: value,
        send: () => createToken(tokenBody({ extra: { tokenExpiryDateTime: value } })),
        status: 400,
        errorName: 'bodyDoesNotMatchSchema',
        fields: [['dateHasInvalidFormat', '$.tokenExpiryDateTime']],
      },
      TOKENS_MEDIA,
    );
  });

  it.each([['+14:00'], ['-12:00'], ['+05:45'], ['Z']])('accepts a real offset (%s)', async (offset) => {
    const response = await createToken(
      tokenBody({ cardNumber: '4571368400000008', extra: { tokenExpiryDateTime: `${day}T10:00:00${offset}` } }),
    );
    expect([200, 201]).toContain(response.status);
  });

  it('knows a real offset from one that is not, as a pure rule', () => {
    expect(isIsoDateTime('2030-01-01T00:00:00.123456789+14:00')).toBe(true);
    expect(isIsoDateTime('2030-01-01T00:00:00-12:01')).toBe(false);
    expect(isIsoDateTime('2028-02-29T00:00Z')).toBe(true);
    expect(isIsoDateTime('2027-02-29T00:00Z')).toBe(false);
  });
});

describe('a body cut off mid-upload', () => {
  it('answers 400 bodyIsNotJson and logs it at warn level, not as a server error', async () => {
    const logs = captureLogs();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"merchant":{"entity":"def'));
        controller.error(new Error('connection reset by peer'));
      },
    });
    // Straight into the handler: through a service binding the cut would arrive as a clean end.
    const request = new Request<unknown, IncomingRequestCfProperties>('https://edge.test/api/cardBin/panLookup', {
      method: 'POST',
      headers: CARD_BIN_HEADERS,
      body,
    });
    const response = await worker.fetch(request, env, createExecutionContext());
    expect(response.status).toBe(400);
    expect((await response.json<Json>()).errorName).toBe('bodyIsNotJson');
    expect(JSON.parse(logs.at(-1)!)).toMatchObject({ level: 'warn', status: 400, errorName: 'bodyIsNotJson' });
  });
});

describe('JWTs of the browser pages', () => {
  const key = utf8(env.JWT_SIGNING_KEY);

  /** A JWT signed with our key and audience, but without one of the claims we require. */
  async function signedWithout(
    claim: 'exp' | 'jti',
    audience: string,
    extra: Record<string, unknown>,
    jti: string = crypto.randomUUID(),
  ): Promise<string> {
    let jwt = new SignJWT(extra)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(JWT_ISSUER)
      .setAudience(audience)
      .setIssuedAt();
    if (claim !== 'exp') jwt = jwt.setExpirationTime('10m');
    if (claim !== 'jti') jwt = jwt.setJti(jti);
    return jwt.sign(key);
  }

  it.each(['exp', 'jti'] as const)('verifies no JWT without %s, whatever else it carries', async (claim) => {
    for (const kind of ['ddc', 'challenge', 'challenge-state'] as const) {
      expect(await verifyJwt(key, kind, await signedWithout(claim, kind, { txn: 'x' }))).toEqual({
        ok: false,
        reason: 'invalid',
      });
    }
  });

  it('records no collection for a DDC JWT without exp, even with the genuine jti and transaction', async () => {
    const transactionReference = newReference();
    const init = await (
      await threeDs('deviceDataInitialize', { transactionReference, merchant: { entity: 'default' } })
    ).json<Json>();
    const genuine = JSON.parse(
      atob(init.deviceDataCollection.jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')),
    ) as Json;
    const forged = await signedWithout('exp', 'ddc', { txn: genuine.txn, OrgUnitId: genuine.OrgUnitId }, genuine.jti);
    expect(await (await postForm('/3ds/ddc', { JWT: forged })).text()).toContain('"Status":false');
    const stub = env.THREEDS_TRANSACTION.get(env.THREEDS_TRANSACTION.idFromString(genuine.txn));
    const rows = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec('SELECT COUNT(*) AS n FROM collections').one(),
    );
    expect(rows.n).toBe(0);
    // The genuine JWT still records its collection.
    expect(await (await postForm('/3ds/ddc', { JWT: init.deviceDataCollection.jwt })).text()).toContain(
      '"Status":true',
    );
  });

  it.each(['exp', 'jti'] as const)('refuses a challenge JWT without %s with an error page', async (claim) => {
    const auth = await (
      await threeDs('authenticate', authenticateBody({ cardHolderName: '3ds2-challenge-identified' }))
    ).json<Json>();
    const genuine = JSON.parse(atob(auth.challenge.jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as Json;
    const { iat: _iat, exp: _exp, jti: _jti, iss: _iss, aud: _aud, ...claims } = genuine;
    const page = await postForm('/3ds/challenge', { JWT: await signedWithout(claim, 'challenge', claims) });
    expect(page.status).toBe(400);
    // The genuine JWT still shows the challenge: the forged one changed nothing.
    expect(
      hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state'),
    ).toBeDefined();
  });
});

describe('returnUrl', () => {
  it.each([
    ['a semicolon', 'https://shop.example;script-src *'],
    ['a comma', 'https://shop,example.com/back'],
    ['a quote', "https://shop'example.com/back"],
    ['a space', 'https://shop example.com/back'],
    ['an IPv6 literal', 'https://[::1]/back'],
  ])('refuses a host with %s with fieldHasInvalidValue at $.challenge.returnUrl', async (_name, returnUrl) => {
    const body = authenticateBody();
    (body.challenge as Json).returnUrl = returnUrl;
    await expectErrorCase(
      {
        name: returnUrl,
        send: () => threeDs('authenticate', body),
        status: 400,
        errorName: 'bodyDoesNotMatchSchema',
        fields: [['fieldHasInvalidValue', '$.challenge.returnUrl']],
      },
      THREEDS_MEDIA,
    );
  });

  it('names only the returnUrl origin in the completion page CSP', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    (body.challenge as Json).returnUrl = 'https://xn--bcher-kva.example:8443/3ds?x=1;y=2';
    const auth = await (await threeDs('authenticate', body)).json<Json>();
    const state = hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state')!;
    const done = await postForm('/3ds/challenge/submit', { state, code: '1234', action: 'submit' });
    expect(done.headers.get('Content-Security-Policy')).toContain(
      "form-action 'self' https://xn--bcher-kva.example:8443;",
    );
  });
});

describe('X-Content-Type-Options: nosniff', () => {
  it.each([
    ['a JSON answer', () => panLookup({ merchant: { entity: 'default' }, cardNumber: '4444333322221111' })],
    ['a JSON error', () => panLookup({ merchant: { entity: 'default' } })],
    ['a 401', () => panLookup({}, { Authorization: undefined })],
    ['an unknown path', () => call('/nowhere')],
    ['a 405', () => call('/tokens', { method: 'PUT' })],
    [
      'a 3DS answer',
      () => threeDs('deviceDataInitialize', { transactionReference: newReference(), merchant: { entity: 'default' } }),
    ],
    [
      'a 204',
      async () =>
        tokenCall(
          'DELETE',
          (await (await createToken(tokenBody({ cardNumber: '4571368400000008', month: 3 }))).json<Json>())
            .tokenPaymentInstrument.href,
        ),
    ],
    ['an HTML page', () => postForm('/3ds/challenge', { JWT: 'x' })],
    [
      'an HTML 415',
      () => call('/3ds/ddc', { headers: { 'Content-Type': 'text/plain' }, rawBody: new TextEncoder().encode('x') }),
    ],
  ])('is on %s', async (_name, send) => {
    expect((await send()).headers.get('X-Content-Type-Options')).toBe('nosniff');
  });
});

describe('a body without a Content-Length (chunked)', () => {
  it('is read as it arrives, within the same 64 KiB cap', async () => {
    const chunked = (text: string): ReadableStream<Uint8Array> =>
      new ReadableStream({
        start(controller) {
          const bytes = new TextEncoder().encode(text);
          for (let at = 0; at < bytes.length; at += 1000) controller.enqueue(bytes.slice(at, at + 1000));
          controller.close();
        },
      });
    const send = (text: string): Promise<Response> =>
      worker.fetch(
        new Request<unknown, IncomingRequestCfProperties>('https://edge.test/api/cardBin/panLookup', {
          method: 'POST',
          headers: CARD_BIN_HEADERS,
          body: chunked(text),
        }),
        env,
        createExecutionContext(),
      );
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const ok = await send(JSON.stringify({ merchant: { entity: 'default' }, cardNumber: '4444333322221111' }));
    expect(ok.status).toBe(200);
    const big = await send(
      JSON.stringify({ merchant: { entity: 'default' }, cardNumber: '4444333322221111', pad: 'x'.repeat(70_000) }),
    );
    expect(big.status).toBe(413);
  });
});
