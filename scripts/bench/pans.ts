import type { SourceRow } from '../bin-data/source-row';
import { mulberry32 } from './synthetic-bins';

/** Share of the bench PANs drawn inside an accepted row's range; the rest are uniform noise. */
const IN_ROW_SHARE = 0.8;

/**
 * Appends the Luhn check digit to a 15-digit payload. Counting from the right of the finished
 * 16-digit number the check digit is not doubled, so the payload's last digit is.
 */
export function withLuhnCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = payload.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = payload.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return payload + String((10 - (sum % 10)) % 10);
}

/**
 * `count` Luhn-valid 16-digit PANs, deterministic for a seed: 80% start with a random key of a
 * random accepted row (so most lookups hit data), 20% are uniform with a first digit 1–9 (so
 * misses and scheme fallbacks are exercised too).
 */
export function benchPans(rows: readonly SourceRow[], count: number, seed: number): string[] {
  const rand = mulberry32(seed);
  const digits = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += String(Math.floor(rand() * 10));
    return s;
  };
  const pans = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    let head: string;
    if (rows.length > 0 && rand() < IN_ROW_SHARE) {
      const row = rows[Math.floor(rand() * rows.length)]!;
      head = String(row.start + Math.floor(rand() * (row.end - row.start + 1))).padStart(8, '0');
    } else {
      head = String(1 + Math.floor(rand() * 9)) + digits(7);
    }
    pans[i] = withLuhnCheckDigit(head + digits(7));
  }
  return pans;
}
