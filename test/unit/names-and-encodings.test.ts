import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64, toBase64Url, toHex } from '../../src/bytes';
import { maskPan, visibleLeadingDigits } from '../../src/mask';
import { threeDsTransactionName } from '../../src/threeds/transaction-api';
import { tokenGroupName } from '../../src/tokens/token-group-api';
import { sessionKey } from '../../src/threeds/session-record';
import { newTokenId, parseReference, tokenReference } from '../../src/tokens/token-ids';
import { tokenKey } from '../../src/tokens/token-record';

describe('key and object names (pure)', () => {
  const scope = { username: 'test-merchant', entity: 'default entity', transactionReference: 'a:b:c' };

  it('scopes the session key and the guard name by merchant, entity and reference', () => {
    expect(sessionKey(scope)).toBe('3ds:session:test-merchant:default entity:a:b:c');
    expect(threeDsTransactionName(scope)).toBe('test-merchant:default entity:a:b:c');
    expect(threeDsTransactionName({ ...scope, username: 'other-merchant' })).not.toBe(threeDsTransactionName(scope));
  });

  it('names tokens by id and token objects by merchant and card hash or namespace, never by card number', () => {
    expect(tokenKey('abc')).toBe('token:abc');
    expect(tokenGroupName('m', { fingerprint: 'x1y2' })).toBe('card:m:x1y2');
    expect(tokenGroupName('m', { namespace: 'x1y2' })).toBe('namespace:m:x1y2');
  });

  it("makes token ids of Worldpay's alphabet, and references that name the token's object, then the token", () => {
    const objectId = 'a'.repeat(32) + '0123456789abcdef'.repeat(2);
    const ids = new Set(Array.from({ length: 200 }, () => newTokenId()));
    expect(ids.size).toBe(200);
    for (const tokenId of ids) {
      expect(tokenId).toMatch(/^[0-9A-HJ-NP-Z]{21}$/);
      const reference = tokenReference(objectId, tokenId);
      expect(reference).toBe(objectId + tokenId);
      expect(parseReference(reference)).toEqual({ ownerId: objectId, tokenId });
    }
    const reference = tokenReference(objectId, [...ids][0]!);
    // References of another shape name nothing: capitals in the object id, a short token id, an O.
    expect(parseReference(reference.toUpperCase())).toBeUndefined();
    expect(parseReference(reference.slice(0, -1))).toBeUndefined();
    expect(parseReference(`${objectId}${'O'.repeat(21)}`)).toBeUndefined();
    expect(parseReference([...ids][0]!)).toBeUndefined();
    expect(() => tokenReference('not an id', [...ids][0]!)).toThrow();
  });
});

describe('byte helpers (pure)', () => {
  it('round-trips base64 and writes hex and base64url', () => {
    const bytes = new Uint8Array([0, 1, 250, 251, 255]);
    expect(fromBase64(toBase64(bytes))).toEqual(bytes);
    expect(toHex(bytes)).toBe('0001fafbff');
    expect(toBase64Url(bytes)).toBe('AAH6-_8');
  });
});

describe('masking card numbers (pure)', () => {
  it('shows the first 6 and last 4 of a 15 to 19 digit number', () => {
    expect(maskPan('4444333322221111')).toBe('444433******1111');
    expect(maskPan('341142000000002')).toBe('341142*****0002');
  });

  it('hides at least 5 digits of a short number, so the Luhn digit cannot give it back', () => {
    expect(maskPan('45713684004')).toBe('45*****4004');
    expect(maskPan('4571368400')).toBe('4*****8400');
    expect(maskPan('457136840')).toBe('*********');
    for (let length = 10; length <= 19; length++) {
      const masked = maskPan('4'.repeat(length));
      expect(masked.length - masked.replace(/\*/g, '').length).toBeGreaterThanOrEqual(5);
      expect(visibleLeadingDigits(length)).toBeLessThanOrEqual(6);
    }
  });
});
