/**
 * Masks a card number to its first 6 and last 4 digits: `444433******1111`. The most of a card
 * number that may appear in a log line, a KV key or value, or an answer (PCI DSS 3.4).
 */
export function maskPan(pan: string): string {
  if (pan.length <= 10) return '*'.repeat(pan.length);
  return `${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`;
}
