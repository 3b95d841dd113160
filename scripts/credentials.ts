/**
 * Merchant credentials for the MERCHANT_PASSWORD_HASHES secret.
 *
 *   npm run credentials -- new <username>             issue a password (192 random bits): printed
 *                                                     once, with the entry to store
 *   npm run credentials -- hash <username> <password> the entry for a known password (the public
 *                                                     local test merchants)
 *   npm run credentials -- pbkdf2 <password>          the slow-path entry for a password a person
 *                                                     chose (PBKDF2-SHA256, 100,000 iterations)
 *
 * The issued entries are HMAC-SHA256 under MERCHANT_CREDENTIAL_KEY, taken from --key, else the
 * environment, else `.dev.vars` / `.dev.vars.example` (the local key). Use the deployed key for
 * deployed credentials: `--key "$(cat credential-key)"`.
 *
 * To rotate, store the new entry beside the old one, `{"<username>": ["<old>", "<new>"]}`, let
 * the merchant switch, then remove the old one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv, parseArgs } from 'node:util';
import { utf8 } from '../src/bytes';
import { importCredentialKey, issuedEntry, newPassword } from '../src/credentials/credentials';
import { hashPassword } from '../src/credentials/password-hash';

const USAGE = `usage:
  npm run credentials -- new <username> [--key <MERCHANT_CREDENTIAL_KEY>]
  npm run credentials -- hash <username> <password> [--key <MERCHANT_CREDENTIAL_KEY>]
  npm run credentials -- pbkdf2 <password>`;

function credentialKey(given: string | undefined): string {
  if (given) return given;
  if (process.env.MERCHANT_CREDENTIAL_KEY) return process.env.MERCHANT_CREDENTIAL_KEY;
  for (const file of ['.dev.vars', '.dev.vars.example']) {
    if (!existsSync(file)) continue;
    const key = parseEnv(readFileSync(file, 'utf8')).MERCHANT_CREDENTIAL_KEY;
    if (key) {
      console.error(`(using MERCHANT_CREDENTIAL_KEY from ${file}: right for local development only)`);
      return key;
    }
  }
  throw new Error('MERCHANT_CREDENTIAL_KEY: pass --key or set it in the environment');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { key: { type: 'string' } }, allowPositionals: true });
  const [command, ...rest] = positionals;
  if (command === 'pbkdf2' && rest.length === 1) {
    console.log(await hashPassword(rest[0]!));
    return;
  }
  if ((command === 'new' && rest.length === 1) || (command === 'hash' && rest.length === 2)) {
    const username = rest[0]!;
    if (username.includes(':')) throw new Error('a username cannot contain ":"');
    const raw = utf8(credentialKey(values.key));
    if (raw.byteLength < 32) throw new Error('MERCHANT_CREDENTIAL_KEY must be at least 32 bytes');
    const password = command === 'new' ? newPassword() : rest[1]!;
    const entry = await issuedEntry(await importCredentialKey(raw), username, password);
    if (command === 'new') {
      console.log(
        `password for ${username} (shown once; give it to the merchant over a secure channel):\n  ${password}`,
      );
    }
    console.log(`entry for MERCHANT_PASSWORD_HASHES:\n  ${JSON.stringify({ [username]: entry })}`);
    return;
  }
  console.error(USAGE);
  process.exitCode = 2;
}

main().catch((e: unknown) => {
  console.error(`credentials: ${(e as Error).message}`);
  process.exit(1);
});
