/**
 * Prints the stored form of a merchant password for the MERCHANT_PASSWORD_HASHES secret:
 *
 *   npm run hash-password -- <password>            → pbkdf2-sha256:100000:<salt>:<hash>
 *   npm run hash-password -- --json user=pass ...  → the whole JSON object for the secret
 *
 * Then: `wrangler secret put MERCHANT_PASSWORD_HASHES` and paste the JSON.
 */
import { hashPassword } from '../src/credentials/password-hash';

const args = process.argv.slice(2);
if (args.length === 0) {
  console.error('usage: npm run hash-password -- <password> | --json user=password ...');
  process.exit(2);
}
if (args[0] === '--json') {
  const entries = await Promise.all(
    args.slice(1).map(async (pair) => {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`expected user=password, got ${pair.slice(0, 20)}`);
      return [pair.slice(0, eq), await hashPassword(pair.slice(eq + 1))] as const;
    }),
  );
  console.log(JSON.stringify(Object.fromEntries(entries)));
} else {
  console.log(await hashPassword(args[0]!));
}
