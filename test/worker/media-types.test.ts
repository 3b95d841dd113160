import { describe, expect, it } from 'vitest';
import { FailureError } from '../../src/failures';
import { acceptedVersion, checkHeaders, THREE_DS_API, TOKENS_API } from '../../src/http/api-headers';
import { THREE_DS_MEDIA_TYPES, TOKENS_MEDIA_TYPES, type ApiVersion } from '../../src/media-types';
import type { ErrorMessage } from '../../src/threeds/live/emv-messages';
import { dsUnreachable } from '../../src/threeds/transaction/live-authentication';
import { basic, burst, call, luhnComplete, TEST_AUTH, type Fetch } from './helpers';
import { liveBody, liveHarness } from './live-helpers';
import { authenticateBody, cardFront, newReference, THREEDS } from './threeds-helpers';
import { tokenBody } from './token-helpers';

/**
 * Versions 1, 2 and 3 of the 3DS and Tokens APIs (docs/pipeline.md step 3, docs/compatibility.md
 * "Versions"): Accept picks the version, Content-Type must name the same one, every answer
 * (errors included) is in its media type; and what versions 2 and 3 change in 3-D Secure
 * (docs/threeds.md "Versions"): transactionReferenceIsADuplicate, authenticationOutage.
 */

type Json = Record<string, any>;

const DS = THREE_DS_MEDIA_TYPES;
const TK = TOKENS_MEDIA_TYPES;
const VERSIONS: ApiVersion[] = [1, 2, 3];
const DS_V4 = 'application/vnd.worldpay.verifications.customers-v4.hal+json';
const TK_V4 = 'application/vnd.worldpay.tokens-v4.hal+json';
const AUTHENTICATE_LINK = { href: 'https://edge.test/verifications/customers/3ds/authenticate' };

/** A 3DS step with this Accept and Content-Type (by default Accept's); undefined or null: the header is not sent. */
function threeDs(
  step: string,
  body: unknown,
  accept: string | undefined,
  contentType: string | null = accept ?? null,
  extra: Record<string, string> = {},
  via?: Fetch,
): Promise<Response> {
  return call(`${THREEDS}/${step}`, {
    body,
    headers: { Authorization: TEST_AUTH, Accept: accept, 'Content-Type': contentType ?? undefined, ...extra },
    via,
  });
}

function initBody(): Json {
  return { transactionReference: newReference(), merchant: { entity: 'default' }, paymentInstrument: cardFront() };
}

let cards = 0;
/** A card number no other token of this run has. */
function freshCard(): string {
  cards += 1;
  return luhnComplete(`4571368${String(Date.now() % 1e6).padStart(6, '0')}${String(cards).padStart(2, '0')}`, 16);
}

function tokens(method: string, path: string, accept: string | undefined, contentType?: string, body?: unknown) {
  return call(path, {
    method,
    body,
    headers: { Authorization: TEST_AUTH, Accept: accept, 'Content-Type': contentType },
  });
}

/** Status, error name, headerName and the answer's Content-Type of an error. */
async function expectError(
  response: Response,
  status: number,
  errorName: string,
  mediaType: string,
  headerName?: string,
): Promise<Json> {
  const body = await response.json<Json>();
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(body.errorName).toBe(errorName);
  expect(response.headers.get('Content-Type')).toBe(mediaType);
  if (headerName) expect(body.headerName).toBe(headerName);
  return body;
}

