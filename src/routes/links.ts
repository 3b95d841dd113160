import type { FieldError } from '../http/errors';
import type { RequestContext } from '../http/pipeline';

/**
 * The base URL of links, token hrefs and page URLs: PUBLIC_BASE_URL when set, otherwise the
 * origin of the incoming request (CONTRACT.md §1).
 */
export function publicBaseUrl(rc: RequestContext): string {
  const configured = rc.env.PUBLIC_BASE_URL?.trim();
  return (configured ? configured : rc.url.origin).replace(/\/+$/, '');
}

export const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The token id of an href of this service's token resource, or undefined if it is not one. */
export function tokenIdFromHref(href: string, baseUrl: string): string | undefined {
  const prefix = `${baseUrl}/tokens/`;
  if (!href.startsWith(prefix)) return undefined;
  const id = href.slice(prefix.length);
  return TOKEN_ID.test(id) ? id : undefined;
}

/** The field error for a token href that is not this service's token resource, if it is not. */
export function foreignTokenHref(href: string, baseUrl: string, jsonPath: string): FieldError | undefined {
  if (tokenIdFromHref(href, baseUrl) !== undefined) return undefined;
  return { errorName: 'fieldHasInvalidValue', message: `Expected a token href of this service (${baseUrl}/tokens/<id>).`, jsonPath };
}
