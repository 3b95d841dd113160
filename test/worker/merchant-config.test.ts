import { describe, expect, it } from 'vitest';
import merchantsJson from '../../data/merchants.json';
import { parseMerchantConfig } from '../../src/merchants/merchant-config';

const MERCHANTS = parseMerchantConfig(merchantsJson);

describe('merchant configuration', () => {
  it('ships the local test merchants of the contract', () => {
    const test = MERCHANTS.merchant('test-merchant')!;
    expect([...test.entities.keys()]).toEqual(['default', 'nonpci', 'limited', 'nothreeds']);
    expect(test.entities.get('limited')).toMatchObject({
      brands: ['visa', 'mastercard'],
      currencies: ['GBP'],
      pciCompliant: true,
    });
    expect(test.entities.get('nonpci')).toMatchObject({ pciCompliant: false, threeDS: true });
    expect(test.entities.get('nothreeds')).toMatchObject({ threeDS: false });
    expect([...MERCHANTS.merchant('other-merchant')!.entities.keys()]).toEqual(['other']);
  });

  it('fails loudly, naming every problem, on a malformed configuration', () => {
    const broken = structuredClone(merchantsJson) as { merchants: Record<string, any>[] };
    broken.merchants[0]!.entities.default.brands = ['visa', 'vissa'];
    broken.merchants[0]!.entities.limited.currencies = ['gbp'];
    expect(() => parseMerchantConfig(broken)).toThrow(
      /entities\.default\.brands\.1: .*"vissa".*entities\.limited\.currencies\.0: .*"gbp"/,
    );
  });

  it('refuses two merchants with the same username', () => {
    const twice = structuredClone(merchantsJson) as { merchants: { username: string }[] };
    twice.merchants[1]!.username = 'test-merchant';
    expect(() => parseMerchantConfig(twice)).toThrow(/usernames must be unique/);
  });

  it('refuses an unknown field rather than ignoring a typo', () => {
    const typo = {
      merchants: [
        { username: 'x', entities: { e: { pciCompliant: true, threeDs: true, brands: 'all', currencies: 'all' } } },
      ],
    };
    expect(() => parseMerchantConfig(typo)).toThrow(/invalid/);
  });

  it('gives every 3-D Secure entity the requestor block live needs', () => {
    const live = parseMerchantConfig(merchantsJson, { live: true });
    let checked = 0;
    for (const merchant of ['test-merchant', 'other-merchant']) {
      for (const [, entity] of live.merchant(merchant)!.entities) {
        if (!entity.threeDS) continue;
        expect(entity.threeDSRequestor?.merchantName).toBeTruthy();
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('refuses, for live, a 3-D Secure entity without a requestor block, naming it', () => {
    const missing = structuredClone(merchantsJson) as { merchants: Record<string, any>[] };
    delete missing.merchants[0]!.entities.limited.threeDSRequestor;
    expect(() => parseMerchantConfig(missing)).not.toThrow();
    expect(() => parseMerchantConfig(missing, { live: true })).toThrow(
      /merchants\.test-merchant\.entities\.limited\.threeDSRequestor: needed for live 3-D Secure/,
    );
  });

  it.each([
    ['merchantName', 'x'.repeat(41), /merchantName is at most 40 characters/],
    ['mcc', '57', /mcc is 4 digits/],
    ['merchantCountryCode', '999', /merchantCountryCode is an ISO 3166-1 numeric country code/],
    ['threeDSRequestorURL', 'http://shop.example', /threeDSRequestorURL is an https URL/],
    ['acquirerBIN', { visa: '412345' }, /acquirerBIN per scheme needs a "default"/],
    ['acquirerMerchantID', { default: 'M1', vissa: 'M2' }, /acquirerMerchantID per scheme is keyed by brand names/],
  ])('refuses a requestor block whose %s is %o', (field, value, message) => {
    const broken = structuredClone(merchantsJson) as { merchants: Record<string, any>[] };
    broken.merchants[0]!.entities.default.threeDSRequestor[field] = value;
    expect(() => parseMerchantConfig(broken, { live: true })).toThrow(message);
  });
});

describe('event endpoints in the merchant configuration', () => {
  type Doc = { merchants: Record<string, any>[] };
  const withEndpoints = (endpoints: unknown): Doc => {
    const doc = structuredClone(merchantsJson) as Doc;
    doc.merchants[1]!.events = { endpoints };
    return doc;
  };

  it('gives the local merchants no endpoint (nothing is sent to a host that does not exist; the tests add theirs)', () => {
    expect(MERCHANTS.merchant('test-merchant')!.events.endpoints).toEqual([]);
    expect(MERCHANTS.merchant('other-merchant')!.events.endpoints).toEqual([]);
  });

  it('takes https endpoints, http ones to localhost or 127.0.0.1 in test, and a list of event types', () => {
    const merchants = parseMerchantConfig(
      withEndpoints([
        { url: 'https://shop.example/hooks?k=1', events: ['tokens.token.deleted', 'threeDS.authentication.completed'] },
        { url: 'http://localhost:3000/events', events: 'all' },
        { url: 'http://127.0.0.1/events', events: ['tokens.token.extended'] },
      ]),
    );
    const endpoints = merchants.merchant('other-merchant')!.events.endpoints;
    expect(endpoints.map((e) => e.url)).toEqual([
      'https://shop.example/hooks?k=1',
      'http://localhost:3000/events',
      'http://127.0.0.1/events',
    ]);
    expect(endpoints[0]!.events).toEqual(new Set(['tokens.token.deleted', 'threeDS.authentication.completed']));
  });

  it.each([
    [
      'http to another host',
      [{ url: 'http://shop.example/hooks', events: 'all' }],
      /events\.endpoints\.0\.url: an endpoint is an https URL/,
    ],
    ['not a URL', [{ url: 'hooks', events: 'all' }], /events\.endpoints\.0\.url/],
    ['credentials in the URL', [{ url: 'https://u:p@shop.example/', events: 'all' }], /events\.endpoints\.0\.url/],
    ['a fragment', [{ url: 'https://shop.example/#x', events: 'all' }], /events\.endpoints\.0\.url/],
    [
      'an unknown event type',
      [{ url: 'https://shop.example/', events: ['tokens.token.created'] }],
      /events\.endpoints\.0\.events\.0/,
    ],
    [
      'ping as a type (every endpoint gets pings)',
      [{ url: 'https://shop.example/', events: ['ping'] }],
      /events\.endpoints\.0\.events\.0/,
    ],
    ['no event type', [{ url: 'https://shop.example/', events: [] }], /at least one event type/],
    [
      'a type twice',
      [{ url: 'https://shop.example/', events: ['tokens.token.deleted', 'tokens.token.deleted'] }],
      /listed once/,
    ],
    [
      'the same URL twice',
      [
        { url: 'https://shop.example/', events: 'all' },
        { url: 'https://shop.example/', events: 'all' },
      ],
      /endpoint URLs must be unique/,
    ],
    [
      'eleven endpoints',
      Array.from({ length: 11 }, (_, i) => ({ url: `https://shop.example/${i}`, events: 'all' })),
      /at most 10 endpoints/,
    ],
    [
      'an unknown field',
      [{ url: 'https://shop.example/', events: 'all', secret: 'x' }],
      /events\.endpoints\.0\.secret/,
    ],
  ])('refuses an endpoint with %s, naming it', (_, endpoints, message) => {
    expect(() => parseMerchantConfig(withEndpoints(endpoints))).toThrow(message);
  });

  it('refuses, for live, an http endpoint even to localhost', () => {
    const local = withEndpoints([{ url: 'http://localhost:3000/events', events: 'all' }]);
    expect(() => parseMerchantConfig(local)).not.toThrow();
    expect(() => parseMerchantConfig(local, { live: true })).toThrow(
      /merchants\.other-merchant\.events\.endpoints\.0\.url: must be https in live/,
    );
    expect(() => parseMerchantConfig(merchantsJson, { live: true })).not.toThrow();
  });
});
