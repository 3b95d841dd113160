// npm run try:tokens: a token's life end to end (docs/tokens.md): create it in a shopper's
// namespace, read it, update one attribute, meet and accept a conflict, list the namespace, look
// the card up by token, delete it. BASE_URL (default http://localhost:8787) is a running test
// Worker: `npm start`. Each run uses a card number and a namespace of its own.
import { CARD_BIN_HEADERS, TOKENS_HEADERS, call, cardNumber, check, run, runId, step } from './lib.mjs';

run('try:tokens', async () => {
  const namespace = `shopper-${runId()}`;
  const card = cardNumber('45713684'); // a Danske Bank visa/dankort debit BIN

  step(`Create a token for a card in the namespace ${namespace}`);
  const created = await call('POST', '/tokens', {
    headers: TOKENS_HEADERS,
    json: {
      paymentInstrument: {
        type: 'card/front',
        cardNumber: card,
        cardExpiryDate: { month: 12, year: 2035 },
        cardHolderName: 'Ada Lovelace',
      },
      merchant: { entity: 'default' },
      description: "Ada's debit card",
      namespace,
    },
    expect: 201,
  });
  const token = created.json.tokenPaymentInstrument.href;
  check(created.headers.get('Location') === token, 'Location is the token');
  check(created.json.paymentInstrument.cardNumber === `${card.slice(0, 6)}******${card.slice(-4)}`, 'a masked number');

  step('Read it');
  const read = await call('GET', token, {
    headers: { Authorization: TOKENS_HEADERS.Authorization, Accept: TOKENS_HEADERS.Accept },
  });
  check(read.json.tokenId === created.json.tokenId, 'the same token');

  step('Update one attribute: PUT on its link, the value as the body');
  await call('PUT', created.json._links['tokens:cardHolderName'].href, {
    headers: TOKENS_HEADERS,
    json: 'Ada King',
    expect: 204,
  });

  step('The same card with another expiry date: 409, with a link to accept the conflict');
  const conflict = await call('POST', '/tokens', {
    headers: TOKENS_HEADERS,
    json: {
      paymentInstrument: {
        type: 'card/front',
        cardNumber: card,
        cardExpiryDate: { month: 1, year: 2036 },
        cardHolderName: 'Ada King',
      },
      merchant: { entity: 'default' },
      namespace,
    },
    expect: 409,
  });
  check(conflict.json.tokenId === created.json.tokenId, 'the same token');
  check(conflict.json.conflicts?.paymentInstrument?.cardExpiryDate?.year === 2036, 'the conflicting expiry date');

  step('Accept the conflict: the token takes the new expiry date');
  await call('PUT', conflict.json._links['tokens:conflicts'].href, { headers: TOKENS_HEADERS, expect: 204 });

  step(`List the namespace ${namespace}`);
  const listed = await call('GET', `/tokens?namespace=${encodeURIComponent(namespace)}`, {
    headers: { Authorization: TOKENS_HEADERS.Authorization, Accept: TOKENS_HEADERS.Accept },
  });
  const [only] = listed.json._embedded.tokens;
  check(listed.json._embedded.tokens.length === 1 && only.tokenId === created.json.tokenId, 'the one token');
  check(only.paymentInstrument.cardHolderName === 'Ada King', 'the updated name');
  check(only.paymentInstrument.cardExpiryDate.year === 2036, 'the accepted expiry date');

  step('Card BIN lookup by token, allowed for the entity that is not PCI compliant');
  const bin = await call('POST', '/api/cardBin/panLookup', {
    headers: CARD_BIN_HEADERS,
    json: { merchant: { entity: 'nonpci' }, token },
  });
  check(bin.json.bin === card.slice(0, 8) && bin.json.brand[0] === 'visa', 'the card behind the token');

  step('Delete it; it is gone');
  const getHeaders = { headers: { Authorization: TOKENS_HEADERS.Authorization, Accept: TOKENS_HEADERS.Accept } };
  await call('DELETE', token, { ...getHeaders, expect: 204 });
  await call('GET', token, { ...getHeaders, expect: 404 });
});
