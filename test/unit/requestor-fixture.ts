import type { RequestorBlock } from '../../src/merchants/requestor';

/** An entity's requestor block as the AReq builders' tests use it (a Mastercard acquirer BIN of its own). */
export const REQUESTOR: RequestorBlock = {
  acquirerBIN: { default: '412345', mastercard: '512345' },
  acquirerMerchantID: 'M-000123',
  mcc: '5732',
  merchantName: 'Example Hardware',
  merchantCountryCode: '826',
  threeDSRequestorURL: 'https://shop.example/about',
  acquirerCountryCode: '826',
};
