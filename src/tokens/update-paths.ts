/**
 * The paths of a token's attributes, under its href, each updated by a PUT (docs/tokens.md
 * "Updates"); the token's `_links` name them `tokens:<attribute>`. No imports: the OpenAPI build
 * reads it too.
 */
export const UPDATE_PATHS = {
  description: 'description',
  cardHolderName: 'paymentInstrument/cardHolderName',
  cardExpiryDate: 'paymentInstrument/cardExpiryDate',
  billingAddress: 'paymentInstrument/billingAddress',
  schemeTransactionReference: 'schemeTransactionReference',
} as const;