describe('version negotiation (pure)', () => {
  it.each<[string, ApiVersion | undefined]>([
    [DS[1], 1],
    [DS[2], 2],
    [DS[3], 3],
    [`${DS[3].toUpperCase()} ; charset=utf-8`, 3],
    [`text/html, ${DS[2]}`, 2],
    [`${DS[1]};q=0.5, ${DS[3]}`, 3],
    [`${DS[3]};q=0.4, ${DS[1]};q=0.5`, 1],
    [`${DS[2]};q=0.8, ${DS[3]};q=0.8`, 2],
    [`${DS[3]};q=0, ${DS[1]}`, 1],
    [`${DS[3]};q=0.000`, undefined],
    [`*/*, ${DS[3]};q=0.1`, 3],
    ['*/*', undefined],
    ['application/*', undefined],
    [DS_V4, undefined],
    [TK[3], undefined],
    ['', undefined],
  ])('3DS Accept %j picks version %s', (accept, version) => {
    expect(acceptedVersion(accept, THREE_DS_API)).toBe(version);
  });

  it("ignores the Accept's other parameters (Worldpay's masked=false)", () => {
    expect(acceptedVersion(`${TK[3]}; masked=false`, TOKENS_API)).toBe(3);
  });

  it('returns the negotiated version, and refuses a Content-Type of another version than Accept', () => {
    expect(checkHeaders(new Headers({ Accept: DS[2], 'Content-Type': DS[2] }), THREE_DS_API, true)).toBe(2);
    expect(checkHeaders(new Headers({ Accept: TK[3] }), TOKENS_API, false)).toBe(3);
    // GET and DELETE read no Content-Type, so theirs is not compared.
    expect(checkHeaders(new Headers({ Accept: TK[3], 'Content-Type': TK[1] }), TOKENS_API, false)).toBe(3);
    try {
      checkHeaders(new Headers({ Accept: DS[3], 'Content-Type': DS[1] }), THREE_DS_API, true);
      expect.unreachable();
    } catch (e) {
      expect((e as FailureError).failure).toMatchObject({ kind: 'headerInvalid', header: 'Content-Type', status: 400 });
    }
  });

  it('calls the Directory Server unreachable on Erro 405 from the DS, or from the 3DS Server naming it, only', () => {
    const erro = (errorCode: string, errorComponent: string, errorDescription: string): ErrorMessage => ({
      messageType: 'Erro',
      errorCode,
      errorComponent,
      errorDescription,
      errorDetail: '',
    });
    expect(dsUnreachable(erro('405', 'D', 'Connection timeout'))).toBe(true);
    expect(dsUnreachable(erro('405', 'S', 'Unable to contact Directory Server'))).toBe(true);
    expect(dsUnreachable(erro('405', 'A', 'Connection timeout'))).toBe(false);
    expect(dsUnreachable(erro('405', 'S', 'Connection timeout'))).toBe(false);
    expect(dsUnreachable(erro('305', 'D', 'Transaction data not valid'))).toBe(false);
  });
});

describe('every version, on both versioned APIs', () => {
  it.each(VERSIONS)('3DS deviceDataInitialize in v%i answers in its media type', async (version) => {
    const response = await threeDs('deviceDataInitialize', initBody(), DS[version]);
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(DS[version]);
    expect((await response.json<Json>()).outcome).toBe('initialized');
  });

  it.each(VERSIONS)('3DS authenticate and verification in v%i answer in its media type', async (version) => {
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    const auth = await threeDs('authenticate', body, DS[version]);
    expect(auth.status).toBe(200);
    expect(auth.headers.get('Content-Type')).toBe(DS[version]);
    const { challenge } = await auth.json<Json>();
    const verified = await threeDs(
      'verification',
      { transactionReference: body.transactionReference, merchant: { entity: 'default' }, challenge },
      DS[version],
    );
    expect(verified.status).toBe(200);
    expect(verified.headers.get('Content-Type')).toBe(DS[version]);
  });

  it.each(VERSIONS)('POST, GET and DELETE on tokens in v%i answer in its media type', async (version) => {
    const created = await tokens('POST', '/tokens', TK[version], TK[version], tokenBody({ cardNumber: freshCard() }));
    expect(created.status).toBe(201);
    expect(created.headers.get('Content-Type')).toBe(TK[version]);
    const path = new URL((await created.json<Json>()).tokenPaymentInstrument.href).pathname;
    const read = await tokens('GET', path, TK[version]);
    expect(read.status).toBe(200);
    expect(read.headers.get('Content-Type')).toBe(TK[version]);
    const deleted = await tokens('DELETE', path, TK[version]);
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('Content-Type')).toBeNull();
  });

  it('reads a token in another version than the one that created it', async () => {
    const created = await tokens('POST', '/tokens', TK[1], TK[1], tokenBody({ cardNumber: freshCard() }));
    const path = new URL((await created.json<Json>()).tokenPaymentInstrument.href).pathname;
    const read = await tokens('GET', path, TK[3]);
    expect(read.status).toBe(200);
    expect(read.headers.get('Content-Type')).toBe(TK[3]);
    // The same token: the same href, whose last segment is its object's id, then its id.
    const token = await read.json<Json>();
    expect(new URL(token.tokenPaymentInstrument.href as string).pathname).toBe(path);
    expect(path.endsWith(token.tokenId as string)).toBe(true);
  });

  it('takes parameters on the media types (charset) and any letter case', async () => {
    const response = await threeDs('deviceDataInitialize', initBody(), DS[2].toUpperCase(), `${DS[2]}; charset=UTF-8`);
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(DS[2]);
  });
});

