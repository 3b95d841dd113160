import type { Brand } from '../../bin/model';
import type { BillingAddress } from '../../cards/token-card';
import type { ResolvedCard } from '../../cards/resolve-card';
import type { FieldError } from '../../failures';
import type { RequestorBlock } from '../../merchants/requestor';
import type { AuthenticateRequest } from '../../schemas/threeds-requests-v3';
import type { AppAuthenticateRequest, BrowserAuthenticateRequest } from '../app-channel-rules';
import { countryNumeric, currencyNumeric } from '../../reference-data/iso-codes';
import type { AuthenticationRequest, EmvVersion } from './emv-messages';
import { exemptionOf, exemptionToSend, type ExemptionAsked } from '../exemptions';
import type { SeriesTerms } from '../series-rules';

/**
 * The AReq of a live authentication (docs/threeds.md "Live": "The AReq"), built from Worldpay's
 * request, what the DDC page recorded in the cardholder's browser, the entity's requestor block
 * and the prepared transaction. Pure: everything it needs, the clock included, is in
 * {@link AReqInput}. A request that cannot make a valid AReq for the version answers the
 * jsonPaths the merchant must send; nothing is invented to fill a gap.
 */

/** What the DDC page learned in the cardholder's browser (docs/threeds.md "Device data collection"). */
export interface BrowserFacts {
  /** The Accept-Language header of the DDC page's request, as a list of language tags. */
  acceptLanguage?: string[];
  /** navigator.language, as a BCP 47 tag (language-tags.ts) */
  language?: string;
  colorDepth?: number;
  screenHeight?: number;
  screenWidth?: number;
  /** Date.prototype.getTimezoneOffset(): minutes, positive west of UTC (as EMV's browserTZ). */
  timeZone?: number;
  javaEnabled?: boolean;
  javascriptEnabled?: boolean;
  /** CF-Connecting-IP of the DDC page's request. */
  ip?: string;
  userAgent?: string;
}

/** The card as authenticate resolved it (a card number, or the card behind a token). */
export interface AReqCard {
  cardNumber: string;
  cardExpiryDate?: { month: number; year: number };
  cardHolderName?: string;
  billingAddress?: BillingAddress;
  brands: readonly Brand[];
  /** Whether the card came from a token: its details are not the merchant's to change. */
  fromToken: boolean;
  /** Whether the number is a network token's (3DS v3 `card/networkToken`, sent as acctNumber alike). */
  networkToken?: boolean;
}

/** The card as the AReq takes it: in memory, for the object's one run; never stored. */
export function areqCard(card: ResolvedCard): AReqCard {
  return {
    cardNumber: card.cardNumber,
    brands: card.brands,
    fromToken: card.tokenId !== undefined,
    ...(card.networkToken ? { networkToken: true } : {}),
    ...(card.cardExpiryDate ? { cardExpiryDate: card.cardExpiryDate } : {}),
    ...(card.cardHolderName !== undefined ? { cardHolderName: card.cardHolderName } : {}),
    ...(card.billingAddress ? { billingAddress: card.billingAddress } : {}),
  };
}

/** The channel's part of the AReq's input: a browser's, with what its DDC page learned, or an app's. */
export type AReqChannel =
  | {
      channel: 'browser';
      request: BrowserAuthenticateRequest;
      threeDSCompInd: 'Y' | 'N' | 'U';
      /** The service's challenge notification URL for this transaction (≤ 256 characters). */
      notificationURL: string;
      browser: BrowserFacts;
    }
  /** An app's, through its EMV 3DS SDK: no 3DS Method, no notification URL, no browser. */
  | { channel: 'app'; request: AppAuthenticateRequest };

export type AReqInput = AReqChannel & {
  version: EmvVersion;
  threeDSServerTransID: string;
  now: number;
  card: AReqCard;
  requestor: RequestorBlock;
};

export type AReqResult =
  /** The AReq, and the exemption it carries when one was asked for (exemptions.ts). */
  { ok: true; areq: AuthenticationRequest; exemption?: ExemptionAsked } | { ok: false; errors: FieldError[] };

const CARD = '$.instruction.paymentInstrument';
const DEVICE = '$.deviceData';

/** EMV's browserColorDepth values; a real depth between two of them is sent as the lower one. */
const COLOR_DEPTHS = [1, 4, 8, 15, 16, 24, 32, 48] as const;

