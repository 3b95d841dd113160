// The extractor of src/emv/emv-rules.ts: reads the provider's field tables (HTML) from a clone of
// the 3dsecure.io documentation repository via `git show`, and writes the rules as data.
//
//   npx tsx scripts/emv/extract-emv-rules.ts --repo <clone>            # writes src/emv/emv-rules.ts
//   npx tsx scripts/emv/extract-emv-rules.ts --repo <clone> --review   # prints what needs a human look
//
// Licence rule: only facts are emitted (names, types, lengths, patterns, enum values,
// formats, inclusion, conditions in structured form, short scheme notes in our own
// words). Description prose, example values and HTML never reach the output; the
// condition sentences are parsed into Condition objects, and the few that cannot be
// parsed or that the hand-check found wrong are replaced by the OVERRIDES below.
import { writeFileSync } from 'node:fs';
import { gitHead, readTable, type RawRow, type RawVariant } from './emv-tables';

type Channel = 'APP' | 'BRW' | '3RI';
type Category = 'PA' | 'NPA';
type Inclusion = 'R' | 'C' | 'O';
type Version = '2.1.0' | '2.2.0' | '2.3.1';
type Condition =
  | { field: string; in: string[] }
  | { field: string; equals: string | boolean }
  | { present: string }
  | { not: Condition }
  | { all: Condition[] }
  | { any: Condition[] };

const CHANNELS: Channel[] = ['APP', 'BRW', '3RI'];
const CATEGORIES: Category[] = ['PA', 'NPA'];
const DC: Record<Channel, string> = { APP: '01', BRW: '02', '3RI': '03' };
const MC: Record<Category, string> = { PA: '01', NPA: '02' };
const ALL: Version[] = ['2.1.0', '2.2.0', '2.3.1'];

// ---------------------------------------------------------------------------
// Which table is which (from source/specification_{210,220,231}.rst)
// ---------------------------------------------------------------------------
interface TableSpec {
  kind: 'message' | 'object';
  name: string;
  file: string; // basename in source/_static
  versions: Version[];
}
const S = (kind: 'message' | 'object', name: string, file: string, versions: Version[]): TableSpec => ({
  kind,
  name,
  file,
  versions,
});
const TABLES: TableSpec[] = [
  S('message', 'AReq', 'areq_210.html', ['2.1.0']),
  S('message', 'AReq', 'areq_220.html', ['2.2.0']),
  S('message', 'AReq', 'areq_231.html', ['2.3.1']),
  S('message', 'ARes', 'ares_210.html', ['2.1.0']),
  S('message', 'ARes', 'ares_220.html', ['2.2.0']),
  S('message', 'ARes', 'ares_231.html', ['2.3.1']),
  S('message', 'RReq', 'rreq_210.html', ['2.1.0']),
  S('message', 'RReq', 'rreq_220.html', ['2.2.0']),
  S('message', 'RReq', 'rreq_231.html', ['2.3.1']),
  S('message', 'CReq', 'creq.html', ALL),
  S('message', 'CRes', 'cres_210.html', ['2.1.0']),
  S('message', 'CRes', 'cres_220.html', ['2.2.0']),
  S('message', 'CRes', 'cres_231.html', ['2.3.1']),
  S('message', 'Erro', 'erro_210.html', ['2.1.0']),
  S('message', 'Erro', 'erro_220.html', ['2.2.0']),
  S('message', 'Erro', 'erro_231.html', ['2.3.1']),
  S('message', 'CRD', 'crd_220.html', ['2.1.0', '2.2.0']),
  S('message', 'CRD', 'crd.html', ['2.3.1']),
  S('message', 'PreauthRequest', 'preauth.html', ALL),
  S('message', 'PostauthRequest', 'postauth.html', ALL),
  // acctinfo_210.html exists but holds an empty table; the 2.1.0 page includes acctinfo.html.
  S('object', 'AcctInfo', 'acctinfo.html', ALL),
  S('object', 'MerchantRiskIndicator', 'merchantriskindicator.html', ALL),
  S('object', 'PhoneNumber', 'phonenumber.html', ALL),
  S('object', 'MessageExtension', 'messageextension.html', ALL),
  S('object', 'DeviceRenderOptions', 'devicerenderoptions.html', ALL),
  S('object', 'AcsRenderingType', 'acsrenderingtype.html', ALL),
  S('object', 'ThreeDSRequestorAuthenticationInfo', 'threedsrequestorauthenticationinfo_210.html', ['2.1.0']),
  S('object', 'ThreeDSRequestorAuthenticationInfo', 'threedsrequestorauthenticationinfo_220.html', ['2.2.0']),
  S('object', 'ThreeDSRequestorAuthenticationInfo', 'threedsrequestorauthenticationinfo_231.html', ['2.3.1']),
  // the 2.1.0 and 2.2.0 pages both include the _220 file
  S('object', 'ThreeDSRequestorPriorAuthenticationInfo', 'threedsrequestorpriorauthenticationinfo_220.html', [
    '2.1.0',
    '2.2.0',
  ]),
  S('object', 'ThreeDSRequestorPriorAuthenticationInfo', 'threedsrequestorpriorauthenticationinfo.html', ['2.3.1']),
  S('object', 'RecurringInd', 'recurringind_231.html', ['2.3.1']),
  S('object', 'SellerInfo', 'sellerinfo_231.html', ['2.3.1']),
];

