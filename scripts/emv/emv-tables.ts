// Raw row reader for the provider's field tables (used by extract-emv-rules.ts).
import { execFileSync } from 'node:child_process';
import { byClass, elChildren, find, findAll, hasClass, isEl, parseHtml, text, type El } from './html-tree';

/**
 * A git clone of github.com/clearhaus/3DSv2-api-documentation (the 3dsecure.io API documentation),
 * given as `--repo <path>` or EMV_DOCS_REPO.
 */
function repoArg(): string {
  const at = process.argv.indexOf('--repo');
  const repo = at >= 0 ? process.argv[at + 1] : process.env.EMV_DOCS_REPO;
  if (!repo)
    throw new Error('give the documentation repository: --repo <path to a clone of clearhaus/3DSv2-api-documentation>');
  return repo;
}
const REPO = repoArg();

function gitShow(path: string): string {
  return execFileSync('git', ['-C', REPO, 'show', `HEAD:${path}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

export function gitHead(): string {
  return execFileSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
}

export interface RawVariant {
  deviceChannel?: string; // '01' | '02' | '03'
  messageCategory?: string; // '01' | '02'
  value: string;
  clauses?: string[]; // condition clauses, split at <br> (they are ANDed)
}

/** Split an element's text at <br> elements. */
function clauses(e: El): string[] {
  const out: string[] = [''];
  const walk = (n: El | string): void => {
    if (typeof n === 'string') {
      out[out.length - 1] += n;
      return;
    }
    if (n.tag === 'br') {
      out.push('');
      return;
    }
    n.children.forEach(walk);
  };
  e.children.forEach(walk);
  return out.map((s) => s.replace(/\s+/g, ' ').trim()).filter(Boolean);
}

export interface RawRow {
  id: string;
  name: string;
  typeText: string;
  objectRef?: string; // href target of the type link, e.g. 'acctinfo'
  categories: string[];
  channels: string[];
  inclusion: string; // plain inclusion text (or the default dynamic one)
  dynamicInclusion: RawVariant[];
  requirements: Record<string, string | string[]>;
  conditions: RawVariant[]; // condition texts (SOURCE PROSE - review only, never emitted)
  enumKeys: string[]; // keys of the "meaning of values" table
  schemeRules: { scheme: string; rule: string }[]; // SOURCE PROSE - review only
}

function variantAttrs(e: El): { deviceChannel?: string; messageCategory?: string } {
  const v: { deviceChannel?: string; messageCategory?: string } = {};
  const dc = e.attrs['devicechannel'] ?? e.attrs['deviceChannel'];
  const mc = e.attrs['messagecategory'] ?? e.attrs['messageCategory'];
  if (dc !== undefined) v.deviceChannel = dc;
  if (mc !== undefined) v.messageCategory = mc;
  return v;
}

function codes(e: El): string[] {
  return findAll(e, (x) => x.tag === 'code').map((c) => text(c));
}

export function readTable(path: string): RawRow[] {
  const root = parseHtml(gitShow(path));
  const objs = findAll(root, byClass('reference-object'));
  const rows: RawRow[] = [];
  for (const obj of objs) {
    const divs = elChildren(obj);
    for (let i = 0; i < divs.length; i++) {
      const h = divs[i];
      if (!h || !hasClass(h, 'attribute-header')) continue;
      const d = divs[i + 1];
      if (!d || !hasClass(d, 'attribute-details'))
        throw new Error(`${path}: header without details at ${h.attrs['id']}`);
      const nameEl = find(h, byClass('attribute-name'));
      const typeEl = find(h, byClass('attribute-type'));
      if (!nameEl || !typeEl) throw new Error(`${path}: bad header`);
      const link = find(typeEl, (x) => x.tag === 'a');
      const incEl = find(d, byClass('inclusion'));
      const dyn = incEl ? elChildren(incEl).filter(byClass('dynamic')) : [];
      const reqEl = find(d, byClass('requirements'));
      const requirements: Record<string, string | string[]> = {};
      if (reqEl) {
        for (const r of elChildren(reqEl)) {
          const cls = (r.attrs['class'] ?? '').trim();
          const cs = codes(r);
          if (cls === 'enum') requirements[cls] = cs;
          else if (cls === 'integerString') requirements[cls] = text(r);
          else requirements[cls] = cs.length === 1 ? (cs[0] ?? '') : cs;
        }
      }
      const condEl = find(d, byClass('conditions'));
      const conditions: RawVariant[] = condEl
        ? elChildren(condEl).map((c) => ({ ...variantAttrs(c), value: text(c), clauses: clauses(c) }))
        : [];
      const enumKeys = findAll(d, byClass('enumKey')).map((k) => text(k));
      const schemeRules: { scheme: string; rule: string }[] = [];
      const dl = find(d, byClass('scheme_rules'));
      if (dl) {
        let scheme = '';
        for (const c of elChildren(dl)) {
          if (c.tag === 'dt') scheme = text(c);
          else if (c.tag === 'dd') schemeRules.push({ scheme, rule: text(c) });
        }
      }
      const dynamicInclusion = dyn.map((x) => ({ ...variantAttrs(x), value: text(x) }));
      const defaultDyn = dynamicInclusion.find((x) => x.deviceChannel === undefined && x.messageCategory === undefined);
      rows.push({
        id: h.attrs['id'] ?? '',
        name: text(nameEl),
        typeText: text(typeEl),
        ...(link ? { objectRef: (link.attrs['href'] ?? '').replace(/^#/, '') } : {}),
        categories: (h.attrs['categories'] ?? '').split(/\s+/).filter(Boolean),
        channels: (h.attrs['channels'] ?? '').split(/\s+/).filter(Boolean),
        inclusion: dyn.length ? (defaultDyn?.value ?? '') : incEl ? text(incEl) : '',
        dynamicInclusion: dyn.length ? dynamicInclusion : [],
        requirements,
        conditions,
        enumKeys,
        schemeRules,
      });
      i++;
    }
  }
  // sanity: all top-level children consumed
  for (const obj of objs)
    for (const c of obj.children)
      if (isEl(c) && !hasClass(c, 'attribute-header') && !hasClass(c, 'attribute-details'))
        throw new Error(`${path}: unexpected element`);
  return rows;
}