/** `challenge.preference` → threeDSRequestorChallengeInd. */
const CHALLENGE_INDICATORS = {
  noPreference: '01',
  noChallengeRequested: '02',
  challengeRequested: '03',
  challengeMandated: '04',
  noChallengeRequestedTRAPerformed: '05',
} as const;

/** `riskData.account.type` → threeDSReqAuthMethod. */
const AUTH_METHODS = {
  guestUser: '01',
  registeredUser: '02',
  federatedAccount: '03',
  issuerCredentials: '04',
  thirdPartyAuthentication: '05',
  fidoAuthenticator: '06',
} as const;

/** `riskData.shipping.method` → shipIndicator. */
const SHIP_INDICATORS = {
  billingAddress: '01',
  verifiedAddress: '02',
  otherAddress: '03',
  store: '04',
  digital: '05',
  unshippedTickets: '06',
  other: '07',
} as const;

/** `riskData.shipping.timeFrame` → deliveryTimeframe. */
const DELIVERY_TIMEFRAMES = { electronic: '01', sameDay: '02', nextDay: '03', twoDaysPlus: '04' } as const;

const DAY_MS = 86_400_000;

/**
 * Builds the AReq, or says which fields the merchant must send.
 *
 * @example
 * ```ts
 * const built = buildAReq({ version: '2.2.0', threeDSServerTransID, threeDSCompInd: 'Y', ... });
 * if (built.ok) provider.authenticate(built.areq);
 * ```
 */
export function buildAReq(input: AReqInput): AReqResult {
  const { version, request, card, requestor, now } = input;
  const errors: FieldError[] = [];
  const need = (jsonPath: string, message: string, errorName = 'fieldIsMissing'): undefined => {
    errors.push({ errorName, message, jsonPath });
    return undefined;
  };
  const brand = card.brands[0];

  // The card.
  if (card.cardNumber.length < 13) {
    need(
      `${CARD}.${card.fromToken ? 'href' : card.networkToken ? 'tokenNumber' : 'cardNumber'}`,
      'EMV 3-D Secure needs a card number of 13 to 19 digits.',
      card.fromToken ? 'fieldHasInvalidValue' : 'stringIsTooShort',
    );
  }
  const cardholderName = cardholderNameFor(version, card, need);

  // The amount, in minor units with the ISO 4217 numeric code and exponent.
  const currency = currencyNumeric(request.instruction.value.currency);
  if (!currency) need('$.instruction.value.currency', 'Not an ISO 4217 currency of a payment.', 'fieldHasInvalidValue');

  // The device: a browser's fields (the merchant's values first, then what the DDC page
  // recorded), or an app's SDK's.
  const device = input.channel === 'browser' ? browserFields(input, need) : appFields(version, input.request);
  // Decoupled authentication is EMV 2.2.0's: a card whose issuer speaks only 2.1.0 cannot do it.
  const decoupled = request.decoupled;
  if (decoupled && version === '2.1.0')
    need(
      '$.decoupled',
      "Decoupled authentication needs EMV 2.2.0 or later; this card's issuer has 2.1.0 only.",
      'fieldHasInvalidValue',
    );

  if (errors.length > 0) return { ok: false, errors };

  // An exemption is the challenge indicator (and for Mastercard data only, the message category),
  // downgraded to 02 where the version has none (exemptions.ts); else the preference.
  const asked = exemptionOf(request);
  const exemption: ExemptionAsked | undefined = asked && {
    requested: asked,
    ...exemptionToSend(asked, version, card.brands),
  };
  const recurring = request.recurring;
  const challengeInd = exemption
    ? exemption.sent.threeDSRequestorChallengeInd
    : CHALLENGE_INDICATORS[request.challenge.preference];
  const authMethod = request.riskData?.account?.type;
  const authInfo = authMethod ? { threeDSReqAuthMethod: AUTH_METHODS[authMethod] } : undefined;
  const areq: AuthenticationRequest = {
    messageType: 'AReq',
    messageVersion: version,
    messageCategory: exemption?.sent.messageCategory ?? '01',
    deviceChannel: input.channel === 'browser' ? '02' : '01',
    threeDSServerTransID: input.threeDSServerTransID,
    threeDSRequestorAuthenticationInd: recurring ? (recurring.type === 'instalment' ? '03' : '02') : '01',
    ...seriesFields(version, recurring, now),
    threeDSRequestorChallengeInd: version === '2.3.1' ? [challengeInd] : challengeInd,
    ...(authInfo ? { threeDSRequestorAuthenticationInfo: version === '2.3.1' ? [authInfo] : authInfo } : {}),
    threeDSRequestorURL: requestor.threeDSRequestorURL,
    ...acquirerFields(requestor, version, brand),
    merchantName: request.merchant.overrideName ?? requestor.merchantName,
    ...cardFields(card, cardholderName),
    ...(request.riskData?.account?.email !== undefined ? { email: request.riskData.account.email } : {}),
    purchaseAmount: String(request.instruction.value.amount),
    purchaseCurrency: currency!.number,
    purchaseExponent: String(currency!.digits),
    purchaseDate: emvDateTime(now),
    transType: '01',
    ...device,
    ...accountInfo(request, now),
    ...merchantRiskIndicator(request),
    // Decoupled allowed (docs/threeds.md "Decoupled"), for up to maxMinutes: EMV's 5 digits.
    ...(decoupled
      ? { threeDSRequestorDecReqInd: 'Y', threeDSRequestorDecMaxTime: String(decoupled.maxMinutes).padStart(5, '0') }
      : {}),
  };
  return { ok: true, areq, ...(exemption ? { exemption } : {}) };
}

