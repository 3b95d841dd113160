import type { AnonymousPrepaid, Category, FundingType } from '../../src/bin/model';
import { labelKey } from './label-key';

/** Funding labels met in the public lists, keyed by {@link labelKey}. */
const FUNDING_LABELS: ReadonlyMap<string, FundingType> = new Map<string, FundingType>([
  ['credit', 'credit'],
  ['creditcard', 'credit'],
  ['cc', 'credit'],
  ['debit', 'debit'],
  ['debitcard', 'debit'],
  ['dc', 'debit'],
  ['checkcard', 'debit'],
  ['prepaid', 'prepaid'],
  ['prepaidcard', 'prepaid'],
  ['prepaiddebit', 'prepaid'],
  ['debitprepaid', 'prepaid'],
  ['prepaidcredit', 'prepaid'],
  ['prepaidreloadable', 'prepaid'],
  ['charge', 'chargeCard'],
  ['chargecard', 'chargeCard'],
  ['deferreddebit', 'deferredDebit'],
  ['deferred', 'deferredDebit'],
  // A source that admits it does not know, or says the range holds both, gives "unknown".
  ['debitcredit', 'unknown'],
  ['creditdebit', 'unknown'],
  ['unknown', 'unknown'],
  ['combo', 'unknown'],
]);

const YES = new Set(['y', 'yes', 'true', 't', '1']);
const NO = new Set(['n', 'no', 'false', 'f', '0']);

/**
 * Reads a funding label. Returns undefined for a label the table does not know, so that the
 * caller can count it and omit the field rather than guess.
 *
 * @example fundingTypeFor('Charge Card') // 'chargeCard'
 */
export function fundingTypeFor(label: string): FundingType | undefined {
  return FUNDING_LABELS.get(labelKey(label));
}

/**
 * Reads a prepaid flag ("Y", "true", "0"...). Returns undefined when the flag is not a yes/no.
 *
 * @example prepaidFlag('y') // true
 */
export function prepaidFlag(label: string): boolean | undefined {
  const value = label.trim().toLowerCase();
  if (YES.has(value)) return true;
  if (NO.has(value)) return false;
  return undefined;
}

/**
 * Product words that make a card commercial (docs/card-bin.md "The answer": business, corporate, purchasing, fleet,
 * commercial levels). Matched as whole words so that "CORPORATE" counts and "CORPUS" does not.
 */
const COMMERCIAL_WORDS =
  /\b(business|corporate|corp|commercial|purchasing|purchase|procurement|fleet|company|enterprise|government|govt|professional|b2b|sme|smallbusiness)\b/i;

/**
 * Category of a product label: commercial when it names a business product, consumer otherwise.
 *
 * @example categoryFor('VISA SIGNATURE BUSINESS') // 'commercial'
 * @example categoryFor('PLATINUM') // 'consumer'
 */
export function categoryFor(productLabel: string): Category {
  return COMMERCIAL_WORDS.test(productLabel.replace(/[_\-/]+/g, ' ')) ? 'commercial' : 'consumer';
}

/** Whether a product label says the card is prepaid ("PREPAID", "PREPAID RELOADABLE", ...). */
export function productSaysPrepaid(productLabel: string): boolean {
  return /\bpre-?paid\b/i.test(productLabel);
}

/**
 * What the funding type alone supports about anonymity: a credit, debit or charge card is tied to
 * a known account holder; a prepaid card may or may not be anonymous, which no public list says.
 */
export function anonymousPrepaidFor(fundingType: FundingType): AnonymousPrepaid | undefined {
  switch (fundingType) {
    case 'credit':
    case 'debit':
    case 'chargeCard':
    case 'deferredDebit':
      return 'notPrepaidOrNonAnonymous';
    case 'prepaid':
      return 'unknown';
    case 'unknown':
      return undefined;
  }
}
