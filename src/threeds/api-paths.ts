/**
 * Where the 3DS API and the browser pages live (docs/threeds.md): the JSON steps under
 * THREEDS_PATH, the pages the cardholder's browser posts to under PAGES.
 */
export const THREEDS_PATH = '/verifications/customers/3ds';

export const PAGES = {
  /** Device data collection (the merchant's hidden frame posts `Bin` and `JWT`). */
  ddc: '/3ds/ddc',
  /** The challenge (the merchant's frame posts `JWT` and `MD`). */
  challenge: '/3ds/challenge',
  /** The test ACS's code form posts here. */
  challengeSubmit: '/3ds/challenge/submit',
} as const;
