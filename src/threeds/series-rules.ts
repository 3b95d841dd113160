import type { Brand } from '../bin/model';
import type { FieldError } from '../failures';
import { hmacHex } from './hmac-derived-values';
import type { THREE_RI_TYPE_VALUES } from '../schemas/threeds-requests';

/**
 * A series of merchant-initiated payments (docs/threeds.md "Series and 3RI", CONTRACT §11): set
 * up on a customer-present `authenticate` with `recurring`, used by later 3RI authentications
 * (EMV `deviceChannel` 03). Pure rules: what a series keeps, and what a 3RI must meet before any
 * AReq is sent; the prior transaction's object applies them, so concurrent 3RIs count exactly.
 */

/** The 3RI reasons by name, and their EMV `threeRIInd` (2.2.0; 2.3.1 keeps these codes). */
export const THREE_RI_TYPES = {
  recurring: '01',
  instalment: '02',
  addCard: '03',
  maintainCard: '04',
  accountVerification: '05',
  splitShipment: '06',
  topUp: '07',
  mailOrder: '08',
  telephoneOrder: '09',
  trustListStatusCheck: '10',
  otherPayment: '11',
} as const satisfies Record<ThreeRiType, string>;
/** The names are the schema's (a name missing here, or one too many, does not compile). */
export type ThreeRiType = (typeof THREE_RI_TYPE_VALUES)[number];

/** Types that are no payment: EMV `messageCategory` 02. */
export const NON_PAYMENT_TYPES: readonly ThreeRiType[] = ['addCard', 'maintainCard', 'accountVerification'];

/**
 * The schemes that take a recurring or instalment 3RI (deviceChannel 03 for a payment in a series):
 * Mastercard (Identity Check: 3RI for merchant-initiated payments, ECI 07), per Checkout.com's
 * "recurring 3RI is Mastercard-only" and Cybersource's 3RI testing notes
 * (research: threeds-3ri-exemptions.md). Others are refused at `$.type`.
 */
export const RECURRING_3RI_BRANDS: readonly Brand[] = ['mastercard', 'maestro'];

/** The series' terms as `authenticate` set them. */
export interface SeriesTerms {
  type: 'recurring' | 'instalment';
  /** YYYY-MM-DD: the last day a 3RI of the series may be made. */
  expiry: string;
  frequencyDays: number;
  instalments?: number;
}

/** What the prior transaction keeps for its series (never the card number or the authentication value). */
export interface SeriesRecord {
  terms: SeriesTerms;
  /** The customer-present payment's amount and currency: what the 3RIs together may reach. */
  amount: number;
  currency: string;
  /** The keyed hash of the card number (a 3RI must be for the same card). */
  cardHash: string;
  brands: string[];
  /** The protocol version, and what a 3RI names the prior authentication by. */
  version: string;
  /** From the answer (absent for a test challenge, whose ids verification derives). */
  acsTransactionId?: string;
  dsTransactionId?: string;
  /** 02 when the cardholder was challenged, else 01 (EMV threeDSReqPriorAuthMethod). */
  method: '01' | '02';
  /** When the prior authentication ended (ms). */
  authenticatedAt: number;
  status: 'Y' | 'A';
}

/** What `authenticate` with `recurring` hands its object: the series is kept if the outcome is Y or A. */
export interface SeriesSetup {
  terms: SeriesTerms;
  amount: number;
  currency: string;
  cardHash: string;
  brands: string[];
}

/** The keyed hash a series knows its card by (never the number). */
export function seriesCardHash(key: Uint8Array<ArrayBuffer>, cardNumber: string): Promise<string> {
  return hmacHex(key, `series-card:${cardNumber}`);
}

/** A 3RI as the prior's object checks it. */
export interface ThreeRiUse {
  type: ThreeRiType;
  amount: number;
  currency: string;
  cardHash: string;
}

export type SeriesUseOutcome =
  /** The 3RI may go ahead: the series' facts its AReq names. */
  | { kind: 'allowed'; series: SeriesRecord }
  /** Refused before any AReq: 400 with this field error. */
  | { kind: 'refused'; error: FieldError }
  /** This 3RI reference was used with another body. */
  | { kind: 'conflict' };

/** The end of a series, ms: the end of its expiry day (UTC). */
export function seriesEnd(terms: SeriesTerms): number {
  return Date.parse(`${terms.expiry}T00:00:00Z`) + 24 * 60 * 60 * 1000;
}

/** Whether `recurring` is acceptable today: expiry after today, instalments only (and always) for instalment. */
export function termsProblem(terms: SeriesTerms, now: number): FieldError | undefined {
  const today = new Date(now).toISOString().slice(0, 10);
  if (terms.expiry <= today) return invalid('$.recurring.expiry', 'The series must end after today (YYYY-MM-DD, UTC).');
  if (terms.type === 'instalment' && terms.instalments === undefined)
    return {
      errorName: 'fieldIsMissing',
      message: 'An instalment series says how many instalments.',
      jsonPath: '$.recurring.instalments',
    };
  if (terms.type === 'recurring' && terms.instalments !== undefined)
    return invalid('$.recurring.instalments', 'Only an instalment series has instalments.');
  return undefined;
}

/**
 * Why a 3RI may not use the series (undefined when it may), given the series' uses so far that
 * count (those authenticated): each problem at the path CONTRACT §11 names.
 */
export function useProblem(
  series: SeriesRecord,
  use: ThreeRiUse,
  counted: { amount: number; instalments: number },
  now: number,
): FieldError | undefined {
  const prior = '$.priorTransactionReference';
  if (use.cardHash !== series.cardHash) return invalid(prior, 'The prior transaction is for another card.');
  if (now >= seriesEnd(series.terms)) return invalid(prior, 'The series of the prior transaction has expired.');
  const versionRule = versionProblem(series.version, use.type);
  if (versionRule) return versionRule;
  if (use.type === 'recurring' || use.type === 'instalment') {
    if (!series.brands.some((b) => RECURRING_3RI_BRANDS.includes(b as Brand)))
      return invalid('$.type', `The card's scheme takes no ${use.type} 3RI (Mastercard does).`);
    if (use.type !== series.terms.type) return invalid('$.type', `The series is a ${series.terms.type} series.`);
  }
  if (use.type === 'instalment' && counted.instalments + 1 >= (series.terms.instalments ?? 0))
    return invalid('$.type', 'The series has no instalment left (the first payment was one).');
  if (use.currency !== series.currency)
    return invalid('$.instruction.value.amount', `The series is in ${series.currency}.`);
  if (counted.amount + use.amount > series.amount)
    return invalid(
      '$.instruction.value.amount',
      `The series' 3RI amounts together may not exceed the first payment's (${series.amount - counted.amount} left).`,
    );
  return undefined;
}

/**
 * Whether the prior's EMV version has the 3RI type (a 3RI uses the prior's version): 2.1.0 has 3RI
 * for non-payments only (its AReq rules give a 3RI no purchase fields), so add card, maintain card
 * and account verification; 2.2.0 and 2.3.1 have every type.
 */
export function versionProblem(version: string, type: ThreeRiType): FieldError | undefined {
  if (version !== '2.1.0' || NON_PAYMENT_TYPES.includes(type)) return undefined;
  return invalid('$.type', `The prior authentication is EMV 2.1.0, which has 3RI for non-payments only.`);
}

function invalid(jsonPath: string, message: string): FieldError {
  return { errorName: 'fieldHasInvalidValue', message, jsonPath };
}
