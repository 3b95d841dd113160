import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { THREE_DS_MEDIA_TYPES, type ApiVersion } from '../../src/media-types';
import { call, luhnComplete, TEST_AUTH, type Fetch } from './helpers';
import { BROWSER_FIELDS, card, expectValidMessages, liveHarness } from './live-helpers';
import { authenticateBody, completeChallenge, newReference, THREEDS, verifyBody } from './threeds-helpers';

/**
 * Worldpay's v3 payment instrument `card/networkToken` (docs/threeds.md "Network tokens"): v3
 * clients may authenticate a network token number as a card number (the BIN lookup of the token
 * number, Luhn, the test magic values; in `live` the provider gets it as acctNumber); v1 and v2
 * refuse it at `type` as before. Every answer also goes through `call`, which checks v3 answers
 * against Worldpay's v3 document.
 */

type Json = Record<string, any>;

const DS = THREE_DS_MEDIA_TYPES;
const VISA_TOKEN = luhnComplete('4895370', 16);
const MASTERCARD_TOKEN = luhnComplete('5204731', 16);
const AMEX_TOKEN = luhnComplete('378282', 15);

function threeDs(step: string, body: unknown, version: ApiVersion, via?: Fetch): Promise<Response> {
  return call(`${THREEDS}/${step}`, {
    body,
    headers: { Authorization: TEST_AUTH, Accept: DS[version], 'Content-Type': DS[version] },
    via,
  });
}

function networkToken(tokenNumber: string, cardHolderName?: string): Json {
  return {
    type: 'card/networkToken',
    tokenNumber,
    cardExpiryDate: { month: 5, year: 2035 },
    ...(cardHolderName === undefined ? {} : { cardHolderName }),
  };
}

function ddcBody(instrument: Json): Json {
  return { transactionReference: newReference(), merchant: { entity: 'default' }, paymentInstrument: instrument };
}

function authBody(instrument: Json, o: Parameters<typeof authenticateBody>[0] = {}): Json {
  const body = authenticateBody(o) as Json;
  body.instruction.paymentInstrument = instrument;
  return body;
}

async function fieldErrors(response: Response): Promise<[string, string][]> {
  const body = await response.json<Json>();
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.errorName).toBe('bodyDoesNotMatchSchema');
  return (body.validationErrors as Json[]).map((e) => [e.errorName, e.jsonPath]);
}

describe('card/networkToken in v1 and v2: refused at its type, as before', () => {
  it.each([1, 2] as const)('refuses it in deviceDataInitialize and authenticate in v%i', async (version) => {
    const ddc = await threeDs('deviceDataInitialize', ddcBody(networkToken(VISA_TOKEN)), version);
    expect(ddc.headers.get('Content-Type')).toBe(DS[version]);
    expect(await fieldErrors(ddc)).toEqual([['fieldHasInvalidValue', '$.paymentInstrument.type']]);
    const auth = await threeDs('authenticate', authBody(networkToken(VISA_TOKEN)), version);
    expect(await fieldErrors(auth)).toEqual([['fieldHasInvalidValue', '$.instruction.paymentInstrument.type']]);
  });
});

