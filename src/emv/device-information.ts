import { compactDecrypt } from 'jose';

/**
 * A Directory Server's reading of an app's `sdkEncData` (EMV 3DS: the SDK encrypts its device
 * information to the DS's key, JWE with ECDH-ES): whether the key opens it, and the device
 * information's version (`DV`) when it does. The test issuer (src/app/test-app-issuer.ts) and the
 * fake provider's DS (src/fake-3ds-server/app-keys.ts) both read it so; no content beyond `DV` is
 * read, and nothing is kept.
 */

/** Imports a Directory Server's ECDH P-256 private JWK for {@link openDeviceInformation}; not extractable. */
export function importDirectoryServerKey(privateJwk: JsonWebKey): Promise<CryptoKey> {
  return crypto.subtle.importKey('jwk', privateJwk, { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
}

/** Whether `key` opens `encData`, and the device information's `DV` when it does and has one. */
export async function openDeviceInformation(
  encData: string,
  key: CryptoKey,
): Promise<{ opened: false } | { opened: true; dv?: string }> {
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(encData, key, { keyManagementAlgorithms: ['ECDH-ES'] }));
  } catch {
    return { opened: false };
  }
  try {
    const dv = (JSON.parse(new TextDecoder().decode(plaintext)) as { DV?: unknown } | null)?.DV;
    return typeof dv === 'string' ? { opened: true, dv } : { opened: true };
  } catch {
    return { opened: true };
  }
}
