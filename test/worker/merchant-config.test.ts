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
  it('are refused: a merchant makes its endpoints through the API (one way to configure)', () => {
    const doc = structuredClone(merchantsJson) as { merchants: Record<string, any>[] };
    doc.merchants[1]!.events = { endpoints: [{ url: 'https://shop.example/hooks', events: 'all' }] };
    expect(() => parseMerchantConfig(doc)).toThrow(/events: event endpoints are made through the API now/);
  });
});
