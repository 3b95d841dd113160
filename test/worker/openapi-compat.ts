import { Validator } from '@cfworker/json-schema';
import { inject } from 'vitest';

/**
 * Checks an answer against this service's own OpenAPI document (scripts/openapi/document.ts,
 * built in the vitest config from the same schemas the Worker validates with). Every integration
 * test's answers go through it (`call` in helpers.ts), so an answer the document does not describe
 * fails the test that got it:
 *
 * - a documented path and method: the status must be documented, every required header present
 *   and valid, the media type one the response lists, and a JSON body valid against its schema;
 * - a path the document has, with another method: 405; a path it does not have: 404.
 */

type Json = Record<string, any>;

const DOC_ID = 'https://card-edge.invalid/openapi.json';
const doc = inject('openapi') as Json;
/**
 * The document's paths, concrete before templated (OpenAPI 3.1, Paths Object): segment by segment,
 * a fixed one wins over a parameter, so that `/events/endpoints` is not taken for `/events/{eventId}`.
 */
const paths = Object.entries(doc.paths as Record<string, Json>)
  .map(([template, item]) => ({
    template,
    item,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    rank: template.split('/').map((segment) => (segment.startsWith('{') ? '1' : '0')),
  }))
  .sort((a, b) => {
    for (let i = 0; i < Math.min(a.rank.length, b.rank.length); i++)
      if (a.rank[i] !== b.rank[i]) return a.rank[i]! < b.rank[i]! ? -1 : 1;
    return 0;
  });
const validators = new Map<string, Validator>();

function validatorFor(schema: Json): Validator {
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (!validator) {
    validator = new Validator(schema.$ref ? { $ref: `${DOC_ID}${schema.$ref}` } : schema, '2020-12', false);
    validator.addSchema(doc, DOC_ID);
    validators.set(key, validator);
  }
  return validator;
}

/** Follows a `#/components/...` reference of the document. */
function resolve(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce<Json>((at, part) => at[part] as Json, doc);
}

/** The problems of an answer against the document; empty when it matches. */
export async function documentProblems(method: string, url: string, response: Response): Promise<string[]> {
  const path = new URL(url).pathname;
  const entry = paths.find((p) => p.pattern.test(path));
  if (!entry) return response.status === 404 ? [] : [`${path} is not in the document, yet answered ${response.status}`];
  // 3DS aliases and unknown methods: the pipeline's 405 (or the alias's own answer) is not an operation.
  const op = entry.item[method.toLowerCase()] as Json | undefined;
  if (!op)
    return response.status === 405
      ? []
      : [`${method} ${entry.template} is not in the document, yet answered ${response.status}`];
  const documented = op.responses[String(response.status)] as Json | undefined;
  if (!documented) return [`${method} ${entry.template} answered ${response.status}, which the document does not list`];
  const problems: string[] = [];
  const answer = resolve(documented);
  for (const [name, spec] of Object.entries((answer.headers ?? {}) as Record<string, Json>)) {
    const h = resolve(spec);
    const value = response.headers.get(name);
    if (value === null) {
      if (h.required) problems.push(`header ${name} is missing`);
      continue;
    }
    const result = new Validator(h.schema as Json, '2020-12', false).validate(value);
    if (!result.valid)
      problems.push(`header ${name}: ${JSON.stringify(value)} does not match ${JSON.stringify(h.schema)}`);
  }
  const content = (answer.content ?? {}) as Record<string, Json>;
  const type = (response.headers.get('Content-Type') ?? '').split(';')[0]!.trim();
  if (Object.keys(content).length === 0) {
    if ((await response.clone().text()) !== '') problems.push('a body where the document lists none');
    return problems;
  }
  const media = content[type];
  if (!media) return [...problems, `Content-Type ${type} is not one of ${Object.keys(content).join(', ')}`];
  if (type.endsWith('json')) {
    const body: unknown = await response.clone().json();
    const result = validatorFor(media.schema as Json).validate(body);
    if (!result.valid) {
      for (const e of result.errors.filter(
        (e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== '$ref',
      ))
        problems.push(`body ${e.instanceLocation}: ${e.error}`);
      if (problems.length === 0) problems.push(`body does not match: ${JSON.stringify(result.errors[0])}`);
    }
  }
  return problems;
}

/** Throws, naming every problem, when the answer is not one the document describes. */
export async function expectDocumentedAnswer(method: string, url: string, response: Response): Promise<void> {
  const problems = await documentProblems(method, url, response);
  if (problems.length > 0) {
    const body = await response.clone().text();
    throw new Error(
      `${method} ${new URL(url).pathname} ${response.status} is not as the OpenAPI document says:\n- ${problems.join('\n- ')}\n${body.slice(0, 400)}`,
    );
  }
}

/**
 * The problems of an event as an endpoint received it, against the document's `webhooks` entry for
 * its type: the shape of each of its headers (the Standard Webhooks `webhook-id`, `webhook-timestamp`
 * and `webhook-signature`), that `webhook-id` is the body's eventId, and the body's schema; empty
 * when it matches. That the signature verifies is the receiver's check (standardwebhooks).
 */
export function webhookProblems(headers: Headers, body: string): string[] {
  const event = JSON.parse(body) as Json;
  const hook = (doc.webhooks as Record<string, Json> | undefined)?.[String(event.eventType)]?.post as Json | undefined;
  if (!hook) return [`eventType ${String(event.eventType)} is not in the document's webhooks`];
  const problems: string[] = [];
  for (const parameter of hook.parameters as Json[]) {
    const value = headers.get(parameter.name as string);
    if (value === null) problems.push(`header ${parameter.name} is missing`);
    else if (!new Validator(parameter.schema as Json, '2020-12', false).validate(value).valid)
      problems.push(`header ${parameter.name}: ${value} does not match ${JSON.stringify(parameter.schema)}`);
  }
  const id = headers.get('webhook-id');
  if (id !== null && id !== event.eventId)
    problems.push(`header webhook-id: ${id} is not the eventId ${event.eventId}`);
  const result = validatorFor(hook.requestBody.content['application/json'].schema as Json).validate(event);
  for (const e of result.errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== '$ref'))
    problems.push(`body ${e.instanceLocation}: ${e.error}`);
  return problems;
}