// ---------------------------------------------------------------------------
// Hand-check corrections. Key: `${file}#${field}`. Each entry says why.
// ---------------------------------------------------------------------------
interface Override {
  pattern?: string;
  requiredIf?: Condition | null; // null: drop the parsed condition
  conditionNote?: string;
  note?: string;
}
const OVERRIDES: Record<string, Override> = {
  // Conditions whose clauses are ANDed rather than ORed, and names that live in the RecurringInd object.
  'areq_231.html#recurringAmount': {
    requiredIf: {
      all: [
        {
          any: [
            { field: 'threeDSRequestorAuthenticationInd', in: ['02', '03'] },
            { field: 'threeRIInd', in: ['01', '02'] },
          ],
        },
        { field: 'recurringInd.amountInd', equals: '01' },
      ],
    },
    note: 'table lists the two clauses separately; read as: recurring/instalment transaction AND fixed amount (recurringInd.amountInd = 01)',
  },
  'areq_231.html#recurringFrequency': {
    requiredIf: { field: 'recurringInd.frequencyInd', equals: '01' },
    note: 'frequencyInd is the RecurringInd member',
  },
  'areq_231.html#recurringDate': {
    requiredIf: { field: 'recurringInd.frequencyInd', equals: '01' },
    note: 'frequencyInd is the RecurringInd member',
  },
  // RReq conditions that refer to acsDecConInd, a field of the ARes (not present in RReq).
  'rreq_220.html#interactionCounter': {
    requiredIf: null,
    conditionNote:
      'required unless the authentication was decoupled (ARes acsDecConInd = Y); cross-message, not enforced',
  },
  'rreq_231.html#interactionCounter': {
    requiredIf: null,
    conditionNote:
      'required unless the authentication was decoupled (ARes acsDecConInd = Y); cross-message, not enforced',
  },
  'rreq_220.html#acsRenderingType': {
    requiredIf: null,
    conditionNote:
      'required unless the authentication was decoupled (ARes acsDecConInd = Y); cross-message, not enforced',
  },
  'rreq_231.html#acsRenderingType': {
    requiredIf: null,
    conditionNote:
      'required unless the authentication was decoupled (ARes acsDecConInd = Y); cross-message, not enforced',
  },
  // Erro sdkTransID: the per-scenario inclusion says Optional for APP (its only channel); the
  // condition text (App channel and errorMessageType in AReq/ARes/CReq/CRes/RReq/RRes) is only
  // attached to the non-App scenarios. Kept Optional, condition recorded as a note.
  'erro_220.html#sdkTransID': {
    conditionNote:
      'tables: Optional for APP; underlying rule is required for App-channel errors about AReq/ARes/CReq/CRes/RReq/RRes (by errorMessageType); not enforced',
  },
  'erro_231.html#sdkTransID': {
    conditionNote:
      'tables: Optional for APP; underlying rule is required for App-channel errors about AReq/ARes/CReq/CRes/RReq/RRes (by errorMessageType); not enforced',
  },
  // Pattern and enumeration disagree; both kept (a validator applying both accepts 01-03 only).
  'areq_231.html#threeDSReqAuthMethodInd': {
    note: 'table pattern allows 01-03 and 80-99, its value list 01-10; both kept, effective set 01-03',
  },
  // Broken regular expressions in the tables.
  'sellerinfo_231.html#sellerAddrState': {
    pattern: '^[A-Za-z0-9]{1,3}$',
    note: 'table regexp ^\\d{1-3}$ is malformed (invalid with the u flag); replaced by 1-3 alphanumerics (ISO 3166-2 subdivision code)',
  },
  'threedsrequestorpriorauthenticationinfo_220.html#threeDSReqPriorAuthMethod': {
    pattern: '^(0[1-4]|[89][0-9])$',
    note: 'table regexp ^(0[1-4])|([89][1-10])$ is unanchored per alternative and has a bad class; intent 01-04, 80-99',
  },
  'threedsrequestorpriorauthenticationinfo.html#threeDSReqPriorAuthMethod': {
    pattern: '^(0[1-5]|[89][0-9])$',
    note: 'table regexp ^(0[1-5])|([89][0-9])$ is unanchored per alternative; intent 01-05, 80-99',
  },
};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------
function pickVariant<T extends RawVariant>(vs: T[], ch: Channel, cat: Category): T | undefined {
  const dc = DC[ch];
  const mc = MC[cat];
  const order: [string | undefined, string | undefined][] = [
    [dc, mc],
    [dc, undefined],
    [undefined, mc],
    [undefined, undefined],
  ];
  for (const [d, m] of order) {
    const v = vs.find((x) => x.deviceChannel === d && x.messageCategory === m);
    if (v) return v;
  }
  return undefined;
}