/**
 * A browser's fields of the AReq: its 3DS Method's outcome, the notification URL, and the
 * browser's values (the merchant's first, then what the DDC page recorded); the ones the version
 * needs and nobody gave are `need`ed.
 */
function browserFields(
  input: AReqInput & { channel: 'browser' },
  need: (jsonPath: string, message: string, errorName?: string) => undefined,
): Record<string, unknown> {
  const { version, browser } = input;
  const d = input.request.deviceData;
  const javascriptEnabled = d.browserJavascriptEnabled ?? browser.javascriptEnabled;
  // The language: the merchant's, else navigator.language, else the first language the DDC
  // page's request accepted (Accept-Language); only when none is known must the merchant send it.
  const language = d.browserLanguage ?? primaryLanguage(browser.language ?? browser.acceptLanguage?.[0]);
  const colorDepth = d.browserColorDepth ?? colorDepthOf(browser.colorDepth);
  const screenHeight = d.browserScreenHeight ?? browser.screenHeight;
  const screenWidth = d.browserScreenWidth ?? browser.screenWidth;
  const timeZone = d.timeZone ?? (browser.timeZone === undefined ? undefined : String(browser.timeZone));
  const javaEnabled = d.browserJavaEnabled ?? browser.javaEnabled;
  const ip = d.ipAddress ?? browser.ip;
  // 2.1.0 has no JavaScript field and wants every browser field; from 2.2.0 they are needed when
  // JavaScript ran (which the DDC page proves when it ran).
  const jsFieldsNeeded = version === '2.1.0' || javascriptEnabled === true;
  if (version !== '2.1.0' && javascriptEnabled === undefined)
    need(`${DEVICE}.browserJavascriptEnabled`, 'Say whether JavaScript is enabled, or run the device data collection.');
  if (jsFieldsNeeded || version !== '2.3.1') {
    if (language === undefined) need(`${DEVICE}.browserLanguage`, 'The browser language is needed.');
  }
  if (jsFieldsNeeded) {
    if (colorDepth === undefined) need(`${DEVICE}.browserColorDepth`, 'The screen colour depth is needed.');
    if (screenHeight === undefined) need(`${DEVICE}.browserScreenHeight`, 'The screen height is needed.');
    if (screenWidth === undefined) need(`${DEVICE}.browserScreenWidth`, 'The screen width is needed.');
    if (timeZone === undefined) need(`${DEVICE}.timeZone`, 'The browser time zone is needed.');
    if (javaEnabled === undefined) need(`${DEVICE}.browserJavaEnabled`, 'Say whether Java is enabled.');
  }
  const acceptLanguage = browser.acceptLanguage ?? (language !== undefined ? [language] : undefined);
  if (version === '2.3.1' && (acceptLanguage === undefined || acceptLanguage.length === 0))
    need(`${DEVICE}.browserLanguage`, 'The accepted languages are needed: run the device data collection.');
  return {
    threeDSCompInd: input.threeDSCompInd,
    notificationURL: input.notificationURL,
    browserAcceptHeader: d.acceptHeader,
    browserUserAgent: d.userAgentHeader.slice(0, 2048),
    ...(ip !== undefined && isIp(ip) ? { browserIP: ip } : {}),
    ...(version !== '2.1.0' ? { browserJavascriptEnabled: javascriptEnabled } : {}),
    ...(language !== undefined ? { browserLanguage: language } : {}),
    ...(version === '2.3.1' ? { acceptLanguage } : {}),
    ...(jsFieldsNeeded
      ? {
          browserColorDepth: colorDepth,
          browserScreenHeight: String(screenHeight),
          browserScreenWidth: String(screenWidth),
          browserTZ: timeZone,
          browserJavaEnabled: javaEnabled,
        }
      : {}),
  };
}

