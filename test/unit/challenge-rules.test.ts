import { describe, expect, it } from 'vitest';
import { fromBase64, textOfBase64, utf8 } from '../../src/bytes';
import { challengeStep, MAX_CODE_ATTEMPTS } from '../../src/threeds/challenge-rules';
import { challengePayload, judgeCode, newChallengeReference, windowSizeOfPayload } from '../../src/threeds/challenge';
import { derivedAuthenticationValue, derivedUuid } from '../../src/threeds/hmac-derived-values';

const KEY = utf8('k'.repeat(32));

describe('challenge rules (pure)', () => {
  it('passes the right code, fails Cancel, and fails the third wrong code', () => {
    expect(challengeStep('right', 2)).toEqual({ kind: 'passed' });
    expect(challengeStep('cancel', 0)).toEqual({ kind: 'failed', reason: 'cancelled' });
    expect(challengeStep('wrong', 0)).toEqual({ kind: 'retry', attempts: 1 });
    expect(challengeStep('wrong', MAX_CODE_ATTEMPTS - 1)).toEqual({ kind: 'failed', reason: 'attempts' });
  });

  it('judges a code with surrounding spaces forgiven and nothing else', () => {
    expect(judgeCode('submit', ' 1234 ', '1234')).toBe('right');
    expect(judgeCode('submit', '12 34', '1234')).toBe('wrong');
    expect(judgeCode('cancel', '1234', '1234')).toBe('cancel');
  });

  it('draws 20-alphanumeric references, and derives the same payload from the same reference', async () => {
    const a = newChallengeReference();
    expect(a).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(newChallengeReference()).not.toBe(a);
    const payload = await challengePayload(KEY, a, '2.2.0', '500x600');
    expect(await challengePayload(KEY, a, '2.2.0', '500x600')).toBe(payload);
    expect(JSON.parse(textOfBase64(payload))).toMatchObject({
      messageType: 'CReq',
      messageVersion: '2.2.0',
      challengeWindowSize: '03',
    });
    expect(windowSizeOfPayload(payload)).toBe('500x600');
    expect(windowSizeOfPayload('not base64 json')).toBe('390x400');
  });
});

describe('derived values (pure)', () => {
  it('gives UUID v4 shapes and 28-character CAVVs, stable per seed', async () => {
    const uuid = await derivedUuid(KEY, 'seed');
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await derivedUuid(KEY, 'seed')).toBe(uuid);
    expect(await derivedUuid(KEY, 'seed2')).not.toBe(uuid);
    const cavv = await derivedAuthenticationValue(KEY, 'seed');
    expect(cavv).toHaveLength(28);
    expect(fromBase64(cavv)).toHaveLength(20);
  });
});