const INC: Record<string, Inclusion> = { Required: 'R', Conditional: 'C', Optional: 'O' };

// --- condition sentences -> Condition ------------------------------------------------
function parseClause(s: string): Condition {
  const m = /^Required if (.*)$/.exec(s.trim());
  if (!m || m[1] === undefined) throw new Error(`condition: unexpected clause "${s}"`);
  const toks = m[1].match(/\(|\)|\[[^\]]*\]|"[^"]*"|[A-Za-z0-9_.]+/g) ?? [];
  let i = 0;
  const peek = (): string | undefined => toks[i];
  const next = (): string => {
    const t = toks[i++];
    if (t === undefined) throw new Error(`condition: unexpected end in "${s}"`);
    return t;
  };
  const expect = (w: string): void => {
    const t = next();
    if (t !== w) throw new Error(`condition: expected ${w}, got ${t} in "${s}"`);
  };
  const atom = (): Condition => {
    if (peek() === '(') {
      next();
      const e = orExpr();
      expect(')');
      return e;
    }
    const field = next();
    expect('is');
    let neg = false;
    if (peek() === 'not') {
      next();
      neg = true;
    }
    let c: Condition;
    const t = next();
    if (t === 'one') {
      expect('of');
      const list = next();
      if (!list.startsWith('[')) throw new Error(`condition: expected list in "${s}"`);
      c = {
        field,
        in: list
          .slice(1, -1)
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      };
    } else if (t === 'empty') {
      if (!neg) throw new Error(`condition: "is empty" unsupported in "${s}"`);
      return { present: field };
    } else if (t === 'true' || t === 'false') {
      c = { field, equals: t === 'true' };
    } else if (t.startsWith('"')) {
      c = { field, equals: t.slice(1, -1) };
    } else throw new Error(`condition: unexpected token ${t} in "${s}"`);
    return neg ? { not: c } : c;
  };
  const andExpr = (): Condition => {
    const parts = [atom()];
    while (peek() === 'and') {
      next();
      parts.push(atom());
    }
    return parts.length === 1 ? parts[0]! : { all: parts };
  };
  const orExpr = (): Condition => {
    const parts = [andExpr()];
    while (peek() === 'or') {
      next();
      parts.push(andExpr());
    }
    return parts.length === 1 ? parts[0]! : { any: parts };
  };
  const r = orExpr();
  if (i !== toks.length) throw new Error(`condition: trailing tokens in "${s}"`);
  return r;
}

