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
  /** Live: what the DDC page's script learned of the browser (`/3ds/ddc/facts/<handle>`). */
  ddcFacts: '/3ds/ddc/facts',
  /** Live: the ACS's 3DS Method notification (`/3ds/method/<handle>`). */
  methodNotification: '/3ds/method',
  /** Live: the ACS's final post of a challenge, `cres` (`/3ds/challenge/notify/<handle>`). */
  challengeNotification: '/3ds/challenge/notify',
  /** Test: the test issuer's app-channel ACS, where an app's SDK posts its CReqs (`/3ds/app/creq/<handle>`). */
  appCReq: '/3ds/app/creq',
  /** Test: the test Directory Server's encryption key and CA certificate, for a test SDK. */
  testDirectoryServer: '/3ds/test/directory-server',
} as const;
