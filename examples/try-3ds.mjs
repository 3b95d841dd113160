// npm run try:3ds: 3-D Secure in `test` end to end, without a browser (docs/threeds.md). A challenge
// flow: deviceDataInitialize, the device data collection page, authenticate, the challenge ended
// through the sandbox control completeChallenge (as the cardholder's right code would), then
// verification and the transaction read back; a frictionless flow; a verification called before the challenge ended;
// and a subscription: its first payment sets up a series, a merchant-initiated (3RI) payment uses it. BASE_URL
// (default http://localhost:8787) is a running test Worker: `npm start`.
import { THREEDS_HEADERS, call, check, run, runId, step } from './lib.mjs';

const API = '/verifications/customers/3ds';
const merchant = { entity: 'default' };
const card = { type: 'card/front', cardNumber: '4571736000000000', cardExpiryDate: { month: 12, year: 2035 } };

/** deviceDataInitialize, then the DDC page as the checkout's hidden frame posts it: its SessionId. */
async function collectDeviceData(transactionReference) {
  const init = await call('POST', `${API}/deviceDataInitialize`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference, merchant, paymentInstrument: card },
  });
  check(init.json.outcome === 'initialized', 'initialized');
  const { url, jwt, bin } = init.json.deviceDataCollection;
  const page = await call('POST', url, { form: { Bin: bin, JWT: jwt } });
  // The page posts {"MessageType":"profile.completed","SessionId":"0_<uuid>","Status":true} to its parent.
  const sessionId = /"SessionId":"(0_[0-9a-f-]{36})","Status":true/.exec(page.text)?.[1];
  check(sessionId, 'profile.completed with a SessionId');
  console.log(`  SessionId ${sessionId}`);
  return sessionId;
}

function authenticateBody(transactionReference, sessionId, cardHolderName) {
  return {
    transactionReference,
    merchant,
    instruction: { value: { amount: 1999, currency: 'GBP' }, paymentInstrument: { ...card, cardHolderName } },
    deviceData: { acceptHeader: 'text/html', userAgentHeader: 'Mozilla/5.0', collectionReference: sessionId },
    challenge: { returnUrl: 'https://shop.example/3ds/return', windowSize: '390x400' },
  };
}

run('try:3ds', async () => {
  const id = runId();

  step('Challenge flow: device data collection');
  const order = `order-${id}-1`;
  const sessionId = await collectDeviceData(order);

  step('authenticate: the cardholder name 3ds2-challenge-identified asks for a challenge');
  const auth = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: authenticateBody(order, sessionId, '3ds2-challenge-identified'),
  });
  check(auth.json.outcome === 'challenged', 'challenged');
  const reference = auth.json.challenge.reference;
  check(/^[A-Za-z0-9]{20}$/.test(reference), 'a challenge reference of 20 letters and digits');

  step('The cardholder passes the challenge: the sandbox control, instead of the page and the code 1234');
  const completed = await call('POST', `${API}/sandbox/completeChallenge`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order, merchant, challenge: { reference }, result: 'passed' },
  });
  check(completed.json.outcome === 'challengeCompleted' && completed.json.challenge.result === 'passed', 'passed');

  step('verification, as your returnUrl handler calls it');
  const verified = await call('POST', `${API}/verification`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order, merchant, challenge: { reference } },
  });
  check(verified.json.outcome === 'authenticated', 'authenticated');
  check(verified.json.authentication?.eci === '05', 'ECI 05 (visa, authenticated)');
  check(verified.json.authentication?.authenticationValue?.length === 28, 'a 28-character authentication value');

  step('The transaction read back, for a merchant that lost track of it: completed, with that answer');
  const read = await call('GET', `${API}/authentications/${encodeURIComponent(order)}?entity=default`, {
    headers: { Authorization: THREEDS_HEADERS.Authorization, Accept: THREEDS_HEADERS.Accept },
  });
  check(read.json.state === 'completed', 'completed');
  check(JSON.stringify(read.json.result) === JSON.stringify(verified.json), "verification's answer");

  step('Frictionless flow: 3ds2-frictionless-identified is authenticated without a challenge');
  const order2 = `order-${id}-2`;
  const sessionId2 = await collectDeviceData(order2);
  const frictionless = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: authenticateBody(order2, sessionId2, '3ds2-frictionless-identified'),
  });
  check(frictionless.json.outcome === 'authenticated', 'authenticated');

  step('verification before the challenge ended: not completed, for good');
  const order3 = `order-${id}-3`;
  const sessionId3 = await collectDeviceData(order3);
  const auth3 = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: authenticateBody(order3, sessionId3, '3ds2-challenge-identified'),
  });
  const challenge = { reference: auth3.json.challenge.reference };
  const early = await call('POST', `${API}/verification`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order3, merchant, challenge },
  });
  check(early.json.outcome === 'authenticationFailed', 'authenticationFailed');
  const late = await call('POST', `${API}/sandbox/completeChallenge`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order3, merchant, challenge, result: 'passed' },
  });
  check(late.json.challenge.result === 'notCompleted', 'the challenge stays not completed');

  step('A subscription: the first payment sets up a series (recurring: a challenge is mandated)');
  const mastercard = { ...card, cardNumber: '5312650000000004' };
  const first = `sub-${id}-first`;
  const subscribe = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      ...authenticateBody(first, await collectDeviceData(first), '3ds2-challenge-identified'),
      instruction: { value: { amount: 1999, currency: 'GBP' }, paymentInstrument: mastercard },
      recurring: { type: 'recurring', expiry: `${new Date().getUTCFullYear() + 1}-12-31`, frequencyDays: 30 },
    },
  });
  check(subscribe.json.outcome === 'challenged', 'challenged');
  const firstChallenge = { reference: subscribe.json.challenge.reference };
  await call('POST', `${API}/sandbox/completeChallenge`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: first, merchant, challenge: firstChallenge, result: 'passed' },
  });
  const subscribed = await call('POST', `${API}/verification`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: first, merchant, challenge: firstChallenge },
  });
  check(subscribed.json.outcome === 'authenticated', 'authenticated: the series is kept');

  step('A month later, the merchant-initiated payment: a 3RI authentication of the series, no cardholder');
  const threeRi = (transactionReference, amount, expect) =>
    call('POST', `${API}/merchantInitiated`, {
      headers: THREEDS_HEADERS,
      json: {
        transactionReference,
        merchant,
        priorTransactionReference: first,
        type: 'recurring',
        instruction: { value: { amount, currency: 'GBP' }, paymentInstrument: mastercard },
      },
      ...(expect ? { expect } : {}),
    });
  const renewal = await threeRi(`sub-${id}-2`, 1999);
  check(renewal.json.outcome === 'authenticated', 'authenticated');
  check(renewal.json.authentication?.eci === '07', 'ECI 07 (Mastercard, merchant-initiated)');
  const beyond = await threeRi(`sub-${id}-3`, 1, 400);
  check(
    beyond.json.validationErrors?.[0]?.jsonPath === '$.instruction.value.amount',
    "beyond the first payment's amount: 400",
  );
});
