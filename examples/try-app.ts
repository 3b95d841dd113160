// npm run try:app: an app checkout in `test`, in a terminal (docs/threeds.md "The app channel"). The
// repository's test 3DS SDK (test/sdk/) plays the app's EMV 3DS SDK: it fetches the test Directory
// Server's keys, makes its ephemeral key and encData, and the merchant's server (this script)
// authenticates with them; the challenge then runs between the SDK and the test issuer's ACS (CReq
// and CRes over the secure channel; the "cardholder" enters a wrong code, then 1234), and the
// server calls verification. Then a frictionless app payment. BASE_URL (default
// http://localhost:8787) is a running test Worker: `npm start`.
import { THREEDS_HEADERS, call, check, run, runId, step, BASE_URL } from './lib.mjs';
import { createTransaction, type DirectoryServer } from '../test/sdk/test-sdk';

const API = '/verifications/customers/3ds';
const merchant = { entity: 'default' };
/** What this example reads of authenticate's and verification's answers. */
interface Answer {
  outcome: string;
  authentication: { version: string };
  challenge: { reference: string; payload: string; url?: string };
}

const card = { type: 'card/front', cardNumber: '4571736000000000', cardExpiryDate: { month: 12, year: 2035 } };

run('try:app', async () => {
  const id = runId();

  step('The app starts its SDK: the test Directory Server publishes its encryption key and CA');
  const ds = (await call('GET', '/3ds/test/directory-server')).json as DirectoryServer;
  check(ds.encryptionKey && ds.caCertificate.startsWith('-----BEGIN CERTIFICATE-----'), 'a key and a CA certificate');
  const sdk = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'CARD-EDGE-TRY-APP' });

  step("authenticate from the merchant's server with the SDK's data (3ds2-challenge-identified)");
  const order = `app-${id}-1`;
  const { json: auth } = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: order,
      merchant,
      instruction: {
        value: { amount: 1999, currency: 'GBP' },
        paymentInstrument: { ...card, cardHolderName: '3ds2-challenge-identified' },
      },
      deviceData: { channel: 'app', sdk: sdk.authenticationParameters() },
      challenge: {},
    },
  });
  const answer = auth as Answer;
  check(answer.outcome === 'challenged', 'challenged');
  check(answer.challenge.payload && !answer.challenge.url, 'a payload for the SDK, no page');

  step("The SDK runs the challenge with the issuer's ACS (the cardholder types 0000, then 1234)");
  const codes = ['0000', '1234'];
  const result = await sdk.doChallenge(answer.challenge.payload, {
    messageVersion: answer.authentication.version,
    answer: (cres) => {
      const code = codes.shift() ?? '';
      console.log(`  the app shows: ${String(cres.challengeInfoText)}  → the cardholder types ${code}`);
      return Promise.resolve({ code });
    },
    // Each CReq and CRes, printed as the app sends and gets them (encrypted: only their size shows).
    fetch: async (request) => {
      const body = await request.text();
      console.log(`→ POST ${new URL(request.url).pathname.slice(0, 40)}… CReq, a JWE of ${body.length} characters`);
      const response = await fetch(new URL(new URL(request.url).pathname, BASE_URL), {
        method: 'POST',
        headers: { 'Content-Type': 'application/jose' },
        body,
      });
      console.log(`← ${response.status} ${response.headers.get('content-type')}`);
      return response;
    },
  });
  check(result.ok && result.transStatus === 'Y', `the SDK's result: ${JSON.stringify(result).slice(0, 200)}`);
  console.log('  the SDK: transStatus Y');

  step('verification from the server: the one result');
  const verified = await call('POST', `${API}/verification`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order, merchant, challenge: { reference: answer.challenge.reference } },
  });
  check((verified.json as Answer).outcome === 'authenticated', 'authenticated');

  step('A frictionless app payment (3ds2-frictionless-identified)');
  const second = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'CARD-EDGE-TRY-APP' });
  const frictionless = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: `app-${id}-2`,
      merchant,
      instruction: {
        value: { amount: 1999, currency: 'GBP' },
        paymentInstrument: { ...card, cardHolderName: '3ds2-frictionless-identified' },
      },
      deviceData: { channel: 'app', sdk: second.authenticationParameters() },
      challenge: {},
    },
  });
  check((frictionless.json as Answer).outcome === 'authenticated', 'authenticated');
});
