import { describe, expect, it } from 'vitest';
import { embeddedServices } from '../../src/app/embedded-services';

const BIN_INDEX = embeddedServices({ live: false }).binIndex;
import { burst, call, CARD_BIN_HEADERS, expectErrorCase, luhnComplete, panLookup, type ErrorCase } from './helpers';

/**
 * POST /api/cardBin/binLookup: the lookup by BIN prefix for a checkout page, with Basic
 * credentials or a publishable key from a listed origin (CORS). Answers are checked against the
 * embedded data (data/binlist/ranges.csv, data/overrides.csv) and the scheme table.
 */

const PATH = '/api/cardBin/binLookup';
const KEY = 'pk_test_merchant_local_demo';
const ORIGIN = 'http://localhost:8787';

function lookup(body: unknown, headers: Record<string, string | undefined> = {}, address?: string): Promise<Response> {
  return call(PATH, {
    body,
    headers: { ...CARD_BIN_HEADERS, ...(address ? { 'CF-Connecting-IP': address } : {}), ...headers },
  });
}

/** From a page: the publishable key and the page's origin, from a client address of its own. */
function fromPage(
  body: unknown,
  headers: Record<string, string | undefined> = {},
  address = newAddress(),
): Promise<Response> {
  return lookup(body, { Authorization: `Bearer ${KEY}`, Origin: ORIGIN, ...headers }, address);
}

function newAddress(): string {
  return `198.51.100.${Math.floor(Math.random() * 250)}-${crypto.randomUUID().slice(0, 8)}`;
}

const DEFAULT = { merchant: { entity: 'default' } };