/** Clauses listed on separate lines. In every scenario-specific variant that has more than
 * one line the lines are alternatives (e.g. an APP/BRW indicator vs. a 3RI indicator, or
 * transStatus in [C, D] vs. [Y, N]), so they are ORed; exceptions are in OVERRIDES. */
function parseClauses(clauses: string[]): Condition {
  const cs = clauses.map(parseClause);
  return cs.length === 1 ? cs[0]! : { any: cs };
}

function condFields(c: Condition): string[] {
  if ('all' in c) return c.all.flatMap(condFields);
  if ('any' in c) return c.any.flatMap(condFields);
  if ('not' in c) return condFields(c.not);
  if ('present' in c) return [c.present];
  return [c.field];
}

// --- scheme notes (own wording) ------------------------------------------------------
const SCHEME_RULE: Record<string, string> = {
  'Field is required': 'required',
  'Field is required if available': 'required when available',
  'Field is required unless market restrictions prevent it': 'required unless local market rules prevent it',
};

// --- requirements --------------------------------------------------------------------
function expandEnum(vals: string[]): string[] {
  const out: string[] = [];
  for (const v of vals) {
    const m = /^(\d+)-(\d+)$/.exec(v);
    if (m && m[1] !== undefined && m[2] !== undefined) {
      const w = m[1].length;
      for (let n = parseInt(m[1], 10); n <= parseInt(m[2], 10); n++) out.push(String(n).padStart(w, '0'));
    } else out.push(v);
  }
  return [...new Set(out)];
}

function compact(vals: string[]): string {
  return vals.length > 6
    ? `${vals.slice(0, 3).join(',')}..${vals.slice(-2).join(',')} (${vals.length})`
    : vals.join(',');
}

function parseIntegerString(s: string): { min: number; max: number } {
  const m = /(\d+)\D+?(\d+)\s*$/.exec(s);
  if (!m || m[1] === undefined || m[2] === undefined) throw new Error(`integerString: ${s}`);
  return { min: parseInt(m[1], 10), max: parseInt(m[2], 10) };
}

type Rule = Record<string, unknown> & { name: string };

const review: string[] = [];

