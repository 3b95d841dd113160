// Minimal HTML tree builder used by extract-emv-rules.ts (no dependencies).
// Good enough for the Sphinx-generated, well-formed tables in the provider's
// documentation repository; not a general purpose HTML parser.

export interface El {
  tag: string;
  attrs: Record<string, string>;
  children: Node[];
  parent: El | null;
}
export type Node = El | string;

const VOID = new Set(['br', 'col', 'img', 'meta', 'link', 'input', 'hr', 'wbr']);

function decode(s: string): string {
  return s
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(parseInt(d, 10)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}

export function parseHtml(html: string): El {
  const root: El = { tag: '#root', attrs: {}, children: [], parent: null };
  let cur = root;
  const re =
    /<!--[\s\S]*?-->|<\/([a-zA-Z0-9]+)\s*>|<([a-zA-Z0-9]+)((?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(\/?)>|[^<]+|</g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(html)) !== null) {
    const tok = m[0];
    if (tok.startsWith('<!--')) continue;
    if (m[1] !== undefined) {
      const tag = m[1].toLowerCase();
      // close up to the matching open element
      let e: El | null = cur;
      while (e && e.tag !== tag) e = e.parent;
      if (e && e.parent) cur = e.parent;
      continue;
    }
    if (m[2] !== undefined) {
      const tag = m[2].toLowerCase();
      const attrs: Record<string, string> = {};
      const ar = /([^\s=>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
      let a: RegExpExecArray | null;
      const attrText = m[3] ?? '';
      while ((a = ar.exec(attrText)) !== null) {
        const name = a[1];
        if (name === undefined) continue;
        attrs[name] = decode(a[2] ?? a[3] ?? a[4] ?? '');
      }
      const el: El = { tag, attrs, children: [], parent: cur };
      cur.children.push(el);
      if (!VOID.has(tag) && m[4] !== '/') cur = el;
      continue;
    }
    cur.children.push(decode(tok));
  }
  return root;
}

export function isEl(n: Node): n is El {
  return typeof n !== 'string';
}

function classes(e: El): string[] {
  return (e.attrs['class'] ?? '').split(/\s+/).filter(Boolean);
}

export function hasClass(e: El, c: string): boolean {
  return classes(e).includes(c);
}

export function elChildren(e: El): El[] {
  return e.children.filter(isEl);
}

export function findAll(e: El, pred: (x: El) => boolean, out: El[] = []): El[] {
  for (const c of e.children) {
    if (!isEl(c)) continue;
    if (pred(c)) out.push(c);
    findAll(c, pred, out);
  }
  return out;
}

export function find(e: El, pred: (x: El) => boolean): El | undefined {
  for (const c of e.children) {
    if (!isEl(c)) continue;
    if (pred(c)) return c;
    const r = find(c, pred);
    if (r) return r;
  }
  return undefined;
}

export const byClass = (c: string) => (x: El) => hasClass(x, c);

/** Concatenated text content, whitespace collapsed. */
export function text(n: Node): string {
  return rawText(n).replace(/\s+/g, ' ').trim();
}

function rawText(n: Node): string {
  if (!isEl(n)) return n;
  return n.children.map(rawText).join('');
}