describe('binLookup answers', () => {
  it('answers a 6-digit BIN of one data row as panLookup answers a card in it', async () => {
    const byPrefix = await lookup({ ...DEFAULT, bin: '341142' });
    const byCard = await panLookup({ ...DEFAULT, cardNumber: luhnComplete('341142', 15) });
    expect(byPrefix.status).toBe(200);
    expect(await byPrefix.json()).toEqual(await byCard.json());
  });

  it('answers an 8-digit prefix with its 8-digit row (an override here)', async () => {
    const response = await lookup({ ...DEFAULT, bin: '45711601' });
    expect(await response.json()).toEqual({
      type: 'pan',
      brand: ['visa', 'dankort'],
      bin: '45711601',
      binLength: 8,
      fundingType: 'debit',
      issuerName: 'Grønlandsbanken A/S',
      countryCode: 'GL',
      currency: 'DKK',
      dccAllowed: true,
      anonymousPrepaid: 'notPrepaidOrNonAnonymous',
    });
  });

  it('never answers more than the digits prove: fields the rows under the prefix disagree on are left out', async () => {
    // 457116 holds 8-digit rows of several Danish banks (and Greenland's); the rest of it only
    // the scheme table (Visa/Dankort) knows.
    const response = await lookup({ ...DEFAULT, bin: '457116' });
    expect(await response.json()).toEqual({ type: 'pan', brand: ['visa', 'dankort'], bin: '457116', binLength: 6 });
    // A 7-digit prefix is cut to the shortest BIN length of the rows that answer under it.
    const seven = await lookup({ ...DEFAULT, bin: '4571162' });
    expect(await seven.json()).toMatchObject({ bin: '457116', binLength: 6 });
  });

  it('lists only the brands every part of the prefix shares', async () => {
    // Discover's 65, except Cabal's 8-digit 65008700.
    const shared = await (await lookup({ ...DEFAULT, bin: '650087' })).json<Record<string, unknown>>();
    expect(shared).not.toHaveProperty('brand');
    expect(shared).toMatchObject({ bin: '650087', binLength: 6 });
    expect(await (await lookup({ ...DEFAULT, bin: '65008700' })).json()).toMatchObject({ brand: ['cabal'] });
    expect(await (await lookup({ ...DEFAULT, bin: '65008701' })).json()).toMatchObject({ brand: ['discover'] });
  });

  it('answers from the scheme table where no row knows the prefix (JCB legacy range)', async () => {
    const response = await lookup({ ...DEFAULT, bin: '308812' });
    expect(await response.json()).toEqual({
      type: 'pan',
      brand: ['jcb'],
      bin: '308812',
      binLength: 6,
      fundingType: 'unknown',
      countryCode: 'unknown',
      dccAllowed: false,
      anonymousPrepaid: 'unknown',
    });
  });

  it('agrees with the index for every 6-digit BIN that has data (each answer field is one all cards share)', async () => {
    const prefixes = [...new Set([...BIN_INDEX.segments('data')].map((s) => String(s.start).slice(0, 6)))].slice(0, 40);
    for (const bin of prefixes) {
      const answer = await (await lookup({ ...DEFAULT, bin })).json<Record<string, unknown>>();
      // Every card under the prefix, at a few keys: each field answered must be the card's.
      for (const suffix of ['00', '37', '99']) {
        const card = await (
          await panLookup({ ...DEFAULT, cardNumber: luhnComplete(bin + suffix, 16) })
        ).json<Record<string, unknown>>();
        for (const [field, value] of Object.entries(answer)) {
          if (field === 'bin' || field === 'binLength') continue;
          if (field === 'brand') {
            for (const b of value as string[]) expect(card.brand, `${bin}${suffix}`).toContain(b);
          } else expect(card[field], `${bin}${suffix} ${field}`).toEqual(value);
        }
      }
    }
  });

  it('answers 404 binNotFound where neither data nor a scheme knows the prefix', async () => {
    const response = await lookup({ ...DEFAULT, bin: '700000' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ errorName: 'binNotFound' });
  });

  it('is open to an entity that is not PCI compliant, unlike panLookup', async () => {
    const nonpci = { merchant: { entity: 'nonpci' } };
    expect((await lookup({ ...nonpci, bin: '341142' })).status).toBe(200);
    expect((await panLookup({ ...nonpci, cardNumber: luhnComplete('341142', 15) })).status).toBe(400);
  });

  it('refuses a brand the entity does not accept, as panLookup does', async () => {
    const response = await lookup({ merchant: { entity: 'limited' }, bin: '341142' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errorName: 'paymentInstrumentIsNotSupported' });
  });

  it('names the BIN data version in every card BIN answer, errors included', async () => {
    const version = BIN_INDEX.dataVersion!;
    expect(version).toMatch(/^overrides@[0-9a-f]{12},binlist@[0-9a-f]{12};built=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const answers = [
      await lookup({ ...DEFAULT, bin: '341142' }),
      await lookup({ ...DEFAULT, bin: '700000' }),
      await panLookup({ ...DEFAULT, cardNumber: luhnComplete('341142', 15) }),
      await panLookup({ ...DEFAULT, cardNumber: '1' }),
    ];
    for (const response of answers) expect(response.headers.get('Bin-Data-Version')).toBe(version);
  });

  it('gives 20 identical lookups at once the same answer', async () => {
    const answers = await burst(20, () => fromPage({ ...DEFAULT, bin: '457116' }).then((r) => r.text()));
    expect(new Set(answers).size).toBe(1);
  });
});

describe('binLookup errors', () => {
  const cases: ErrorCase[] = [
    {
      name: 'no bin',
      send: () => lookup(DEFAULT),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['fieldIsMissing', '$.bin']],
    },
    {
      name: 'a number, not a string',
      send: () => lookup({ ...DEFAULT, bin: 411111 }),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['fieldMustBeString', '$.bin']],
    },
    {
      name: 'five digits',
      send: () => lookup({ ...DEFAULT, bin: '41111' }),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['stringIsTooShort', '$.bin']],
    },
    {
      name: 'a whole card number',
      send: () => lookup({ ...DEFAULT, bin: '4444333322221111' }),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['stringIsTooLong', '$.bin']],
    },
    {
      name: 'not digits',
      send: () => lookup({ ...DEFAULT, bin: '4111a1' }),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['stringFailedRegexCheck', '$.bin']],
    },
    {
      name: 'empty',
      send: () => lookup({ ...DEFAULT, bin: '' }),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['fieldIsEmpty', '$.bin']],
    },
    {
      name: 'no entity',
      send: () => lookup({ bin: '411111' }),
      status: 400,
      errorName: 'bodyDoesNotMatchSchema',
      fields: [['fieldIsMissing', '$.merchant']],
    },
    {
      name: "another merchant's entity",
      send: () => lookup({ merchant: { entity: 'other' }, bin: '411111' }),
      status: 400,
      errorName: 'entityIsNotConfigured',
    },
    {
      name: 'no WP-Api-Version',
      send: () => lookup({ ...DEFAULT, bin: '411111' }, { 'WP-Api-Version': undefined }),
      status: 400,
      errorName: 'headerIsMissing',
      headerName: 'WP-Api-Version',
    },
    {
      name: 'no credentials',
      send: () => lookup({ ...DEFAULT, bin: '411111' }, { Authorization: undefined }),
      status: 401,
      errorName: 'headerIsMissing',
      headerName: 'Authorization',
    },
  ];
  it.each(cases)('$name → $status $errorName', (c) => expectErrorCase(c, 'application/json'));

  it('never echoes a card number sent as a prefix', async () => {
    const response = await lookup({ ...DEFAULT, bin: '4444333322221111' });
    expect(await response.text()).not.toContain('4444333322221111');
  });
});

