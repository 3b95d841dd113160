import { describe, expect, it } from 'vitest';
import { parseMerchantConfig } from '../../src/merchants/merchant-config';
import { isConfigurableOrigin, originListed } from '../../src/merchants/origins';

describe('origins of publishable keys (pure)', () => {
  it.each([
    ['https://shop.example', true],
    ['http://localhost:8787', true],
    ['http://localhost:*', true],
    ['http://127.0.0.1:*', true],
    ['https://shop.example/', false],
    ['https://shop.example/checkout', false],
    ['https://*.example', false],
    ['https://shop.example:*', false],
    ['ftp://shop.example', false],
    ['shop.example', false],
  ])('takes %j in the configuration: %s', (origin, valid) => {
    expect(isConfigurableOrigin(origin)).toBe(valid);
  });

  it('matches an Origin exactly, or any port of a listed local any-port origin', () => {
    const listed = new Set(['https://shop.example', 'http://localhost:*']);
    expect(originListed(listed, 'https://shop.example')).toBe(true);
    expect(originListed(listed, 'http://localhost:3000')).toBe(true);
    expect(originListed(listed, 'http://localhost')).toBe(false);
    expect(originListed(listed, 'http://127.0.0.1:3000')).toBe(false);
    expect(originListed(listed, 'https://shop.example:443')).toBe(false);
    expect(originListed(listed, 'https://evil.shop.example')).toBe(false);
  });

  it('answers CORS for an origin some key lists, and says whose key it is', () => {
    const merchants = parseMerchantConfig({
      merchants: [
        {
          username: 'm',
          entities: { e: { pciCompliant: true, threeDS: true, brands: 'all', currencies: 'all' } },
          publishableKeys: [{ key: 'pk_abcdefghijklmnop', origins: ['https://shop.example'] }],
        },
      ],
    });
    expect(merchants.isPublishableOrigin('https://shop.example')).toBe(true);
    expect(merchants.isPublishableOrigin('https://other.example')).toBe(false);
    expect(merchants.publishableKey('pk_abcdefghijklmnop')?.merchant.username).toBe('m');
    expect(merchants.publishableKey('pk_unknown_key_0000')).toBeUndefined();
  });
});
