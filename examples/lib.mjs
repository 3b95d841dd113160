// Shared by the examples (npm run try:bin, try:tokens, try:3ds, try:live): a merchant's server
// calling card-edge with Node's global fetch and nothing else. Each call prints the request and
// the answer briefly, and fails (the script then exits 1) on any status other than the expected one.

/** The service, `npm start` by default. */
export const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:8787').replace(/\/+$/, '');

/** The local test merchant of .dev.vars.example (docs/configuration.md "Local test merchants"). */
export const BASIC = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;

export const CARD_BIN_HEADERS = { Authorization: BASIC, 'Content-Type': 'application/json', 'WP-Api-Version': '1' };
export const THREEDS = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
export const THREEDS_HEADERS = { Authorization: BASIC, Accept: THREEDS, 'Content-Type': THREEDS };
export const TOKENS = 'application/vnd.worldpay.tokens-v1.hal+json';
export const TOKENS_HEADERS = { Authorization: BASIC, Accept: TOKENS, 'Content-Type': TOKENS };

const WIDTH = Number(process.env.EXAMPLE_WIDTH ?? 160);

/** One line of at most WIDTH characters, card numbers masked to their first 6 and last 4 digits. */
function brief(text) {
  const flat = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\d{13,19}/g, (pan) => `${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`);
  return flat.length > WIDTH ? `${flat.slice(0, WIDTH - 1)}…` : flat;
}

/**
 * One request. `json` is sent as JSON, `form` as a form post (a browser's); `expect` is the status
 * that must come back. Answers `{status, headers, text, json}` (`json` when the body is JSON).
 */
export async function call(method, url, { headers = {}, json, form, expect = 200 } = {}) {
  const target = new URL(url, BASE_URL);
  let body;
  if (json !== undefined) body = JSON.stringify(json);
  if (form !== undefined) {
    body = new URLSearchParams(form).toString();
    headers = { 'Content-Type': 'application/x-www-form-urlencoded', ...headers };
  }
  console.log(`→ ${method} ${target.pathname}${target.search}${body !== undefined ? ` ${brief(body)}` : ''}`);
  const response = await fetch(target, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  let parsed;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // an HTML page
  }
  const title = /<title>([^<]*)<\/title>/.exec(text)?.[1];
  const shown = parsed !== undefined ? JSON.stringify(parsed) : title !== undefined ? `HTML page "${title}"` : text;
  console.log(`← ${response.status} ${brief(shown)}`);
  if (response.status !== expect) {
    throw new Error(`${method} ${target.pathname}: expected ${expect}, got ${response.status}: ${text.slice(0, 500)}`);
  }
  return { status: response.status, headers: response.headers, text, json: parsed };
}

/** Fails the example unless `condition` holds. */
export function check(condition, what) {
  if (!condition) throw new Error(`unexpected answer: ${what}`);
}

/** A step's title. */
export function step(title) {
  console.log(`\n# ${title}`);
}

/** A short random suffix, so that every run makes its own transactions, namespaces and cards. */
export function runId() {
  return Math.random().toString(36).slice(2, 8);
}

/** A Luhn-valid card number: `prefix`, random digits, the check digit. */
export function cardNumber(prefix, length = 16) {
  let digits = prefix;
  while (digits.length < length - 1) digits += String(Math.floor(Math.random() * 10));
  for (let d = 0; d <= 9; d++) if (luhnValid(`${digits}${d}`)) return `${digits}${d}`;
  throw new Error('unreachable');
}

export function luhnValid(number) {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** Runs an example: exit code 0 when every step answered as expected, else 1 with the reason. */
export function run(name, main) {
  main().then(
    () => console.log(`\n✔ ${name}: every answer as expected`),
    (e) => {
      console.error(`\n✘ ${name}: ${e instanceof Error ? e.message : String(e)}`);
      if (e?.cause) console.error(`  ${e.cause.code ?? e.cause}: is the service running? (BASE_URL ${BASE_URL})`);
      process.exitCode = 1;
    },
  );
}