describe('the q of Accept entries', () => {
  it('answers in the version of the highest q, whose media type Content-Type must then be', async () => {
    const accept = `${DS[1]};q=0.5, ${DS[3]}`;
    const ok = await threeDs('deviceDataInitialize', initBody(), accept, DS[3]);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('Content-Type')).toBe(DS[3]);
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), accept, DS[1]),
      400,
      'headerHasInvalidValue',
      DS[3],
      'Content-Type',
    );
  });

  it('takes the first of equal q, and never an entry with q=0', async () => {
    const first = await threeDs('deviceDataInitialize', initBody(), `${DS[2]};q=0.9, ${DS[3]};q=0.9`, DS[2]);
    expect(first.headers.get('Content-Type')).toBe(DS[2]);
    const notZero = await threeDs('deviceDataInitialize', initBody(), `${DS[3]};q=0, ${DS[1]}`, DS[1]);
    expect(notZero.status).toBe(200);
    expect(notZero.headers.get('Content-Type')).toBe(DS[1]);
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), `${DS[3]};q=0`, DS[3]),
      406,
      'headerHasInvalidValue',
      DS[1],
      'Accept',
    );
  });

  it('picks the version of a GET on tokens', async () => {
    const created = await tokens('POST', '/tokens', TK[1], TK[1], tokenBody({ cardNumber: freshCard() }));
    const path = new URL((await created.json<Json>()).tokenPaymentInstrument.href).pathname;
    const read = await tokens('GET', path, `${TK[1]};q=0.2, ${TK[2]};q=0.7, ${TK[3]};q=0`);
    expect(read.headers.get('Content-Type')).toBe(TK[2]);
  });
});

describe('what negotiation refuses', () => {
  it('refuses a Content-Type of another version than Accept: 400, in the version Accept asked for', async () => {
    const body = await expectError(
      await threeDs('deviceDataInitialize', initBody(), DS[3], DS[1]),
      400,
      'headerHasInvalidValue',
      DS[3],
      'Content-Type',
    );
    expect(body.message).toContain(DS[3]);
    await expectError(
      await tokens('POST', '/tokens', TK[2], TK[3], tokenBody({ cardNumber: freshCard() })),
      400,
      'headerHasInvalidValue',
      TK[2],
      'Content-Type',
    );
  });

  it('refuses an unknown version: 406 at Accept (in v1), 415 at Content-Type (in the version Accept asked for)', async () => {
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), DS_V4),
      406,
      'headerHasInvalidValue',
      DS[1],
      'Accept',
    );
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), DS[2], DS_V4),
      415,
      'headerHasInvalidValue',
      DS[2],
      'Content-Type',
    );
    await expectError(
      await tokens('GET', '/tokens/T0000000000000000', TK_V4),
      406,
      'headerHasInvalidValue',
      TK[1],
      'Accept',
    );
    await expectError(
      await tokens('POST', '/tokens', TK[3], TK_V4, tokenBody()),
      415,
      'headerHasInvalidValue',
      TK[3],
      'Content-Type',
    );
  });

  it.each(['*/*', 'application/*', 'application/vnd.worldpay.verifications.customers.hal+json', TK[1]])(
    'refuses Accept %j: a versioned API answers only its media types, named',
    async (accept) => {
      await expectError(
        await threeDs('deviceDataInitialize', initBody(), accept, DS[1]),
        406,
        'headerHasInvalidValue',
        DS[1],
        'Accept',
      );
    },
  );

  it('still requires Accept (in v1) and Content-Type (in the version Accept asked for)', async () => {
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), undefined, DS[3]),
      400,
      'headerIsMissing',
      DS[1],
      'Accept',
    );
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), DS[3], null),
      400,
      'headerIsMissing',
      DS[3],
      'Content-Type',
    );
  });
});

