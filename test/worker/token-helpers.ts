import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { expect } from 'vitest';
import { tokenGuardName } from '../../src/storage/guards/clients';
import { TOKEN_PREFIX } from '../../src/storage/token-store';
import { UPDATE_PATHS } from '../../src/tokens/update-paths';
import { call, luhnComplete, TEST_AUTH, type Fetch } from './helpers';

type Json = Record<string, any>;

export const TOKENS_MEDIA = 'application/vnd.worldpay.tokens-v1.hal+json';
export const TOKENS_HEADERS = { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, 'Content-Type': TOKENS_MEDIA };

export function tokenBody(
  o: { cardNumber?: string; name?: string; entity?: string; month?: number; year?: number; extra?: Json } = {},
): Json {
  return {
    paymentInstrument: {
      type: 'card/front',
      cardNumber: o.cardNumber ?? luhnComplete('45713684'),
      cardExpiryDate: { month: o.month ?? 12, year: o.year ?? 2035 },
      ...(o.name ? { cardHolderName: o.name } : {}),
    },
    merchant: { entity: o.entity ?? 'default' },
    ...o.extra,
  };
}

export function createToken(
  body: Json,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call('/tokens', { body, headers: { ...TOKENS_HEADERS, ...headers }, via });
}

/** GET or DELETE (or another method) on a token href. */
export function tokenCall(
  method: string,
  href: string,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call(new URL(href).pathname, {
    method,
    headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, ...headers },
    via,
  });
}

/** Creates a token for the test merchant and returns its href. */
export async function tokenHref(body: Json, headers: Record<string, string | undefined> = {}): Promise<string> {
  const response = await createToken(body, headers);
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`token not created: ${response.status} ${await response.text()}`);
  return (await response.json<Json>()).tokenPaymentInstrument.href;
}

/** A card number no other test tokenizes: a Visa of the 432376 range, with 9 random digits. */
export function freshCard(prefix = '432376'): string {
  const digits = Array.from(crypto.getRandomValues(new Uint8Array(9)), (b) => String(b % 10)).join('');
  return luhnComplete(`${prefix}${digits}`, 16);
}

/**
 * The path of each updatable attribute under a token's href (its `tokens:<attribute>` link): the
 * Worker's own table; the Worldpay compatibility tests check it against Worldpay's documents.
 */
export const ATTRIBUTE_PATHS = UPDATE_PATHS;

export type Attribute = keyof typeof ATTRIBUTE_PATHS;

/** `PUT` of one attribute of a token (its body JSON-encoded, a bare string for the string attributes). */
export function putAttribute(
  href: string,
  attribute: Attribute,
  value: unknown,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call(`${new URL(href).pathname}/${ATTRIBUTE_PATHS[attribute]}`, {
    method: 'PUT',
    body: value,
    headers: { ...TOKENS_HEADERS, ...headers },
    via,
  });
}

/** A token's KV record (`token:<id>`), or null. */
export function storedToken(tokenId: string): Promise<Json | null> {
  return env.SESSIONS.get<Json>(`token:${tokenId}`, 'json');
}

/** The card's TokenGuard, named as the Worker names it (src/storage/guards/clients.ts). */
export function tokenGuardOf(record: { username: string; fingerprint: string; namespace?: string }) {
  const name = tokenGuardName(record.username, record.fingerprint, record.namespace);
  return env.TOKEN_GUARD.get(env.TOKEN_GUARD.idFromName(name));
}

/** The card's claim in its TokenGuard (src/storage/guards/claims.ts), its answer parsed. */
export interface TokenClaim {
  answer: Json;
  recorded: number;
  retired: number;
  expires_at: number;
}

/** The row of the card's claim in its TokenGuard, white-box; undefined when there is none. */
export function tokenClaim(record: {
  username: string;
  fingerprint: string;
  namespace?: string;
}): Promise<TokenClaim | undefined> {
  return runInDurableObject(tokenGuardOf(record), (_guard, state): TokenClaim | undefined => {
    const row = state.storage.sql.exec<Json>('SELECT * FROM claims WHERE name = ?', 'token').toArray()[0];
    return row && ({ ...row, answer: JSON.parse(row.answer as string) as Json } as TokenClaim);
  });
}

/** Every live token id in KV (all pages of the listing; tombstones left out). */
export async function liveTokenIds(): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await env.SESSIONS.list({ prefix: TOKEN_PREFIX, ...(cursor ? { cursor } : {}) });
    for (const { name } of page.keys) {
      const value = await env.SESSIONS.get<Json>(name, 'json');
      if (value && !('deletedAt' in value)) ids.add(value.tokenId);
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return ids;
}

/** The token's KV record and its card guard's claim: the same version, recorded. */
export async function expectConsistent(tokenId: string): Promise<Json> {
  const stored = await storedToken(tokenId);
  expect(stored, `token:${tokenId}`).not.toBeNull();
  const claim = await tokenClaim(stored as { username: string; fingerprint: string });
  expect(claim?.answer).toEqual(stored);
  expect(claim?.recorded).toBe(1);
  return stored!;
}

/** The updates the card's guard counts toward the rolling limit (recorded ones), white-box. */
export function countedUpdates(stored: Json): Promise<number> {
  return runInDurableObject(
    tokenGuardOf(stored as { username: string; fingerprint: string }),
    (_g, state) =>
      state.storage.sql
        .exec<{ n: number }>('SELECT COUNT(*) AS n FROM updates WHERE token_id = ? AND recorded = 1', stored.tokenId)
        .one().n,
  );
}