/** `deviceData.sdk.interface` → deviceRenderOptions.sdkInterface. */
const SDK_INTERFACE_CODES = { native: '01', html: '02', both: '03' } as const;

/** `deviceData.sdk.uiTypes` → deviceRenderOptions.sdkUiType. */
const SDK_UI_TYPE_CODES = { text: '01', singleSelect: '02', multiSelect: '03', oob: '04', html: '05' } as const;

/**
 * An app's fields of the AReq (CONTRACT.md §12): its SDK's, as the SDK gave them (`sdkEncData`
 * passed on unread), the numbers in EMV's fixed-width digits; 2.3.1 adds the SDK's type, a
 * Default-SDK of the variant the request names (01, native, unless it says otherwise).
 */
function appFields(version: EmvVersion, request: AppAuthenticateRequest): Record<string, unknown> {
  const sdk = request.deviceData.sdk;
  const { kty, crv, x, y } = sdk.ephemeralPublicKey;
  return {
    sdkAppID: sdk.appId,
    sdkEncData: sdk.encData,
    sdkEphemPubKey: { kty, crv, x, y },
    sdkMaxTimeout: String(sdk.maxTimeout).padStart(2, '0'),
    sdkReferenceNumber: sdk.referenceNumber,
    sdkTransID: sdk.transactionId,
    deviceRenderOptions: {
      sdkInterface: SDK_INTERFACE_CODES[sdk.interface],
      sdkUiType: sdk.uiTypes.map((type) => SDK_UI_TYPE_CODES[type]),
    },
    ...(version === '2.3.1'
      ? {
          sdkType: '01',
          defaultSdkType: { sdkVariant: sdk.variant ?? '01', ...(sdk.wrapped ? { wrappedInd: 'Y' } : {}) },
        }
      : {}),
  };
}

/**
 * A series' terms in the AReq of its first payment: its expiry and frequency, the number of
 * instalments; in 2.3.1 also `recurringInd` (a variable amount, at a fixed frequency) and the
 * date of the next payment, which a fixed frequency requires.
 */
export function seriesFields(
  version: EmvVersion,
  recurring: AuthenticateRequest['recurring'] | SeriesTerms,
  now: number,
): Record<string, unknown> {
  if (!recurring) return {};
  const next = new Date(now + recurring.frequencyDays * DAY_MS).toISOString().slice(0, 10);
  return {
    recurringExpiry: recurring.expiry.replaceAll('-', ''),
    recurringFrequency: String(recurring.frequencyDays),
    ...(recurring.instalments !== undefined ? { purchaseInstalData: String(recurring.instalments) } : {}),
    ...(version === '2.3.1'
      ? { recurringInd: { amountInd: '02', frequencyInd: '01' }, recurringDate: next.replaceAll('-', '') }
      : {}),
  };
}

/**
 * The cardholder name as the version allows it: 2 to 45 characters, and ASCII up to 2.2.0. A
 * name the merchant sent outside those rules is a field error (the merchant must send another);
 * one stored with a token is left out (the merchant cannot change it here).
 */
