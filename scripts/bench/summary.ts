/** The benches' summaries of several runs: min / median / max, and their formatting for the tables. */

export function stats(values: number[]): { min: number; median: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s[s.length - 1]! };
}

export function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** `min / **median** / max`, as every table of docs/benchmarks.md prints them. */
export function triple(values: number[], digits = 1): string {
  const { min, median, max } = stats(values);
  return `${fmt(min, digits)} / **${fmt(median, digits)}** / ${fmt(max, digits)}`;
}
