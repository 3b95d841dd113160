// Turns the EMV field rules (emv-rules.ts) into JSON Schemas (draft 2020-12), one per
// message type x protocol version x scenario (device channel, message category).
// No dependencies; the schemas only use keywords that @cfworker/json-schema and Ajv both
// understand. Formats the validators do not know are expressed as patterns.
import {
  DEVICE_CHANNEL,
  MESSAGE_CATEGORY,
  MESSAGES,
  OBJECTS,
  type Category,
  type Channel,
  type Condition,
  type EmvFormat,
  type EmvMessageType,
  type EmvVersion,
  type FieldRule,
  type Inclusion,
} from './emv-rules';

export type JsonSchema = { [keyword: string]: unknown };

export interface EmvScenario {
  channel: Channel;
  category: Category;
}

export interface EmvSchemaOptions {
  /** Allow properties that are not in the table for the scenario (default false: a typo is an error). */
  additionalProperties?: boolean;
  /** Pin deviceChannel / messageCategory (when the message has them) to the scenario's values (default true). */
  pinScenario?: boolean;
}

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const MM = '(0[1-9]|1[0-2])';
const DD = '(0[1-9]|[12][0-9]|3[01])';
const HHMM = '([01][0-9]|2[0-3])[0-5][0-9]';

/** Format -> schema fragment. Patterns where the validator has no (or a different) format. */
const FORMAT: Record<EmvFormat, JsonSchema> = {
  uuid: { pattern: UUID },
  url: { pattern: '^https?://' },
  urlHttps: { pattern: '^https://' },
  email: { format: 'email' },
  ip: { anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] },
  // 3-digit ISO 3166-1 numeric; 901-999 are not valid
  countryCode: { pattern: '^(?!9(?:0[1-9]|[1-9][0-9]))[0-9]{3}$' },
  // 3-digit ISO 4217 numeric; 955-964 and 999 cannot be used
  currency: { pattern: '^(?!(?:95[5-9]|96[0-4]|999)$)[0-9]{3}$' },
  validVersion: { pattern: '^2\\.[0-9]+\\.[0-9]+$' },
  'iso3166-2': { pattern: '^[A-Za-z0-9]{1,3}$' },
  yymm: { pattern: `^[0-9]{2}${MM}$` },
  yyyymmdd: { pattern: `^[0-9]{4}${MM}${DD}$` },
  yyyymmddhhmm: { pattern: `^[0-9]{4}${MM}${DD}${HHMM}$` },
  yyyymmddhhmmss: { pattern: `^[0-9]{4}${MM}${DD}${HHMM}[0-5][0-9]$` },
};

// --- numeric string ranges -> regular expression ----------------------------------------
const isAll = (s: string, d: string): boolean => [...s].every((c) => c === d);
const digitClass = (a: number, b: number): string => (a === b ? String(a) : b === a + 1 ? `[${a}${b}]` : `[${a}-${b}]`);
const anyDigits = (n: number): string => (n === 0 ? '' : n === 1 ? '[0-9]' : `[0-9]{${n}}`);

/** Regex (unanchored) for all digit strings of the same length between lo and hi inclusive. */
function sameWidthRange(lo: string, hi: string): string {
  if (lo.length === 0) return '';
  if (lo === hi) return lo;
  const n = lo.length - 1;
  const a = Number(lo[0]);
  const b = Number(hi[0]);
  const loRest = lo.slice(1);
  const hiRest = hi.slice(1);
  if (a === b) return `${a}${sameWidthRange(loRest, hiRest)}`;
  const parts: string[] = [];
  let from = a;
  let to = b;
  if (!isAll(loRest, '0')) {
    parts.push(`${a}${sameWidthRange(loRest, '9'.repeat(n))}`);
    from = a + 1;
  }
  let upper: string | undefined;
  if (!isAll(hiRest, '9')) {
    upper = `${b}${sameWidthRange('0'.repeat(n), hiRest)}`;
    to = b - 1;
  }
  if (from <= to) parts.push(`${digitClass(from, to)}${anyDigits(n)}`);
  if (upper !== undefined) parts.push(upper);
  return parts.length === 1 ? parts[0]! : `(?:${parts.join('|')})`;
}

