/**
 * Reduces a free-text label to the key the label tables are indexed by: lower case, accents
 * dropped, everything but letters and digits removed. "MASTER CARD", "Master-Card" and
 * "mastercard" all become "mastercard", so the tables list each spelling once.
 *
 * @example labelKey('Diners Club International') // 'dinersclubinternational'
 */
export function labelKey(label: string): string {
  return label
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}
