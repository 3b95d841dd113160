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
});
