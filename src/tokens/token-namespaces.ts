import { failed, ok, type Result } from '../failures';
import type { OwnedToken } from './token-group-api';
import type { TokenDeps } from './token-steps';

/**
 * `GET /tokens?namespace=…[&tokenId=…]` (docs/tokens.md "Namespaces"): the merchant's tokens in a
 * namespace, or one token by id (its namespace is then required when it has one). The
 * namespace's object holds its tokens and answers them itself, exactly; nothing is shown across
 * merchants: another merchant's namespace is an empty one, 404.
 */
export async function queryTokens(
  deps: TokenDeps,
  username: string,
  query: { namespace?: string; tokenId?: string },
): Promise<Result<OwnedToken[]>> {
  const { namespace, tokenId } = query;
  let answers: OwnedToken[];
  if (namespace !== undefined) {
    answers = await deps.ownerFor(username, { namespace }).list(username, tokenId);
  } else if (tokenId !== undefined) {
    // By id alone: only a token outside any namespace (a namespace's token needs its namespace).
    // KV's projection locates its object (a token made in the last minute may not be there yet
    // in another location: docs/storage.md "Reads"); the object answers.
    const located = await deps.projectedToken(tokenId);
    const found =
      located?.username === username && located.namespace === undefined
        ? await deps.ownerFor(username, { fingerprint: located.fingerprint }).read(username, tokenId)
        : undefined;
    answers = found ? [found] : [];
  } else {
    return failed({
      kind: 'urlContainsInvalidValue',
      errors: [
        { errorName: 'fieldIsMissing', message: 'Give a namespace, a tokenId, or both.', jsonPath: '$.namespace' },
      ],
    });
  }
  return answers.length > 0 ? ok(answers) : failed({ kind: 'resourceNotFound' });
}
