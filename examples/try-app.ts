// npm run try:app: an app checkout in a terminal (docs/threeds.md "The app channel"). The
// repository's test 3DS SDK (test/sdk/) plays the app's EMV 3DS SDK: it fetches a Directory
// Server's keys, makes its ephemeral key and encData, and the merchant's server (this script)
// authenticates with them; the challenge then runs between the SDK and the issuer's ACS (CReq and
// CRes over the secure channel; the "cardholder" enters a wrong code, then 1234), and the server
// calls verification. Then a frictionless app payment.
//
// BASE_URL (default http://localhost:8787) is a running Worker:
// - `npm start` (test): the test issuer is the ACS, its Directory Server is the service's
//   `GET /3ds/test/directory-server`, and the cardholder name picks the outcome;
// - `npm run start:live` (live): the service is the 3DS Requestor in front of the fake provider at
//   FAKE_URL (default http://localhost:8788), whose Directory Server (`GET /_fake/directory-server`)
//   and ACS play the scheme's and the issuer's; the card's last four digits pick the outcome.
import { THREEDS_HEADERS, call, check, run, runId, step, BASE_URL } from './lib.mjs';
import { createTransaction, type DirectoryServer } from '../test/sdk/test-sdk';

const FAKE_URL = (process.env.FAKE_URL ?? 'http://localhost:8788').replace(/\/+$/, '');
const API = '/verifications/customers/3ds';
const merchant = { entity: 'default' };
/** What this example reads of authenticate's and verification's answers. */
interface Answer {
  outcome: string;
  authentication: { version: string };
  challenge: { reference: string; payload: string; url?: string };
}

const expiry = { month: 12, year: 2035 };
/**
 * The cards of each environment. test: the cardholder name decides (README "Test cards").
 * live: the fake's grid (docs/fake-3ds-server.md), …2072 = 2.2.0, a challenge that 1234 passes;
 * …2000 = 2.2.0, Y (a middle digit makes each Luhn-valid).
 */
const CARDS = {
  test: {
    challenged: { cardNumber: '4571736000000000', cardHolderName: '3ds2-challenge-identified' },
    frictionless: { cardNumber: '4571736000000000', cardHolderName: '3ds2-frictionless-identified' },
  },
  live: {
    challenged: { cardNumber: '4571730000022072', cardHolderName: 'A Cardholder' },
    frictionless: { cardNumber: '4571730000092000', cardHolderName: 'A Cardholder' },
  },
} as const;

run('try:app', async () => {
  const id = runId();

  step('The app starts its SDK: the Directory Server publishes its encryption key and CA');
  // The test Worker publishes its test Directory Server; a live one has none (its scheme's is the fake's).
  const probe = await fetch(new URL('/3ds/test/directory-server', BASE_URL));
  await probe.body?.cancel();
  check(probe.status === 200 || probe.status === 404, `the service at ${BASE_URL} answers (got ${probe.status})`);
  const mode = probe.status === 200 ? 'test' : 'live';
  console.log(
    mode === 'test'
      ? '  a test Worker: its test issuer is the ACS'
      : `  a live Worker: the fake provider at ${FAKE_URL} plays the Directory Server and the ACS`,
  );
  const ds = (await call('GET', mode === 'test' ? '/3ds/test/directory-server' : `${FAKE_URL}/_fake/directory-server`))
    .json as DirectoryServer;
  const cards = CARDS[mode];
  check(ds.encryptionKey && ds.caCertificate.startsWith('-----BEGIN CERTIFICATE-----'), 'a key and a CA certificate');
  const sdk = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'CARD-EDGE-TRY-APP' });

  step("authenticate from the merchant's server with the SDK's data (a card the issuer challenges)");
  const order = `app-${id}-1`;
  const { json: auth } = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: order,
      merchant,
      instruction: {
        value: { amount: 1999, currency: 'GBP' },
        paymentInstrument: { type: 'card/front', ...cards.challenged, cardExpiryDate: expiry },
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
      // test: the ACS is the service itself (its acsURL's path, at BASE_URL); live: the fake's acsURL.
      const target = mode === 'test' ? new URL(new URL(request.url).pathname, BASE_URL) : new URL(request.url);
      const response = await fetch(target, {
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

  step('A frictionless app payment');
  const second = await createTransaction({ directoryServer: ds, sdkReferenceNumber: 'CARD-EDGE-TRY-APP' });
  const frictionless = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: `app-${id}-2`,
      merchant,
      instruction: {
        value: { amount: 1999, currency: 'GBP' },
        paymentInstrument: { type: 'card/front', ...cards.frictionless, cardExpiryDate: expiry },
      },
      deviceData: { channel: 'app', sdk: second.authenticationParameters() },
      challenge: {},
    },
  });
  check((frictionless.json as Answer).outcome === 'authenticated', 'authenticated');
});