function convertRow(spec: TableSpec, row: RawRow): Rule {
  const key = `${spec.file}#${row.name}`;
  const ov = OVERRIDES[key];
  const r: Rule = { name: row.name };
  const req = row.requirements;
  const str = (k: string): string | undefined => {
    const v = req[k];
    return typeof v === 'string' ? v : undefined;
  };
  // type
  const tt = row.typeText;
  let isArray = false;
  if (tt === 'string') r['type'] = 'string';
  else if (tt === 'bool') r['type'] = 'boolean';
  else if (tt === 'json') r['type'] = 'json';
  else if (tt === 'Array of string') {
    r['type'] = 'array';
    r['items'] = 'string';
    isArray = true;
  } else {
    const m = /^(Array of )?(\w+) object$/.exec(tt);
    if (!m || m[2] === undefined) throw new Error(`${key}: unknown type ${tt}`);
    const obj = m[2].charAt(0).toUpperCase() + m[2].slice(1);
    if (m[1]) {
      r['type'] = 'array';
      r['items'] = 'object';
      isArray = true;
    } else r['type'] = 'object';
    r['object'] = obj;
  }
  // requirements
  for (const k of Object.keys(req))
    if (!['maxLength', 'minLength', 'length', 'regexp', 'enum', 'format', 'integerString'].includes(k))
      throw new Error(`${key}: unknown requirement ${k}`);
  const pattern = ov?.pattern ?? str('regexp');
  if (pattern !== undefined) {
    try {
      new RegExp(pattern, 'u');
    } catch {
      review.push(`${key}: pattern invalid with u flag: ${pattern}`);
    }
    r['pattern'] = pattern;
  }
  const en = req['enum'];
  if (Array.isArray(en)) {
    if (r['type'] === 'boolean') {
      if (en.length !== 1 || en[0] !== 'true') throw new Error(`${key}: boolean enum ${en.join()}`);
      r['const'] = true;
    } else {
      const ex = expandEnum(en);
      r['enum'] = ex;
      if (pattern !== undefined) {
        const re = new RegExp(pattern, 'u');
        const bad = ex.filter((x) => !re.test(x));
        if (bad.length) review.push(`${key}: enum values not matching the pattern: ${bad.join(',')}`);
      }
      const keys = expandEnum(row.enumKeys.filter((k) => /^[\w.-]+$/.test(k)));
      const missing = keys.filter((k) => !ex.includes(k));
      if (keys.length && missing.length)
        review.push(`${key}: value-meaning table lists values the enum lacks: ${compact(missing)}`);
    }
  }
  const fmt = str('format');
  if (fmt !== undefined) r['format'] = fmt;
  const num = (k: string): number | undefined => (str(k) !== undefined ? parseInt(str(k)!, 10) : undefined);
  if (isArray) {
    if (num('minLength') !== undefined) r['minItems'] = num('minLength');
    if (num('maxLength') !== undefined) r['maxItems'] = num('maxLength');
    if (num('length') !== undefined) throw new Error(`${key}: length on array`);
  } else {
    if (num('length') !== undefined) r['length'] = num('length');
    if (num('minLength') !== undefined) r['minLength'] = num('minLength');
    if (num('maxLength') !== undefined) r['maxLength'] = num('maxLength');
  }
  const is = str('integerString');
  if (is !== undefined) r['integerRange'] = parseIntegerString(is);
  // inclusion per scenario
  const inclusion: Partial<Record<Channel, Partial<Record<Category, Inclusion>>>> = {};
  const conds = new Map<string, Condition>();
  for (const ch of CHANNELS) {
    if (row.channels.length && !row.channels.includes(ch)) continue;
    for (const cat of CATEGORIES) {
      if (row.categories.length && !row.categories.includes(cat)) continue;
      const text = row.dynamicInclusion.length ? pickVariant(row.dynamicInclusion, ch, cat)?.value : row.inclusion;
      const inc = text !== undefined ? INC[text] : undefined;
      if (!inc) throw new Error(`${key}: no inclusion for ${ch}/${cat}`);
      (inclusion[ch] ??= {})[cat] = inc;
      if (inc === 'C') {
        const v = pickVariant(row.conditions, ch, cat);
        if (!v || !v.clauses?.length) {
          review.push(`${key}: Conditional in ${ch}/${cat} without condition text`);
          continue;
        }
        try {
          conds.set(`${ch}/${cat}`, parseClauses(v.clauses));
        } catch (e) {
          review.push(`${key}: ${(e as Error).message}`);
        }
      }
    }
  }
  r['inclusion'] = inclusion;
  const distinct = [...new Set([...conds.values()].map((c) => JSON.stringify(c)))];
  if (distinct.length > 1)
    review.push(
      `${key}: different conditions per scenario: ${[...conds.entries()].map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}`,
    );
  let requiredIf: Condition | undefined =
    distinct[0] !== undefined ? (JSON.parse(distinct[0]) as Condition) : undefined;
  if (ov && 'requiredIf' in ov) requiredIf = ov.requiredIf ?? undefined;
  if (requiredIf) r['requiredIf'] = requiredIf;
  if (ov?.conditionNote) r['conditionNote'] = ov.conditionNote;
  const schemes = row.schemeRules.map((s) => {
    const note = SCHEME_RULE[s.rule];
    if (!note) review.push(`${key}: unmapped scheme rule (${s.scheme})`);
    return `${s.scheme.toLowerCase()}: ${note ?? 'see source'}`;
  });
  if (schemes.length) r['schemes'] = schemes;
  if (ov?.note) r['note'] = ov.note;
  return r;
}

// ---------------------------------------------------------------------------
// Emit
// ---------------------------------------------------------------------------
const KEY_ORDER = [
  'name',
  'type',
  'items',
  'object',
  'const',
  'enum',
  'pattern',
  'format',
  'length',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'integerRange',
  'inclusion',
  'requiredIf',
  'conditionNote',
  'schemes',
  'note',
];

