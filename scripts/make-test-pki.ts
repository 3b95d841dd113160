/**
 * The test PKI of the EMV app channel (CONTRACT.md §12), made once and committed as
 * data/test-pki.json:
 *
 *   npx tsx scripts/make-test-pki.ts [--force]
 *
 * and, with `--fake`, the fake 3DS Server provider's own (data/fake-pki.json: its Directory
 * Server and ACS, under another CA, as a scheme's would be):
 *
 * - the test Directory Server CA: self-signed, EC P-256, ECDSA with SHA-256;
 * - the test ACS certificate, issued by that CA, whose key signs `acsSignedContent` (its `x5c` is
 *   [ACS certificate, CA certificate]);
 * - the test Directory Server's encryption key, EC P-256, to which an SDK encrypts `encData`
 *   (ECDH-ES).
 *
 * TEST ONLY. The private keys are in the file because the `test` issuer needs them (it signs as
 * the ACS and opens `encData` as the Directory Server), and the service publishes the CA
 * certificate and the encryption key in `test`. Anyone can read them: they authenticate nothing,
 * and must never be used in `live`. The CA's private key is not kept (nothing else is to be
 * issued under it; to change anything, make a new PKI with --force and commit it).
 *
 * Valid from 2026-01-01 to 2046-01-01, so that no test depends on today's date (the SDK's own
 * check of validity is tested with an injected time).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FAKE_PROVIDER, makeTestPki, NOT_AFTER, NOT_BEFORE, TEST_ISSUER } from './test-pki';

const { values } = parseArgs({
  options: { force: { type: 'boolean', default: false }, fake: { type: 'boolean', default: false } },
});
const OUTPUT = new URL(values.fake ? '../data/fake-pki.json' : '../data/test-pki.json', import.meta.url);
if (existsSync(OUTPUT) && !values.force) {
  console.error(`${OUTPUT.pathname} exists: the test PKI is made once (--force makes a new one)`);
  process.exit(1);
}
const owner = values.fake ? FAKE_PROVIDER : TEST_ISSUER;
writeFileSync(
  OUTPUT,
  `${JSON.stringify(await makeTestPki({ notBefore: NOT_BEFORE, notAfter: NOT_AFTER }, owner), null, 2)}\n`,
);
console.log(`[make-test-pki] wrote ${OUTPUT.pathname}`);