export function cardholderNameFor(
  version: EmvVersion,
  card: AReqCard,
  need: (path: string, message: string, errorName?: string) => undefined,
): string | undefined {
  const name = card.cardHolderName?.trim();
  if (name === undefined || name === '') return undefined;

  const fits = name.length >= 2 && name.length <= 45 && (version === '2.3.1' || /^[\x20-\x7e]*$/.test(name));
  if (fits) return name;
  if (card.fromToken) return undefined;
  return need(
    `${CARD}.cardHolderName`,
    version === '2.3.1'
      ? 'EMV 3-D Secure takes a cardholder name of 2 to 45 characters.'
      : `EMV 3-D Secure ${version} takes a cardholder name of 2 to 45 ASCII characters.`,
    'fieldHasInvalidValue',
  );
}

/** The acquirer and merchant fields of every AReq, from the entity's requestor block (merchantName aside). */
export function acquirerFields(requestor: RequestorBlock, version: EmvVersion, brand: Brand | undefined) {
  return {
    acquirerBIN: perBrand(requestor.acquirerBIN, brand),
    acquirerMerchantID: perBrand(requestor.acquirerMerchantID, brand),
    ...(version === '2.3.1'
      ? { acquirerCountryCode: requestor.acquirerCountryCode, acquirerCountryCodeSource: '01' }
      : {}),
    mcc: requestor.mcc,
    merchantCountryCode: requestor.merchantCountryCode,
  };
}

/** The card's fields of every AReq: its number, expiry (YYMM), cardholder name and billing address. */
export function cardFields(card: AReqCard, cardholderName: string | undefined): Record<string, string> {
  const expiry = card.cardExpiryDate;
  return {
    acctNumber: card.cardNumber,
    ...(expiry
      ? { cardExpiryDate: `${String(expiry.year % 100).padStart(2, '0')}${String(expiry.month).padStart(2, '0')}` }
      : {}),
    ...(cardholderName !== undefined ? { cardholderName } : {}),
    ...billingAddressFields(card.billingAddress),
  };
}

/** A requestor value for the card's scheme: its own where the block has one, else the default. */
function perBrand(value: RequestorBlock['acquirerBIN'], brand: Brand | undefined): string {
  if (typeof value === 'string') return value;
  return (brand !== undefined ? value[brand] : undefined) ?? value.default!;
}

/**
 * EMV's billing address fields. Worldpay allows longer lines than EMV: a field that does not fit
 * is left out rather than cut (the issuer compares what it gets), and a state that is not an
 * ISO 3166-2 subdivision code (1 to 3 letters or digits) too.
 */
function billingAddressFields(address: BillingAddress | undefined): Record<string, string> {
  if (!address) return {};
  const fit = (name: string, value: string | undefined, max: number): Record<string, string> =>
    value !== undefined && value !== '' && value.length <= max ? { [name]: value } : {};
  const country = countryNumeric(address.countryCode);
  return {
    ...fit('billAddrLine1', address.address1, 50),
    ...fit('billAddrLine2', address.address2, 50),
    ...fit('billAddrLine3', address.address3, 50),
    ...fit('billAddrCity', address.city, 50),
    ...fit('billAddrPostCode', address.postalCode, 16),
    ...(address.state !== undefined && /^[A-Za-z0-9]{1,3}$/.test(address.state)
      ? { billAddrState: address.state }
      : {}),
    ...(country !== undefined ? { billAddrCountry: country } : {}),
  };
}

/** EMV's `acctInfo` from Worldpay's riskData: dates as yyyymmdd with their age buckets, counters. */
function accountInfo(request: AuthenticateRequest, now: number): Record<string, unknown> {
  const account = request.riskData?.account;
  const history = account?.history;
  const txn = request.riskData?.transaction?.history;
  const shipping = request.riskData?.shipping;
  const guest = account?.type === 'guestUser';
  const count = (n: number | undefined, max: number): string | undefined =>
    n === undefined ? undefined : String(Math.min(n, max));
  const info: Record<string, string | undefined> = {
    ...(guest
      ? { chAccAgeInd: '01' }
      : dated('chAccDate', 'chAccAgeInd', history?.createdAt, now, ['02', '03', '04', '05'])),
    ...dated('chAccChange', 'chAccChangeInd', history?.modifiedAt, now, ['01', '02', '03', '04']),
    ...dated('chAccPwChange', 'chAccPwChangeInd', history?.passwordModifiedAt, now, ['02', '03', '04', '05']),
    ...(guest
      ? { paymentAccInd: '01' }
      : dated('paymentAccAge', 'paymentAccInd', history?.paymentAccountEnrolledAt, now, ['02', '03', '04', '05'])),
    ...dated('shipAddressUsage', 'shipAddressUsageInd', txn?.shippingAddressFirstUsedAt, now, ['01', '02', '03', '04']),
    nbPurchaseAccount: count(txn?.completedLastSixMonths, 9999),
    txnActivityDay: count(txn?.attemptsLastDay, 999),
    txnActivityYear: count(txn?.attemptsLastYear, 999),
    provisionAttemptsDay: count(txn?.addCardsLastDay, 999),
    ...(shipping?.nameMatchesAccountName !== undefined
      ? { shipNameIndicator: shipping.nameMatchesAccountName ? '01' : '02' }
      : {}),
    ...(account?.previousSuspiciousActivity !== undefined
      ? { suspiciousAccActivity: account.previousSuspiciousActivity ? '02' : '01' }
      : {}),
  };
  const present = Object.fromEntries(Object.entries(info).filter(([, v]) => v !== undefined));
  return Object.keys(present).length > 0 ? { acctInfo: present } : {};
}