describe('publishable keys and CORS', () => {
  it('answer a page of a listed origin, with CORS headers it can read', async () => {
    const response = await fromPage({ ...DEFAULT, bin: '341142' });
    expect(response.status).toBe(200);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe(ORIGIN);
    expect(response.headers.get('Access-Control-Expose-Headers')).toContain('Bin-Data-Version');
    expect(response.headers.get('Vary')).toBe('Origin');
    expect(await response.json()).toMatchObject({ brand: ['amex'], issuerName: 'AMERICAN EXPRESS' });
  });

  it('let the page read its errors too', async () => {
    const response = await fromPage({ ...DEFAULT, bin: '41' });
    expect(response.status).toBe(400);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe(ORIGIN);
  });

  it('refuse an origin the key does not list, and a request without one', async () => {
    for (const origin of ['https://evil.example', undefined]) {
      const response = await fromPage({ ...DEFAULT, bin: '341142' }, { Origin: origin });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ errorName: 'originIsNotAllowed' });
      expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
    }
  });

  it('take "http://localhost:*" as any port of the local machine, nothing more', async () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:41234']) {
      const response = await fromPage({ ...DEFAULT, bin: '341142' }, { Origin: origin });
      expect(response.status, origin).toBe(200);
      expect(response.headers.get('Access-Control-Allow-Origin')).toBe(origin);
    }
    for (const origin of ['https://localhost:8787', 'http://localhost.evil.example:8787', 'http://localhost']) {
      expect((await fromPage({ ...DEFAULT, bin: '341142' }, { Origin: origin })).status, origin).toBe(403);
    }
  });

  it('refuse an unknown key with 401 accessDenied', async () => {
    const response = await fromPage(
      { ...DEFAULT, bin: '341142' },
      { Authorization: 'Bearer pk_not_a_key_of_anyone_here' },
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ errorName: 'accessDenied' });
  });

  it('authenticate nothing but binLookup', async () => {
    const bearer = { Authorization: `Bearer ${KEY}`, Origin: ORIGIN };
    const pan = await panLookup({ ...DEFAULT, cardNumber: luhnComplete('341142', 15) }, bearer);
    expect(pan.status).toBe(401);
    expect(await pan.json()).toMatchObject({
      errorName: 'accessDenied',
      message: expect.stringContaining('binLookup'),
    });
    const token = await call('/tokens/abc', {
      method: 'GET',
      headers: { ...bearer, Accept: 'application/vnd.worldpay.tokens-v1.hal+json' },
    });
    expect(token.status).toBe(401);
  });

  it('answer a preflight from a listed origin, and refuse one from elsewhere', async () => {
    const ok = await call(PATH, {
      method: 'OPTIONS',
      headers: {
        Origin: ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,wp-api-version',
      },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('Access-Control-Allow-Origin')).toBe(ORIGIN);
    expect(ok.headers.get('Access-Control-Allow-Methods')).toBe('POST');
    expect(ok.headers.get('Access-Control-Allow-Headers')).toBe(
      'Authorization, Content-Type, WP-Api-Version, WP-CorrelationId',
    );
    expect(ok.headers.get('Access-Control-Max-Age')).toBe('600');
    const refused = await call(PATH, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('Access-Control-Allow-Origin')).toBeNull();
    expect(await refused.json()).toMatchObject({ errorName: 'originIsNotAllowed' });
  });

  it('limit lookups per key and client address (429 with Retry-After), not other addresses', async () => {
    const address = newAddress();
    // The tests run with a limit of 5 a minute (vitest.config.ts); wrangler.toml's is 120.
    const answers = await burst(8, () => fromPage({ ...DEFAULT, bin: '341142' }, {}, address));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(5);
    const limited = answers.find((r) => r.status === 429)!;
    expect(limited.headers.get('Retry-After')).toBe('60');
    expect(limited.headers.get('Access-Control-Allow-Origin')).toBe(ORIGIN);
    expect(await limited.json()).toMatchObject({
      errorName: 'tooManyRequests',
      message: expect.stringContaining('lookups'),
    });
    expect((await fromPage({ ...DEFAULT, bin: '341142' }, {}, newAddress())).status).toBe(200);
  });
});
