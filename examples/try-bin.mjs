// npm run try:bin: card BIN lookup end to end (docs/card-bin.md). BASE_URL (default
// http://localhost:8787) is a running test Worker: `npm start`.
import { BASE_URL, CARD_BIN_HEADERS, call, check, run, step } from './lib.mjs';

run('try:bin', async () => {
  step('panLookup: everything the BIN data knows about a card number');
  const card = '4571368400000008';
  const pan = await call('POST', '/api/cardBin/panLookup', {
    headers: CARD_BIN_HEADERS,
    json: { merchant: { entity: 'default' }, cardNumber: card },
  });
  check(
    pan.json.brand?.[0] === 'visa' && pan.json.bin === card.slice(0, pan.json.binLength),
    'a visa card and its BIN',
  );
  check(pan.headers.get('Bin-Data-Version'), 'the Bin-Data-Version header');

  step('binLookup: the first 6 digits of that BIN, as a checkout page sends them while the cardholder types');
  const prefix = pan.json.bin.slice(0, 6);
  const byPrefix = await call('POST', '/api/cardBin/binLookup', {
    headers: CARD_BIN_HEADERS,
    json: { merchant: { entity: 'nonpci' }, bin: prefix },
  });
  check(byPrefix.json.bin === prefix, 'the prefix echoed');
  check(JSON.stringify(byPrefix.json.brand) === JSON.stringify(pan.json.brand), 'the brands the card has');

  step('binLookup from the checkout page itself: a publishable key from a listed origin (CORS)');
  const page = await call('POST', '/api/cardBin/binLookup', {
    headers: {
      Authorization: 'Bearer pk_test_merchant_local_demo',
      Origin: new URL(BASE_URL).origin,
      'Content-Type': 'application/json',
      'WP-Api-Version': '1',
    },
    json: { merchant: { entity: 'default' }, bin: '34114200' },
  });
  check(page.json.brand?.[0] === 'amex', 'an amex prefix');
  check(page.headers.get('Access-Control-Allow-Origin') === new URL(BASE_URL).origin, 'the CORS header');

  step('A card number that fails the Luhn check: 400 with the field that is wrong');
  const wrong = `${card.slice(0, -1)}${(Number(card.at(-1)) + 1) % 10}`;
  const refused = await call('POST', '/api/cardBin/panLookup', {
    headers: CARD_BIN_HEADERS,
    json: { merchant: { entity: 'default' }, cardNumber: wrong },
    expect: 400,
  });
  check(refused.json.validationErrors?.[0]?.errorName === 'panFailedLuhnCheck', 'panFailedLuhnCheck');
});
