import { mightContainCardNumber } from '../../cards/card-number-in-text';

/**
 * The browser's language as EMV takes it (docs/threeds.md "Device data collection"): a BCP 47
 * tag of at most 35 characters (the AReq keeps at most 8 of it, areq-builder.ts). Browsers do not
 * always report one: headless Chromium started without a locale says `en-US@posix`, and a locale
 * of the operating system may leak through as `de_DE.UTF-8`. Such a value is made a tag when it
 * plainly names one, and refused otherwise, never passed on as it is.
 */

/** EMV's limit on a language tag (browserLanguage in 2.3.1; acceptLanguage entries). */
export const LANGUAGE_TAG_MAX = 35;

/**
 * The BCP 47 tag a browser's or a header's language value names, in its canonical case, or
 * undefined when it names none: `@modifier` and `.encoding` (POSIX locale parts) are dropped, `_`
 * becomes `-`, then the tag must be well-formed BCP 47 (`Intl.getCanonicalLocales`), at most 35
 * characters, and neither the POSIX locales `C` and `POSIX` nor `und` (undetermined).
 *
 * @example
 * ```ts
 * normaliseLanguageTag('en-US@posix'); // 'en-US'
 * normaliseLanguageTag('de_DE.UTF-8'); // 'de-DE'
 * normaliseLanguageTag('zh-hant-tw'); // 'zh-Hant-TW'
 * normaliseLanguageTag('C.UTF-8'); // undefined
 * normaliseLanguageTag('*'); // undefined
 * ```
 */
export function normaliseLanguageTag(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 200) return undefined;
  const tag = value
    .trim()
    .replace(/[.@].*$/s, '')
    .replace(/_/g, '-');
  if (tag === '' || /^(c|posix|und)$/i.test(tag) || !/^[A-Za-z0-9-]+$/.test(tag)) return undefined;
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined; // not well-formed BCP 47
  }
  // A private-use tag can hold anything, a card number too (`en-x-4444-3333-2222-1111`): kept, it
  // would be stored and sent on.
  if (canonical === undefined || canonical.length > LANGUAGE_TAG_MAX || mightContainCardNumber(canonical))
    return undefined;
  return canonical;
}