function lit(v: unknown): string {
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(lit).join(', ')}]`;
  if (v && typeof v === 'object') {
    const ents = Object.entries(v as Record<string, unknown>);
    return `{ ${ents.map(([k, x]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : lit(k)}: ${lit(x)}`).join(', ')} }`;
  }
  throw new Error(`lit: ${String(v)}`);
}

function emitRule(r: Rule): string {
  const keys = Object.keys(r).sort((a, b) => KEY_ORDER.indexOf(a) - KEY_ORDER.indexOf(b));
  for (const k of keys) if (!KEY_ORDER.includes(k)) throw new Error(`emit: key ${k}`);
  return `  { ${keys.map((k) => `${k}: ${lit(r[k])}`).join(', ')} },`;
}

function constName(spec: TableSpec): string {
  return `${spec.kind === 'message' ? 'M' : 'O'}_${spec.name}_${spec.file.replace(/\.html$/, '').replace(/[^A-Za-z0-9]/g, '_')}`;
}

function main(): void {
  const head = gitHead();
  const blocks: string[] = [];
  const messages = new Map<string, string[]>();
  const objects = new Map<string, string[]>();
  const sources: string[] = [];
  const counts: string[] = [];
  for (const spec of TABLES) {
    const path = `source/_static/${spec.file}`;
    const rows = readTable(path);
    const rules = rows.map((row) => convertRow(spec, row));
    const names = new Set(rules.map((x) => x.name));
    if (names.size !== rules.length) review.push(`${spec.file}: duplicate field names`);
    for (const r of rules) {
      const c = r['requiredIf'] as Condition | undefined;
      if (!c) continue;
      for (const f of condFields(c))
        if (!names.has(f.split('.')[0]!))
          review.push(`${spec.file}#${r.name}: condition refers to ${f}, not a field of this table`);
    }
    const cn = constName(spec);
    blocks.push(
      `// ${spec.kind === 'message' ? 'Message' : 'Object'} ${spec.name} ${spec.versions.join(', ')} (${rules.length} fields) - source: ${path}\nconst ${cn}: FieldRule[] = [\n${rules.map(emitRule).join('\n')}\n];\n`,
    );
    counts.push(`${spec.file}: ${rules.length}`);
    // the CReq table lists every protocol version as allowed; pin it to the version it is used for
    const hasVersionEnum = rules.some(
      (x) => x.name === 'messageVersion' && Array.isArray(x['enum']) && (x['enum'] as string[]).length > 1,
    );
    for (const v of spec.versions) {
      const target = spec.kind === 'message' ? messages : objects;
      const list = target.get(spec.name) ?? [];
      list.push(`'${v}': ${hasVersionEnum ? `pinVersion(${cn}, '${v}')` : cn}`);
      target.set(spec.name, list);
      sources.push(`  '${spec.kind === 'message' ? '' : 'object '}${spec.name} ${v}': '${path}',`);
    }
  }
  const out = `// EMV 3-D Secure 2 message field rules, as data.
//
// GENERATED by scripts/emv/extract-emv-rules.ts from the field tables in the 3dsecure.io API documentation
// (github.com/clearhaus/3DSv2-api-documentation, source/_static/*.html, commit ${head}),
// then hand-checked; hand corrections live in the extractor (OVERRIDES), each with its reason.
// Facts only (names, types, lengths, patterns, enumerations, formats, inclusion, conditions
// re-expressed as data, short scheme notes in our own words). No description text is copied.
// Do not edit by hand: change the extractor and re-run it.
//
// Conventions:
// - inclusion: only the channels/categories a field is listed for appear; a field that is not
//   listed for a scenario does not belong in the message for that scenario.
// - requiredIf: applies in the scenarios where inclusion is 'C'. Field names in conditions are
//   siblings in the same message/object; 'a.b' is member b of object field a. Conditions are
//   evaluated on the message itself: {field, equals} / {field, in} are false when the field is absent.
// - type 'array' with items 'string': pattern / enum / length constraints apply to each element,
//   minItems / maxItems to the array. type 'json': any JSON value; its maxLength is the table's limit
//   for the serialized value and is not expressible in JSON Schema (emv-json-schema.ts ignores it).
// - integerRange: a numeric string whose value lies in [min, max] (zero padded when length is set).
// - object: name of a table in OBJECTS; when OBJECTS has no entry for it (the documentation has no
//   table), the object is free-form.

export type EmvVersion = '2.1.0' | '2.2.0' | '2.3.1';
export const EMV_VERSIONS: readonly EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];
export type EmvMessageType = 'AReq' | 'ARes' | 'RReq' | 'CReq' | 'CRes' | 'Erro' | 'CRD' | 'PreauthRequest' | 'PostauthRequest';
export const EMV_MESSAGE_TYPES: readonly EmvMessageType[] = ['AReq', 'ARes', 'RReq', 'CReq', 'CRes', 'Erro', 'CRD', 'PreauthRequest', 'PostauthRequest'];
export type Channel = 'APP' | 'BRW' | '3RI';
export type Category = 'PA' | 'NPA';
export const CHANNELS: readonly Channel[] = ['APP', 'BRW', '3RI'];
export const CATEGORIES: readonly Category[] = ['PA', 'NPA'];
/** deviceChannel value per channel, messageCategory value per category. */
export const DEVICE_CHANNEL: Readonly<Record<Channel, string>> = { APP: '01', BRW: '02', '3RI': '03' };
export const MESSAGE_CATEGORY: Readonly<Record<Category, string>> = { PA: '01', NPA: '02' };
export type Inclusion = 'R' | 'C' | 'O';

export type Condition =
  | { field: string; in: string[] }
  | { field: string; equals: string | boolean }
  | { present: string }
  | { not: Condition }
  | { all: Condition[] }
  | { any: Condition[] };

export type EmvFormat =
  | 'uuid' | 'url' | 'urlHttps' | 'email' | 'ip' | 'countryCode' | 'currency' | 'validVersion' | 'iso3166-2'
  | 'yymm' | 'yyyymmdd' | 'yyyymmddhhmm' | 'yyyymmddhhmmss';

export interface FieldRule {
  name: string;
  type: 'string' | 'boolean' | 'object' | 'array' | 'json';
  /** element type for arrays */
  items?: 'string' | 'object';
  /** OBJECTS table name for type object, or for arrays of objects */
  object?: string;
  const?: string | boolean;
  enum?: string[];
  pattern?: string;
  format?: EmvFormat;
  length?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  integerRange?: { min: number; max: number };
  inclusion: Partial<Record<Channel, Partial<Record<Category, Inclusion>>>>;
  requiredIf?: Condition;
  /** paraphrase of a condition that is not (or not fully) encoded in requiredIf; not enforced */
  conditionNote?: string;
  /** scheme-specific inclusion notes, e.g. 'visa: required' */
  schemes?: string[];
  /** hand-check remark (correction of the source table) */
  note?: string;
}

/** The same table used for several versions, with messageVersion pinned to one of them. */
function pinVersion(rules: FieldRule[], v: EmvVersion): FieldRule[] {
  return rules.map((r) => (r.name === 'messageVersion' ? { ...r, enum: [v] } : r));
}

${blocks.join('\n')}
export const MESSAGES: Record<EmvMessageType, Partial<Record<EmvVersion, FieldRule[]>>> = {
${[...messages.entries()].map(([k, v]) => `  ${k}: { ${v.join(', ')} },`).join('\n')}
};

export const OBJECTS: Record<string, Partial<Record<EmvVersion, FieldRule[]>>> = {
${[...objects.entries()].map(([k, v]) => `  ${k}: { ${v.join(', ')} },`).join('\n')}
};

/** Source table per message/object and version (paths in the documentation repository). */
export const SOURCE_REPOSITORY = 'https://github.com/clearhaus/3DSv2-api-documentation';
export const SOURCE_COMMIT = '${head}';
export const SOURCES: Record<string, string> = {
${sources.join('\n')}
};
`;
  if (process.argv.includes('--review')) {
    console.log(counts.join('\n'));
    console.log(review.length ? review.join('\n') : 'nothing to review');
  } else {
    writeFileSync(new URL('../../src/emv/emv-rules.ts', import.meta.url), out);
    console.log(
      `wrote emv-rules.ts (${TABLES.length} tables); ${review.length} review item(s)${review.length ? ':\n' + review.join('\n') : ''}`,
    );
  }
}

main();