/** Anchored regex for a numeric string in [min, max]; zero padded to `width` when given, else without leading zeros. */
export function integerRangePattern(min: number, max: number, width?: number): string {
  if (width !== undefined)
    return `^${sameWidthRange(String(min).padStart(width, '0'), String(max).padStart(width, '0'))}$`;
  const parts: string[] = [];
  const lo = String(min);
  const hi = String(max);
  for (let w = lo.length; w <= hi.length; w++) {
    const a = w === lo.length ? lo : `1${'0'.repeat(w - 1)}`;
    const b = w === hi.length ? hi : '9'.repeat(w);
    parts.push(sameWidthRange(a, b));
  }
  return `^(?:${parts.join('|')})$`;
}

// --- conditions -> schema ---------------------------------------------------------------
/** Schema that holds when `inner` holds for the (possibly nested, dotted) field. */
function atPath(path: string, inner: JsonSchema | null): JsonSchema {
  const [head, ...rest] = path.split('.');
  if (head === undefined) throw new Error('empty path');
  if (rest.length === 0) return inner ? { properties: { [head]: inner }, required: [head] } : { required: [head] };
  return { properties: { [head]: atPath(rest.join('.'), inner) }, required: [head] };
}

export function conditionSchema(c: Condition): JsonSchema {
  if ('all' in c) return { allOf: c.all.map(conditionSchema) };
  if ('any' in c) return { anyOf: c.any.map(conditionSchema) };
  if ('not' in c) return { not: conditionSchema(c.not) };
  if ('present' in c) return atPath(c.present, null);
  if ('in' in c) return atPath(c.field, { enum: c.in });
  return atPath(c.field, { const: c.equals });
}

// --- fields -> schema -------------------------------------------------------------------
function addPatterns(s: JsonSchema, patterns: string[]): void {
  const [first, ...rest] = patterns;
  if (first === undefined) return;
  s['pattern'] = first;
  if (rest.length)
    s['allOf'] = [...((s['allOf'] as JsonSchema[] | undefined) ?? []), ...rest.map((p) => ({ pattern: p }))];
}

/** Constraints of a string value (the field itself, or each element of an array of strings). */
function stringSchema(r: FieldRule): JsonSchema {
  const s: JsonSchema = { type: 'string' };
  if (typeof r.const === 'string') s['const'] = r.const;
  if (r.enum) {
    if (r.enum.length === 1) s['const'] = r.enum[0];
    else s['enum'] = r.enum;
  }
  const patterns: string[] = [];
  if (r.pattern !== undefined) patterns.push(r.pattern);
  if (r.format) {
    const f = FORMAT[r.format];
    if (typeof f['pattern'] === 'string') patterns.push(f['pattern']);
    else Object.assign(s, f);
  }
  if (r.integerRange) patterns.push(integerRangePattern(r.integerRange.min, r.integerRange.max, r.length));
  addPatterns(s, patterns);
  if (r.length !== undefined) {
    s['minLength'] = r.length;
    s['maxLength'] = r.length;
  }
  if (r.minLength !== undefined) s['minLength'] = r.minLength;
  if (r.maxLength !== undefined) s['maxLength'] = r.maxLength;
  return s;
}