describe('errors in the version asked for', () => {
  it('writes every error after Accept picked a version in its media type', async () => {
    // 400 schema, in v2
    await expectError(
      await threeDs('deviceDataInitialize', { transactionReference: newReference() }, DS[2]),
      400,
      'bodyDoesNotMatchSchema',
      DS[2],
    );
    // 401 before the headers are checked, in v3
    await expectError(
      await threeDs('authenticate', authenticateBody(), DS[3], DS[3], { Authorization: basic('test-merchant', 'x') }),
      401,
      'accessDenied',
      DS[3],
    );
    // 405 on an API path, in v3
    await expectError(
      await call(`${THREEDS}/authenticate`, { method: 'GET', headers: { Authorization: TEST_AUTH, Accept: DS[3] } }),
      405,
      'methodNotAllowed',
      DS[3],
    );
    // 404 of a token, in v3
    await expectError(await tokens('GET', '/tokens/T0000000000000000', TK[3]), 404, 'resourceNotFound', TK[3]);
    // The sandbox header, in v2
    await expectError(
      await threeDs('deviceDataInitialize', initBody(), DS[2], DS[2], { 'WP-Sandbox-Simulate': '503' }),
      503,
      'serviceUnavailable',
      DS[2],
    );
  });
});

describe('a different authenticate body under a used transactionReference, per version (test)', () => {
  it('answers unavailable to v1, 400 transactionReferenceIsADuplicate to v2 and v3, and changes nothing', async () => {
    const reference = newReference();
    const first = authenticateBody({ reference, cardHolderName: '3ds2-frictionless-identified' });
    const other = authenticateBody({ reference, cardHolderName: '3ds2-frictionless-identified', amount: 999 });
    const answered = await threeDs('authenticate', first, DS[1]);
    const firstText = await answered.text();
    expect(JSON.parse(firstText).outcome).toBe('authenticated');

    const v1 = await threeDs('authenticate', other, DS[1]);
    expect(v1.status).toBe(200);
    expect(await v1.json<Json>()).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
    for (const version of [2, 3] as const) {
      const body = await expectError(
        await threeDs('authenticate', other, DS[version]),
        400,
        'transactionReferenceIsADuplicate',
        DS[version],
      );
      expect(body).not.toHaveProperty('headerName');
    }
    // The first body, in any version, still gets its answer byte for byte.
    for (const version of VERSIONS) {
      const again = await threeDs('authenticate', first, DS[version]);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(firstText);
    }
  });
});

describe('authenticationOutage: the test magic value 3ds2-authentication-outage', () => {
  const outageBody = (reference = newReference()) =>
    authenticateBody({ reference, cardHolderName: '3ds2-authentication-outage' });

  it('answers authenticationOutage to v3 and unavailable to v1 and v2, each repeated byte for byte', async () => {
    const body = outageBody();
    const v3 = await threeDs('authenticate', body, DS[3]);
    const v3Text = await v3.text();
    expect(v3.headers.get('Content-Type')).toBe(DS[3]);
    expect(JSON.parse(v3Text)).toEqual({
      outcome: 'authenticationOutage',
      transactionReference: body.transactionReference,
      _links: { '3ds:authenticate': AUTHENTICATE_LINK },
    });
    const unavailable = {
      outcome: 'unavailable',
      transactionReference: body.transactionReference,
      status: 'U',
      enrolled: 'U',
      _links: { '3ds:authenticate': AUTHENTICATE_LINK },
    };
    const v1Text = await (await threeDs('authenticate', body, DS[1])).text();
    expect(JSON.parse(v1Text)).toEqual(unavailable);
    expect(await (await threeDs('authenticate', body, DS[2])).text()).toBe(v1Text);
    expect(await (await threeDs('authenticate', body, DS[3])).text()).toBe(v3Text);
  });

  it('does not depend on which version came first', async () => {
    const body = outageBody();
    expect((await (await threeDs('authenticate', body, DS[2])).json<Json>()).outcome).toBe('unavailable');
    expect((await (await threeDs('authenticate', body, DS[3])).json<Json>()).outcome).toBe('authenticationOutage');
  });

  it('gives a burst of identical v3 requests one answer', async () => {
    const body = outageBody();
    const texts = await burst(12, async () => (await threeDs('authenticate', body, DS[3])).text());
    expect(new Set(texts).size).toBe(1);
    expect(JSON.parse(texts[0]!).outcome).toBe('authenticationOutage');
  });

  it('gives a burst of identical v3 challenged requests one challenge', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    const texts = await burst(12, async () => (await threeDs('authenticate', body, DS[3])).text());
    expect(new Set(texts).size).toBe(1);
    expect(JSON.parse(texts[0]!).outcome).toBe('challenged');
  });
});

