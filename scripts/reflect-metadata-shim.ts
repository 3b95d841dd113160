/**
 * The Reflect metadata functions that @peculiar/x509's dependency tsyringe checks for when it
 * loads (it throws without a "reflect polyfill"). @peculiar/x509 registers its algorithm classes
 * with `@injectable()` and constructors that take nothing, so no metadata is ever read back: these
 * stand-ins answer "none", which is what a full polyfill (reflect-metadata, not a dependency here)
 * would answer too. Imported before @peculiar/x509, by scripts/make-test-pki.ts only.
 */
const reflect = Reflect as unknown as Record<string, unknown>;
reflect.getMetadata ??= () => undefined;
reflect.getOwnMetadata ??= () => undefined;
reflect.defineMetadata ??= () => undefined;
reflect.hasMetadata ??= () => false;
reflect.metadata ??= () => () => undefined;
