import pki from '../../data/test-pki.json';
import { importAcsSigningKey, type AcsSigningIdentity } from '../emv/acs-signed-content';
import { importDirectoryServerKey, openDeviceInformation } from '../emv/device-information';
import type { AppIssuer } from '../threeds/app-issuer';

/**
 * The test issuer's app-channel keys, from the test PKI (data/test-pki.json, made by
 * scripts/make-test-pki.ts; its private keys are public on purpose). Only src/index.ts, the
 * `test` Worker, imports this module: `npm run check:bundle` checks that the live bundle has no
 * trace of the test PKI.
 */
export function testAppIssuer(): AppIssuer {
  let identity: Promise<AcsSigningIdentity> | undefined;
  let dsKey: Promise<CryptoKey> | undefined;
  const x5c = pki.x5c as [string, string];
  return {
    identity: () => (identity ??= importAcsSigningKey(pki.acs.privateJwk).then((privateKey) => ({ privateKey, x5c }))),
    async opensEncData(encData) {
      dsKey ??= importDirectoryServerKey(pki.directoryServer.encryptionKey.privateJwk);
      return (await openDeviceInformation(encData, await dsKey)).opened;
    },
    published: {
      encryptionKey: pki.directoryServer.encryptionKey.publicJwk,
      caCertificate: pki.directoryServer.caCertificate,
    },
  };
}