describe('card/networkToken in v3 (test)', () => {
  it('initializes device data collection with the BIN of the token number', async () => {
    const response = await threeDs('deviceDataInitialize', ddcBody(networkToken(VISA_TOKEN)), 3);
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toBe(DS[3]);
    const answer = await response.json<Json>();
    expect(answer.outcome).toBe('initialized');
    expect(answer.deviceDataCollection.bin).toBe(VISA_TOKEN.slice(0, 6));
  });

  it('authenticates by the test magic value of its cardholder name, with the ECI of the token number’s brand', async () => {
    const visa = await (
      await threeDs('authenticate', authBody(networkToken(VISA_TOKEN, '3ds2-frictionless-identified')), 3)
    ).json<Json>();
    expect(visa).toMatchObject({ outcome: 'authenticated', status: 'Y', authentication: { eci: '05' } });
    const mastercard = await (
      await threeDs('authenticate', authBody(networkToken(MASTERCARD_TOKEN, '3ds2-frictionless-failed')), 3)
    ).json<Json>();
    expect(mastercard).toMatchObject({ outcome: 'authenticationFailed', status: 'N', authentication: { eci: '00' } });
  });

  it('runs a challenge on a network token through verification', async () => {
    const body = authBody(networkToken(VISA_TOKEN, '3ds2-challenge-identified'));
    const auth = await (await threeDs('authenticate', body, 3)).json<Json>();
    expect(auth.outcome).toBe('challenged');
    await completeChallenge(auth.challenge.jwt, ['1234']);
    const verified = await threeDs('verification', verifyBody(body.transactionReference, auth.challenge.reference), 3);
    expect((await verified.json<Json>()).outcome).toBe('authenticated');
  });

  it("applies the entity's brand rule to the token number's brands", async () => {
    const response = await threeDs('authenticate', authBody(networkToken(AMEX_TOKEN), { entity: 'limited' }), 3);
    expect(response.status).toBe(400);
    expect((await response.json<Json>()).errorName).toBe('paymentInstrumentIsNotSupported');
  });

  it('checks the token number as a card number, with the fields of Worldpay’s v3 schema', async () => {
    const path = '$.instruction.paymentInstrument';
    const failsLuhn = VISA_TOKEN.slice(0, -1) + String((Number(VISA_TOKEN.slice(-1)) + 1) % 10);
    expect(await fieldErrors(await threeDs('authenticate', authBody(networkToken(failsLuhn)), 3))).toEqual([
      ['panFailedLuhnCheck', `${path}.tokenNumber`],
    ]);
    expect(await fieldErrors(await threeDs('authenticate', authBody(networkToken('4895-3700')), 3))).toEqual([
      ['stringFailedRegexCheck', `${path}.tokenNumber`],
    ]);
    const incomplete = { type: 'card/networkToken', cardNumber: VISA_TOKEN };
    const errors = await fieldErrors(await threeDs('authenticate', authBody(incomplete), 3));
    expect(errors).toEqual([
      ['fieldIsMissing', `${path}.tokenNumber`],
      ['fieldIsMissing', `${path}.cardExpiryDate`],
    ]);
  });

  it('never echoes the token number in a field error', async () => {
    const failsLuhn = VISA_TOKEN.slice(0, -1) + String((Number(VISA_TOKEN.slice(-1)) + 1) % 10);
    const text = await (await threeDs('authenticate', authBody(networkToken(failsLuhn)), 3)).text();
    expect(text).not.toContain(failsLuhn);
    expect(text).toContain('token number');
  });

  it('still refuses card/wallet+googlepay in v3, at its type', async () => {
    const wallet = { type: 'card/wallet+googlepay', walletToken: '{"protocolVersion":"ECv2"}' };
    expect(await fieldErrors(await threeDs('deviceDataInitialize', ddcBody(wallet), 3))).toEqual([
      ['fieldHasInvalidValue', '$.paymentInstrument.type'],
    ]);
  });
});

describe('a network token number is kept as a card number is: never in clear', () => {
  afterEach(() => vi.restoreAllMocks());

  it('keeps it out of every KV key and value and out of the log lines', async () => {
    const lines: string[] = [];
    const keep = (...args: unknown[]): void => void lines.push(args.map(String).join(' '));
    vi.spyOn(console, 'log').mockImplementation(keep);
    vi.spyOn(console, 'error').mockImplementation(keep);
    const tokenNumber = luhnComplete(`48953711${String(Date.now() % 1e6).padStart(6, '0')}`, 16);
    const instrument = networkToken(tokenNumber, '3ds2-challenge-identified');
    const ddc = ddcBody(instrument);
    expect((await threeDs('deviceDataInitialize', ddc, 3)).status).toBe(200);
    const body = authBody(instrument, { reference: ddc.transactionReference });
    const auth = await (await threeDs('authenticate', body, 3)).json<Json>();
    await completeChallenge(auth.challenge.jwt, ['1234']);
    await threeDs('verification', verifyBody(body.transactionReference, auth.challenge.reference), 3);
    for (const key of (await env.SESSIONS.list()).keys.map((k) => k.name)) {
      expect(key).not.toContain(tokenNumber);
      expect(await env.SESSIONS.get(key)).not.toContain(tokenNumber);
    }
    const log = lines.join('\n');
    expect(log).toContain('"instrument":"card/networkToken"');
    expect(log).toContain(`${tokenNumber.slice(0, 6)}******${tokenNumber.slice(-4)}`);
    expect(log).not.toContain(tokenNumber);
  });
});

describe('card/networkToken in v3 (live)', () => {
  it('sends the token number to the provider as acctNumber, and answers as for a card', async () => {
    const h = liveHarness();
    const tokenNumber = card('2100');
    const body = authBody(networkToken(tokenNumber));
    body.deviceData = { ...body.deviceData, ...BROWSER_FIELDS };
    const response = await threeDs('authenticate', body, 3, (r) => h.fetch(r));
    const answer = await response.json<Json>();
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer.outcome).toBe('authenticated');
    const prepared = h.providerAnswers.find((a) => a.op === 'preauth')!.body;
    const saw = await expectValidMessages(prepared.threeDSServerTransID as string);
    expect(saw.areq.acctNumber).toBe(tokenNumber);
  });
});
