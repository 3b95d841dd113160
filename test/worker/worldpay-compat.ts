import { Validator } from '@cfworker/json-schema';
import { inject } from 'vitest';
import type { DocOperation, JsonSchema } from '../compat/worldpay-types';

/**
 * Checks an answer of this service against Worldpay's published response schema for its
 * operation and status (the documents are read in the vitest config, see test/compat). Every
 * integration test's answers go through it (`call` in helpers.ts), so any answer a Worldpay
 * client could not read fails the test that got it:
 *
 * - the body must validate against the documented schema for the status (statuses the documents
 *   do not list, such as 401 or 406, have nothing to check);
 * - a field the document names must sit where the document puts it: a documented field found at
 *   another place fails, even where the schema would let an extra property through.
 *
 * The few places where this service keeps a field Worldpay's document does not have at that place
 * are listed in {@link KNOWN_EXTRAS}, each with its reason (and in docs/compatibility.md "Differences").
 */

/** `path.to.field`: why this service may answer it although the document puts that name elsewhere. */
export const KNOWN_EXTRAS: Record<string, string> = {
  'paymentInstrument.countryCode':
    "docs/tokens.md lists it in the token answer; Worldpay's rendered v3 GET reference shows it there too, its YAML only under billingAddress",
};

/**
 * Values outside a documented enum that this service keeps on purpose, by operation and place;
 * `versions`, when given, are the versions of the API (by the answer's media type) that may get
 * them: an answer in any other version (v3, the documents' own) is checked as it is.
 */
export const KNOWN_VALUES: {
  operationId: string;
  at: RegExp;
  values: readonly unknown[];
  standIn: unknown;
  versions?: readonly number[];
  reason: string;
}[] = [
  {
    operationId: 'verify',
    at: /^#\/outcome$/,
    values: ['bypassed'],
    standIn: 'authenticated',
    versions: [1, 2],
    reason:
      "docs/threeds.md (Test magic values): the test scenario 3ds2-bypassed-after-challenge verifies as bypassed in v1 and v2 (Worldpay's v3 verify enum lacks it: v3 clients get unavailable); only a merchant who picks that test name sees it",
  },
  {
    operationId: 'authenticate',
    at: /^#\/outcome$/,
    values: ['decoupled'],
    standIn: 'challenged',
    reason:
      'docs/compatibility.md (Decoupled): an extension; only a request that allows decoupled authentication (`decoupled.maxMinutes`) can get it',
  },
  {
    operationId: 'verify',
    at: /^#\/outcome$/,
    values: ['decoupled'],
    standIn: 'unavailable',
    reason:
      'docs/compatibility.md (Decoupled): an extension; verification of a decoupled authentication whose issuer has not answered yet',
  },
  {
    operationId: 'panLookup',
    at: /^#\/brand\/\d+$/,
    values: ['mir', 'rupay', 'verve', 'girocard', 'bancomat', 'mada', 'ebt'],
    standIn: 'visa',
    reason:
      "docs/bin-data.md (Normalisation): domestic schemes beyond Worldpay's list, named where the BIN data names them",
  },
];

/** Worldpay's documents, or null when they are not beside the project (docs/compatibility.md). */
const docs = inject('worldpay');
const validators = new Map<JsonSchema, Validator>();

/** The documented operation for a method and path of this service, if it is one. */
export function operationFor(method: string, path: string): DocOperation | undefined {
  return docs?.operations.find((op) => op.method === method && new RegExp(op.pathPattern).test(path));
}

/** Throws, naming every problem, when the answer is not one Worldpay's document allows. */
export async function expectWorldpayShape(method: string, url: string, response: Response): Promise<void> {
  const path = new URL(url).pathname;
  const op = operationFor(method, path);
  const schema = op?.responses[String(response.status)];
  if (!op || !schema || response.status === 204) return;
  const body: unknown = await response.clone().json();
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema, '7', false);
    validators.set(schema, validator);
  }
  // A value kept on purpose is checked as its documented stand-in, so everything else still is.
  const result = validator.validate(withStandIns(op.operationId, versionOf(response), body));
  const problems = result.valid
    ? []
    : result.errors
        .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf')
        .map((e) => `${e.instanceLocation}: ${e.error}`);
  problems.push(...misplacedFields(schema, body));
  if (problems.length > 0) {
    throw new Error(
      `${method} ${path} ${response.status} does not match Worldpay's ${op.operationId} answer:\n- ${problems.join('\n- ')}\n${JSON.stringify(body)}`,
    );
  }
}

/** The version of a 3DS or Tokens answer, from its media type (`…-v3.hal+json`); undefined for others. */
function versionOf(response: Response): number | undefined {
  const m = /-v(\d+)\.hal\+json/i.exec(response.headers.get('Content-Type') ?? '');
  return m ? Number(m[1]) : undefined;
}

/**
 * A copy of the body with each value listed in KNOWN_VALUES for the operation (and the answer's
 * version) replaced by its stand-in.
 */
function withStandIns(operationId: string, version: number | undefined, body: unknown): unknown {
  const known = KNOWN_VALUES.filter(
    (k) => k.operationId === operationId && (k.versions === undefined || k.versions.includes(version ?? 1)),
  );
  const copy = (node: unknown, at: string): unknown => {
    const kept = known.find((k) => k.at.test(at) && k.values.includes(node));
    if (kept) return kept.standIn;
    if (Array.isArray(node)) return node.map((item, i) => copy(item, `${at}/${i}`));
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, copy(v, `${at}/${k}`)]));
  };
  return copy(body, '#');
}

/** Every place the schema declares each property name: `''` for the top, `a.b`, `list.*`. */
export function declaredPlaces(
  schema: unknown,
  at = '',
  places = new Map<string, Set<string>>(),
): Map<string, Set<string>> {
  if (typeof schema !== 'object' || schema === null) return places;
  const s = schema as {
    properties?: Record<string, unknown>;
    items?: unknown;
    anyOf?: unknown[];
    oneOf?: unknown[];
    allOf?: unknown[];
  };
  for (const [name, child] of Object.entries(s.properties ?? {})) {
    places.set(name, (places.get(name) ?? new Set()).add(at));
    declaredPlaces(child, at === '' ? name : `${at}.${name}`, places);
  }
  if (s.items !== undefined) declaredPlaces(s.items, `${at}.*`, places);
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) declaredPlaces(branch, at, places);
  return places;
}

/** Documented names found at a place the document does not put them (HAL `_links` aside). */
export function misplacedFields(schema: JsonSchema, body: unknown): string[] {
  const places = declaredPlaces(schema);
  const found: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) node.forEach((item) => walk(item, `${at}.*`));
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    for (const [name, value] of Object.entries(node)) {
      if (name === '_links') continue;
      const full = at === '' ? name : `${at}.${name}`;
      const documented = places.get(name);
      if (documented && !documented.has(at) && !(full in KNOWN_EXTRAS)) {
        found.push(
          `${full}: Worldpay documents "${name}" at ${[...documented].map((p) => (p === '' ? 'the top level' : p)).join(', ')}`,
        );
      }
      walk(value, full);
    }
  };
  walk(body, '');
  return found;
}
