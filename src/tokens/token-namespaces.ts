import { failed, ok, type Result } from '../failures';
import { isTombstone, type TokenRecord } from '../storage/token-store';
import { findToken } from '../cards/token-card';
import { tokenAnswer, type TokenAnswer, type TokenDeps } from './token-steps';
import { extendIfDue } from './token-updates';

/**
 * `GET /tokens?namespace=…[&tokenId=…]` (docs/tokens.md "Namespaces"): the merchant's tokens in a
 * namespace, or one token by id (its namespace is then required when it has one). The
 * namespace's index (a NamespaceGuard) lists the token ids; their records are read from KV in one
 * bulk get, and only the merchant's live tokens of that namespace are answered. Nothing is shown
 * across merchants: another merchant's namespace is an empty one, 404.
 */
export async function queryTokens(
  deps: TokenDeps,
  username: string,
  query: { namespace?: string; tokenId?: string },
): Promise<Result<TokenAnswer[]>> {
  const { namespace, tokenId } = query;
  if (namespace === undefined && tokenId === undefined) {
    return failed({
      kind: 'urlContainsInvalidValue',
      errors: [
        { errorName: 'fieldIsMissing', message: 'Give a namespace, a tokenId, or both.', jsonPath: '$.namespace' },
      ],
    });
  }
  let records: TokenRecord[];
  if (namespace === undefined) {
    // By id alone: only a token outside any namespace (a namespace's token needs its namespace).
    const record = await findToken(deps.tokens, username, tokenId!, deps.now);
    records = record && record.namespace === undefined ? [record] : [];
  } else {
    const index = deps.namespaceFor(username, namespace);
    const entries = (await index.list(deps.now)).filter((e) => tokenId === undefined || e.tokenId === tokenId);
    const found = await deps.tokens.getMany(
      entries.map((e) => e.tokenId),
      deps.now,
    );
    records = [];
    found.forEach((record, i) => {
      if (record && !isTombstone(record) && record.username === username && record.namespace === namespace) {
        records.push(record);
      } else if (record !== undefined && isTombstone(record)) {
        // Deleted, and its place not freed yet (a DELETE that failed half way): free it. A record
        // not found is left alone: KV may not show a token made elsewhere yet (expired tokens
        // leave the index by their end, which it keeps).
        deps.background(index.remove(entries[i]!.tokenId));
      }
    });
  }
  if (records.length === 0) return failed({ kind: 'resourceNotFound' });
  const keys = await deps.tokenKeys();
  const answers: TokenAnswer[] = [];
  for (const found of records) {
    // An inquiry is a use: a token past half its life is extended.
    answers.push(await tokenAnswer(keys, await extendIfDue(deps, found)));
  }
  return ok(answers);
}