/**
 * A date of riskData (YYYY-MM-DD) as EMV's yyyymmdd and its age bucket: `buckets` are the
 * indicators for today (this transaction), under 30 days, 30 to 60 days, over 60 days.
 */
function dated(
  dateField: string,
  indField: string,
  date: string | undefined,
  now: number,
  buckets: readonly [string, string, string, string],
): Record<string, string> {
  if (date === undefined) return {};
  const days = Math.floor((now - Date.parse(`${date}T00:00:00Z`)) / DAY_MS);
  const ind = days <= 0 ? buckets[0] : days < 30 ? buckets[1] : days <= 60 ? buckets[2] : buckets[3];
  return { [dateField]: date.replace(/-/g, ''), [indField]: ind };
}

/** EMV's `merchantRiskIndicator` from Worldpay's riskData. */
function merchantRiskIndicator(request: AuthenticateRequest): Record<string, unknown> {
  const txn = request.riskData?.transaction;
  const shipping = request.riskData?.shipping;
  const gifts = txn?.giftCardsPurchase;
  const giftCurrency = gifts?.totalValue ? currencyNumeric(gifts.totalValue.currency) : undefined;
  const indicator: Record<string, string | undefined> = {
    shipIndicator: shipping?.method ? SHIP_INDICATORS[shipping.method] : undefined,
    deliveryTimeframe: shipping?.timeFrame ? DELIVERY_TIMEFRAMES[shipping.timeFrame] : undefined,
    deliveryEmailAddress: shipping?.email,
    reorderItemsInd: txn?.reorder === undefined ? undefined : txn.reorder ? '02' : '01',
    ...(txn?.preOrderDate !== undefined
      ? { preOrderPurchaseInd: '02', preOrderDate: txn.preOrderDate.replace(/-/g, '') }
      : {}),
    // EMV wants the gift cards' amount in major units, whole.
    ...(gifts?.totalValue && giftCurrency
      ? {
          giftCardAmount: String(Math.floor(gifts.totalValue.amount / 10 ** giftCurrency.digits)),
          giftCardCurr: giftCurrency.number,
        }
      : {}),
    giftCardCount: gifts?.quantity === undefined ? undefined : String(Math.min(gifts.quantity, 99)).padStart(2, '0'),
  };
  const present = Object.fromEntries(Object.entries(indicator).filter(([, v]) => v !== undefined));
  return Object.keys(present).length > 0 ? { merchantRiskIndicator: present } : {};
}

/** UTC `yyyymmddhhmmss`. */
export function emvDateTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** The first 8 characters of a BCP 47 tag are EMV's limit: a longer tag keeps its language. */
function primaryLanguage(tag: string | undefined): string | undefined {
  if (tag === undefined || tag === '') return undefined;
  return tag.length <= 8 ? tag : tag.split('-')[0]!.slice(0, 8);
}

function colorDepthOf(depth: number | undefined): string | undefined {
  if (depth === undefined || depth < 1) return undefined;
  return String([...COLOR_DEPTHS].reverse().find((d) => d <= depth));
}

function isIp(value: string): boolean {
  const v4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
  return v4.test(value) || (/^[0-9A-Fa-f:.]{2,45}$/.test(value) && value.includes(':'));
}
