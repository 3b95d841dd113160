// npm run try:live: live 3-D Secure end to end against the fake 3DS Server provider
// (docs/threeds.md "Live", docs/fake-3ds-server.md), without a browser. Start both first with
// `npm run start:live`: the live service at BASE_URL (default http://localhost:8787), the fake at
// FAKE_URL (default http://localhost:8788). The card's last four digits pick the fake's scenario;
// its control route ends the challenge as the cardholder would on the issuer's page.
import { THREEDS_HEADERS, call, check, run, runId, step } from './lib.mjs';

const FAKE_URL = (process.env.FAKE_URL ?? 'http://localhost:8788').replace(/\/+$/, '');
const API = '/verifications/customers/3ds';
const merchant = { entity: 'default' };
// …2072: 3DS version 2.2.0 only (2), a 3DS Method that completes (0), a challenge (7) that the code
// 1234 passes (2): the demo's "challenge (code 1234)" card.
const card = { type: 'card/front', cardNumber: '4571730000022072', cardExpiryDate: { month: 12, year: 2035 } };

const decode = (base64url) => JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8'));
const unescape = (html) => html.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));
/** A page's first form: where it posts, and its hidden fields. */
function formOf(html) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const fields = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[name] = unescape(value);
  }
  return { action: action && unescape(action), fields };
}

run('try:live', async () => {
  const order = `order-live-${runId()}`;

  step('deviceDataInitialize: the service prepares the card at the provider');
  const init = await call('POST', `${API}/deviceDataInitialize`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order, merchant, paymentInstrument: card },
  });
  check(init.json.outcome === 'initialized', 'initialized');
  const { url, jwt, bin } = init.json.deviceDataCollection;

  step("The DDC page, as the checkout's hidden frame posts it, and the browser facts its script sends");
  const page = await call('POST', url, { form: { Bin: bin, JWT: jwt } });
  const config = JSON.parse(/var config = (\{.*?\});/.exec(page.text)?.[1] ?? 'null');
  check(
    config?.factsUrl,
    'a live DDC page naming where its script posts the facts (is BASE_URL `npm run start:live`?)',
  );
  await call('POST', config.factsUrl, {
    headers: { 'Content-Type': 'application/json' },
    json: {
      javascriptEnabled: true,
      javaEnabled: false,
      language: 'en-GB',
      colorDepth: 24,
      screenHeight: 900,
      screenWidth: 1440,
      timeZone: -60,
    },
    expect: 204,
  });
  const { SessionId: sessionId } = JSON.parse(config.message);
  check(sessionId, 'profile.completed with a SessionId');

  step("The page's own hidden frame runs the issuer's 3DS Method; the ACS notifies the service");
  const method = formOf(page.text);
  check(method.action && method.fields.threeDSMethodData, 'the DDC page runs a 3DS Method');
  const acsMethod = await call('POST', method.action, { form: method.fields });
  const notification = formOf(acsMethod.text);
  check(notification.action, "the ACS's notification form");
  await call('POST', notification.action, { form: notification.fields });

  step('authenticate: one AReq through the provider; the ACS asks for a challenge');
  const auth = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: order,
      merchant,
      instruction: { value: { amount: 1999, currency: 'GBP' }, paymentInstrument: card },
      deviceData: {
        acceptHeader: 'text/html',
        userAgentHeader: 'Mozilla/5.0',
        collectionReference: sessionId,
        ipAddress: '192.0.2.10',
      },
      challenge: { returnUrl: 'https://shop.example/3ds/return', windowSize: '390x400' },
    },
  });
  check(auth.json.outcome === 'challenged', 'challenged');
  const reference = auth.json.challenge.reference;
  // The CReq for the ACS (base64url JSON) names the ACS's transaction.
  const { acsTransID } = decode(auth.json.challenge.payload);
  check(acsTransID, 'the CReq names acsTransID');

  step("The cardholder passes the issuer's challenge: the fake's control route, instead of its page");
  const ended = await call('POST', `${FAKE_URL}/_fake/challenge/${acsTransID}`, {
    headers: { 'Content-Type': 'application/json' },
    json: { result: 'Y' },
  });
  check(ended.json.notificationURL, "the service's notification URL");

  step("The ACS's last page posts cres to the service (from the cardholder's browser)");
  await call('POST', ended.json.notificationURL, {
    form: {
      cres: ended.json.cres,
      ...(ended.json.threeDSSessionData ? { threeDSSessionData: ended.json.threeDSSessionData } : {}),
    },
  });

  step('verification: the result the provider reported, recorded once');
  const verified = await call('POST', `${API}/verification`, {
    headers: THREEDS_HEADERS,
    json: { transactionReference: order, merchant, challenge: { reference } },
  });
  check(verified.json.outcome === 'authenticated', 'authenticated');
  check(verified.json.authentication?.eci === '05', 'ECI 05 (visa, authenticated)');

  step('A subscription: a Mastercard first payment with recurring (…2100: 2.2.0, no 3DS Method, Y)');
  // Recurring 3RI is Mastercard's; no device data collection here, so the browser fields are sent.
  const mastercard = { ...card, cardNumber: '5312650000092100' };
  const first = `sub-live-${runId()}`;
  const subscribed = await call('POST', `${API}/authenticate`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: first,
      merchant,
      instruction: { value: { amount: 1999, currency: 'GBP' }, paymentInstrument: mastercard },
      deviceData: {
        acceptHeader: 'text/html',
        userAgentHeader: 'Mozilla/5.0',
        browserLanguage: 'en-GB',
        browserColorDepth: '24',
        browserScreenHeight: 900,
        browserScreenWidth: 1440,
        timeZone: '-60',
        browserJavaEnabled: false,
        browserJavascriptEnabled: true,
        ipAddress: '192.0.2.10',
      },
      challenge: { returnUrl: 'https://shop.example/3ds/return' },
      recurring: { type: 'recurring', expiry: `${new Date().getUTCFullYear() + 1}-12-31`, frequencyDays: 30 },
    },
  });
  check(subscribed.json.outcome === 'authenticated', 'authenticated: the series is kept');

  step("The renewal: a 3RI AReq (deviceChannel 03) naming the first payment's ACS transaction, no cardholder");
  const renewal = await call('POST', `${API}/merchantInitiated`, {
    headers: THREEDS_HEADERS,
    json: {
      transactionReference: `${first}-2`,
      merchant,
      priorTransactionReference: first,
      type: 'recurring',
      instruction: { value: { amount: 1999, currency: 'GBP' }, paymentInstrument: mastercard },
    },
  });
  check(renewal.json.outcome === 'authenticated', 'authenticated');
  check(renewal.json.authentication?.eci === '07', 'ECI 07 (Mastercard, merchant-initiated)');
});