describe('live: the Directory Server unreachable, and a different body', () => {
  const authCalls = (h: ReturnType<typeof liveHarness>): number =>
    h.count((c) => c.store === 'provider' && c.op === 'auth');

  it('answers authenticationOutage to v3 and unavailable to v1 and v2 after Erro 405 from the DS, one AReq', async () => {
    const h = liveHarness();
    const via: Fetch = (r) => h.fetch(r);
    const body = liveBody('2160', { browser: true }); // the DS times out: Erro 405 (D)
    const v3 = await threeDs('authenticate', body, DS[3], DS[3], {}, via);
    const v3Text = await v3.text();
    expect(v3.status).toBe(200);
    expect(v3.headers.get('Content-Type')).toBe(DS[3]);
    expect(JSON.parse(v3Text)).toEqual({
      outcome: 'authenticationOutage',
      transactionReference: body.transactionReference,
      _links: { '3ds:authenticate': AUTHENTICATE_LINK },
    });
    const v1Text = await (await threeDs('authenticate', body, DS[1], DS[1], {}, via)).text();
    expect(JSON.parse(v1Text)).toEqual({
      outcome: 'unavailable',
      transactionReference: body.transactionReference,
      status: 'U',
      enrolled: 'U',
      _links: { '3ds:authenticate': AUTHENTICATE_LINK },
    });
    expect(await (await threeDs('authenticate', body, DS[2], DS[2], {}, via)).text()).toBe(v1Text);
    expect(await (await threeDs('authenticate', body, DS[3], DS[3], {}, via)).text()).toBe(v3Text);
    expect(authCalls(h)).toBe(1);
  });

  it('answers a v1 first request unavailable, and v3 retries authenticationOutage, from one stored answer', async () => {
    const h = liveHarness();
    const via: Fetch = (r) => h.fetch(r);
    const body = liveBody('2160', { browser: true });
    expect((await (await threeDs('authenticate', body, DS[1], DS[1], {}, via)).json<Json>()).outcome).toBe(
      'unavailable',
    );
    expect((await (await threeDs('authenticate', body, DS[3], DS[3], {}, via)).json<Json>()).outcome).toBe(
      'authenticationOutage',
    );
    expect(authCalls(h)).toBe(1);
  });

  it('answers unavailable, not an outage, to v3 when the issuer answered U', async () => {
    const h = liveHarness();
    const answer = await (
      await threeDs('authenticate', liveBody('2150', { browser: true }), DS[3], DS[3], {}, (r) => h.fetch(r))
    ).json<Json>();
    expect(answer).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
  });

  it('gives a burst of identical v3 requests one answer and sends one AReq', async () => {
    const h = liveHarness();
    const body = liveBody('2160', { browser: true });
    const texts = await burst(10, async () =>
      (await threeDs('authenticate', body, DS[3], DS[3], {}, (r) => h.fetch(r))).text(),
    );
    expect(new Set(texts).size).toBe(1);
    expect(JSON.parse(texts[0]!).outcome).toBe('authenticationOutage');
    expect(authCalls(h)).toBe(1);
  });

  it('answers a different body unavailable to v1 and transactionReferenceIsADuplicate to v2 and v3', async () => {
    const h = liveHarness();
    const via: Fetch = (r) => h.fetch(r);
    const reference = newReference();
    const first = liveBody('2100', { browser: true, reference });
    const other = liveBody('2100', { browser: true, reference, amount: 999 });
    const firstText = await (await threeDs('authenticate', first, DS[3], DS[3], {}, via)).text();
    expect(JSON.parse(firstText).outcome).toBe('authenticated');
    for (const version of [2, 3] as const) {
      await expectError(
        await threeDs('authenticate', other, DS[version], DS[version], {}, via),
        400,
        'transactionReferenceIsADuplicate',
        DS[version],
      );
    }
    const v1 = await (await threeDs('authenticate', other, DS[1], DS[1], {}, via)).json<Json>();
    expect(v1).toMatchObject({ outcome: 'unavailable', status: 'U', enrolled: 'U' });
    expect(await (await threeDs('authenticate', first, DS[3], DS[3], {}, via)).text()).toBe(firstText);
    expect(authCalls(h)).toBe(1);
  });
});
