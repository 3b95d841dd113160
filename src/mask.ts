/**
 * How many leading digits a masked card number may show: at most 6 (PCI DSS allows the first 6
 * and last 4), and never so many that fewer than 5 digits stay hidden: with the Luhn check digit,
 * 4 hidden digits of a short number leave only 1,000 candidates, 1 hidden digit exactly one.
 */
export function visibleLeadingDigits(length: number): number {
  return Math.min(6, Math.max(0, length - 9));
}

/**
 * Masks a card number to its first 6 (fewer for a short number) and last 4 digits:
 * `444433******1111`. The most of a card number that may appear in a log line, a KV key or
 * value, or an answer.
 */
export function maskPan(pan: string): string {
  if (pan.length <= 9) return '*'.repeat(pan.length);
  const leading = visibleLeadingDigits(pan.length);
  return `${pan.slice(0, leading)}${'*'.repeat(pan.length - leading - 4)}${pan.slice(-4)}`;
}
