import { describe, expect, it } from 'vitest';
import { headerFacts, scriptFacts } from '../../src/threeds/steps/live-pages';
import { LANGUAGE_TAG_MAX, normaliseLanguageTag } from '../../src/threeds/live/language-tags';

/**
 * The browser's language as EMV takes it (src/threeds/live/language-tags.ts): what browsers and
 * operating systems report is made a BCP 47 tag where it plainly names one, and refused otherwise.
 */

describe('normaliseLanguageTag', () => {
  it.each([
    // what a browser started without a locale, or an operating system's locale, reports
    ['en-US@posix', 'en-US'],
    ['en_US', 'en-US'],
    ['de_DE.UTF-8', 'de-DE'],
    ['de_DE.UTF-8@euro', 'de-DE'],
    ['sr_RS@latin', 'sr-RS'],
    ['fr.ISO8859-1', 'fr'],
    // plain tags, in their canonical case
    ['en', 'en'],
    ['da-DK', 'da-DK'],
    ['EN-us', 'en-US'],
    ['zh-hant-tw', 'zh-Hant-TW'],
    ['es-419', 'es-419'],
    ['en-GB-oxendict', 'en-GB-oxendict'],
    ['  pt-BR  ', 'pt-BR'],
  ])('%j → %j', (given, tag) => {
    expect(normaliseLanguageTag(given)).toBe(tag);
  });

  it.each([
    ['the POSIX locale', 'C'],
    ['the POSIX locale with an encoding', 'C.UTF-8'],
    ['POSIX', 'POSIX'],
    ['undetermined', 'und'],
    ['a wildcard', '*'],
    ['empty', ''],
    ['only a modifier', '@posix'],
    ['a space inside', 'en US'],
    ['markup', '<script>'],
    ['an empty subtag', 'en--US'],
    ['a subtag of 9 letters', 'abcdefghi'],
    ['a subtag of 1 letter', 'e-US'],
    ['more than 35 characters', `en-${'abcdefgh-'.repeat(4)}x`],
    ['not a string', 42],
    ['nothing', undefined],
    ['a card number in a private-use subtag', 'en-x-4444-3333-2222-1111'],
  ])('refuses %s (%j)', (_, given) => {
    expect(normaliseLanguageTag(given)).toBeUndefined();
  });

  it('keeps every tag it answers within EMV’s 35 characters', () => {
    const long = 'en-US-u-ca-gregory-hc-h23-nu-latn';
    expect(long.length).toBeLessThanOrEqual(LANGUAGE_TAG_MAX);
    expect(normaliseLanguageTag(long)).toBe(long);
    expect(normaliseLanguageTag(`${long}-co-phonebk`)).toBeUndefined();
  });
});

describe('the DDC page’s facts take the normalised tag', () => {
  it('from navigator.language', () => {
    expect(scriptFacts({ language: 'en-US@posix' })).toEqual({ language: 'en-US' });
    expect(scriptFacts({ language: 'de_AT' })).toEqual({ language: 'de-AT' });
    expect(scriptFacts({ language: 'C' })).toEqual({});
  });

  it('from Accept-Language, each tag once, by preference', () => {
    const facts = headerFacts(new Headers({ 'Accept-Language': 'en_GB;q=0.8, C, en-US@posix, en-us;q=0.5, fr' }));
    expect(facts).toEqual({ acceptLanguage: ['en-US', 'fr', 'en-GB'] });
  });
});