function fieldSchema(
  r: FieldRule,
  version: EmvVersion,
  scenario: EmvScenario,
  opts: Required<EmvSchemaOptions>,
  seen: string[],
): JsonSchema {
  let s: JsonSchema;
  switch (r.type) {
    case 'string':
      s = stringSchema(r);
      break;
    case 'boolean':
      s = { type: 'boolean' };
      if (typeof r.const === 'boolean') s['const'] = r.const;
      break;
    case 'json':
      // any JSON value; the table's maxLength is for the serialized value and is not checked here
      s = {};
      break;
    case 'object':
      s = objectRef(r.object, version, scenario, opts, seen);
      break;
    case 'array': {
      const items = r.items === 'object' ? objectRef(r.object, version, scenario, opts, seen) : stringSchema(r);
      s = { type: 'array', items };
      if (r.minItems !== undefined) s['minItems'] = r.minItems;
      if (r.maxItems !== undefined) s['maxItems'] = r.maxItems;
      break;
    }
  }
  if (r.conditionNote) s['$comment'] = r.conditionNote;
  return s;
}

function objectRef(
  name: string | undefined,
  version: EmvVersion,
  scenario: EmvScenario,
  opts: Required<EmvSchemaOptions>,
  seen: string[],
): JsonSchema {
  const rules = name !== undefined ? OBJECTS[name]?.[version] : undefined;
  if (!rules || name === undefined) return { type: 'object' }; // no table in the documentation: free-form
  if (seen.includes(name)) throw new Error(`recursive object ${name}`);
  return objectSchema(rules, version, scenario, opts, [...seen, name]);
}

/** Inclusion of a rule in a scenario; undefined when the field does not apply to it. */
export function inclusionOf(r: FieldRule, scenario: EmvScenario): Inclusion | undefined {
  return r.inclusion[scenario.channel]?.[scenario.category];
}

function objectSchema(
  rules: FieldRule[],
  version: EmvVersion,
  scenario: EmvScenario,
  opts: Required<EmvSchemaOptions>,
  seen: string[],
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const allOf: JsonSchema[] = [];
  for (const r of rules) {
    const inc = inclusionOf(r, scenario);
    if (inc === undefined) continue;
    properties[r.name] = fieldSchema(r, version, scenario, opts, seen);
    if (inc === 'R') required.push(r.name);
    if (inc === 'C' && r.requiredIf) allOf.push({ if: conditionSchema(r.requiredIf), then: { required: [r.name] } });
  }
  if (opts.pinScenario) {
    const dc = properties['deviceChannel'];
    if (dc) dc['const'] = DEVICE_CHANNEL[scenario.channel];
    const mc = properties['messageCategory'];
    if (mc) mc['const'] = MESSAGE_CATEGORY[scenario.category];
  }
  const s: JsonSchema = { type: 'object', properties };
  if (required.length) s['required'] = required;
  if (allOf.length) s['allOf'] = allOf;
  if (!opts.additionalProperties) s['additionalProperties'] = false;
  return s;
}

/** JSON Schema (draft 2020-12) for one message type, protocol version and scenario. */
export function emvJsonSchema(
  message: EmvMessageType,
  version: EmvVersion,
  scenario: EmvScenario,
  options: EmvSchemaOptions = {},
): JsonSchema {
  const rules = MESSAGES[message][version];
  if (!rules) throw new Error(`no ${message} table for ${version}`);
  const opts: Required<EmvSchemaOptions> = {
    additionalProperties: options.additionalProperties ?? false,
    pinScenario: options.pinScenario ?? true,
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `${message} ${version} ${scenario.channel}/${scenario.category}`,
    ...objectSchema(rules, version, scenario, opts, []),
  };
}

/** Scenario of a message from its deviceChannel / messageCategory values (undefined if not recognisable). */
export function scenarioOf(msg: { deviceChannel?: unknown; messageCategory?: unknown }): EmvScenario | undefined {
  const channel = (Object.keys(DEVICE_CHANNEL) as Channel[]).find((k) => DEVICE_CHANNEL[k] === msg.deviceChannel);
  const category = (Object.keys(MESSAGE_CATEGORY) as Category[]).find(
    (k) => MESSAGE_CATEGORY[k] === msg.messageCategory,
  );
  return channel && category ? { channel, category } : undefined;
}
