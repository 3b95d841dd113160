import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { DocOperation, JsonSchema, WorldpayDocs } from './worldpay-types';

/**
 * Worldpay's published OpenAPI documents, read where they are kept (`../shared/data/
 * worldpay-openapi/` beside the project, never copied into it) and reduced to what the
 * compatibility tests need: per operation, the response schemas by status (references inlined,
 * OpenAPI-only keywords dropped, so that a JSON Schema validator can run them inside workerd)
 * and the request examples. Runs on Node, in the vitest config; the result is handed to the
 * tests with `provide`.
 */

const FILES = {
  '3ds': 'worldpay-3ds-openapi.yaml',
  tokens: 'worldpay-tokens-openapi.yaml',
  cardBin: 'worldpay-card-bin-v1-openapi.transcribed.yaml',
} as const;

/**
 * The operations this service implements, with the paths it answers them on. Where a difference
 * comes only from the version (v3 documents, a v1 service), v1 wins: 3DS v1 names its steps
 * `/deviceDataInitialize` and `/authenticate`, and the service takes the v3 names as aliases.
 */
const OPERATIONS: { doc: keyof typeof FILES; method: string; docPath: string; pathPattern: string }[] = [
  {
    doc: '3ds',
    method: 'post',
    docPath: '/verifications/customers/3ds/deviceDataInitialization',
    pathPattern: '^/verifications/customers/3ds/deviceDataInitiali(?:ze|zation)$',
  },
  {
    doc: '3ds',
    method: 'post',
    docPath: '/verifications/customers/3ds/authentication',
    pathPattern: '^/verifications/customers/3ds/authenticat(?:e|ion)$',
  },
  {
    doc: '3ds',
    method: 'post',
    docPath: '/verifications/customers/3ds/verification',
    pathPattern: '^/verifications/customers/3ds/verification$',
  },
  { doc: 'tokens', method: 'post', docPath: '/tokens', pathPattern: '^/tokens$' },
  { doc: 'tokens', method: 'get', docPath: '/tokens/{tokenId}', pathPattern: '^/tokens/[^/]+$' },
  { doc: 'tokens', method: 'delete', docPath: '/tokens/{tokenId}', pathPattern: '^/tokens/[^/]+$' },
  // The document's server carries `/api`; its path is `/cardBin/panLookup`.
  { doc: 'cardBin', method: 'post', docPath: '/cardBin/panLookup', pathPattern: '^/api/cardBin/panLookup$' },
];

/** Keywords of OpenAPI 3.0 schema objects that are not JSON Schema (or only describe). */
const NOT_JSON_SCHEMA = new Set([
  'example',
  'examples',
  'discriminator',
  'xml',
  'externalDocs',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/** Whether a folder holds the documents the checks read. */
export function hasWorldpayDocs(dir: string): boolean {
  return Object.values(FILES).every((f) => existsSync(join(dir, f)));
}

/** The documents' folder: WORLDPAY_OPENAPI_DIR, or `../shared/data/worldpay-openapi` beside the project. */
export function worldpayDocsDir(projectRoot: string): string {
  return process.env.WORLDPAY_OPENAPI_DIR ?? resolve(projectRoot, '..', 'shared', 'data', 'worldpay-openapi');
}

export function loadWorldpayDocs(dir: string): WorldpayDocs {
  const missing = Object.values(FILES).filter((f) => !existsSync(join(dir, f)));
  if (missing.length > 0)
    throw new Error(
      `Worldpay's OpenAPI documents are not in ${dir} (missing ${missing.join(', ')}); set WORLDPAY_OPENAPI_DIR`,
    );
  const docs = Object.fromEntries(
    Object.entries(FILES).map(([name, file]) => [
      name,
      parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>,
    ]),
  ) as Record<keyof typeof FILES, Record<string, unknown>>;
  const operations = OPERATIONS.map(({ doc, method, docPath, pathPattern }): DocOperation => {
    const root = docs[doc];
    const op = ((root.paths as Record<string, Record<string, Record<string, unknown>>>)[docPath] ?? {})[method];
    if (!op) throw new Error(`${FILES[doc]} has no ${method.toUpperCase()} ${docPath}`);
    const resolveRef = (node: unknown): unknown => resolveRefs(root, node, 0);
    const responses: Record<string, JsonSchema | undefined> = {};
    for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Record<string, unknown>>)) {
      const content = Object.values(
        (resolveRef(response) as { content?: Record<string, { schema?: unknown }> }).content ?? {},
      )[0];
      responses[status] = content?.schema === undefined ? undefined : toJsonSchema(resolveRef(content.schema));
    }
    const body = resolveRef(op.requestBody) as
      { content?: Record<string, { examples?: Record<string, unknown> }> } | undefined;
    const examples = Object.values(body?.content ?? {})[0]?.examples ?? {};
    const requestExamples = Object.entries(examples).map(([name, example]) => ({
      name,
      value: (resolveRef(example) as { value?: unknown }).value,
    }));
    return {
      doc,
      operationId: String(op.operationId),
      method: method.toUpperCase(),
      docPath,
      pathPattern,
      responses,
      requestExamples,
    };
  });
  return { dir, operations };
}

/** Inlines local `$ref`s (`#/components/...`); the documents' schemas are not recursive. */
function resolveRefs(root: Record<string, unknown>, node: unknown, depth: number): unknown {
  if (depth > 64) throw new Error('$ref nesting deeper than 64: a recursive schema?');
  if (Array.isArray(node)) return node.map((n) => resolveRefs(root, n, depth + 1));
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (at, key) => (at as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')],
        root,
      );
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    return resolveRefs(root, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolveRefs(root, v, depth + 1)]));
}

/** An OpenAPI 3.0 schema object as JSON Schema: `nullable` as a type union, descriptive keywords dropped. */
function toJsonSchema(node: unknown): JsonSchema {
  const convert = (n: unknown): unknown => {
    if (Array.isArray(n)) return n.map(convert);
    if (typeof n !== 'object' || n === null) return n;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(n)) {
      if (NOT_JSON_SCHEMA.has(key) || key.startsWith('x-')) continue;
      if (key === 'properties' && typeof value === 'object' && value !== null) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, convert(schema)]));
      } else {
        out[key] = convert(value);
      }
    }
    if (out.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
    delete out.nullable;
    return out;
  };
  return convert(node) as JsonSchema;
}
