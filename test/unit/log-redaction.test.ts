import { describe, expect, it } from 'vitest';
import { maskPan } from '../../src/mask';
import { FailureError } from '../../src/failures';
import { describeError, errorLogFields, redactPans } from '../../src/log';
import { StorageError } from '../../src/storage/storage-error';

describe('card numbers in log text (pure)', () => {
  it.each([
    ['/tokens/4444333322221111', '/tokens/444433******1111'],
    ['card 4444 3333 2222 1111 declined', 'card 444433******1111 declined'],
    ['4444-3333-2222-1111', '444433******1111'],
    // Other white space, raw or as JSON escapes it: no-break and thin spaces, form feed, vertical tab.
    ['4444\u00a03333\u00a02222\u00a01111', '444433******1111'],
    ['4444\u20093333\u20092222\u20091111', '444433******1111'],
    ['"4444\\f3333\\u000b2222\\b1111"', '"444433******1111"'],
    ['a 19-digit 6011000990139424000', 'a 19-digit 601100*********4000'],
    ['short 123456789012 too', `short ${maskPan('123456789012')} too`],
    ['4444  3333  2222  1111', '444433******1111'],
    ['4444_3333_2222_1111', '444433******1111'],
    ['/tokens/4444.3333.2222.1111', '/tokens/444433******1111'],
    ['"4444\\t3333\\n2222\\t1111"', '"444433******1111"'],
  ])('masks %j', (text, masked) => {
    expect(redactPans(text)).toBe(masked);
  });

  it('leaves runs of fewer than 12 digits alone', () => {
    expect(redactPans('order 12345678901 of 2026-11-24')).toBe('order 12345678901 of 2026-11-24');
  });

  it('masks what an exception says, and names only the failing call for a storage failure', () => {
    expect(describeError(new Error('bad card 4444333322221111'))).toBe('Error: bad card 444433******1111');
    expect(
      errorLogFields(new StorageError('KV get token failed', { cause: new Error('network 4444333322221111') })),
    ).toEqual({ storage: 'KV get token failed', cause: 'Error: network 444433******1111' });
    expect(errorLogFields(new FailureError({ kind: 'misconfigured', what: 'JWT_SIGNING_KEY is not set' }))).toEqual({
      misconfigured: 'JWT_SIGNING_KEY is not set',
    });
    // A failure the client caused: its error name says it all.
    expect(errorLogFields(new FailureError({ kind: 'bodyEmpty' }))).toEqual({});
    expect(errorLogFields(new TypeError('x is undefined'))).toEqual({ exception: 'TypeError: x is undefined' });
  });
});
