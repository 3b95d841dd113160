import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { expect } from 'vitest';
import type { TokenGroup } from '../../src/tokens/token-group';
import { parseReference } from '../../src/tokens/token-ids';
import { tokenGroupName } from '../../src/tokens/token-group-api';
import { UPDATE_PATHS } from '../../src/tokens/update-paths';
import type { StorageHarness } from './faulty-env';
import { call, CARD_BIN_HEADERS, luhnComplete, TEST_AUTH, type Fetch } from './helpers';
import { newReference, RETURN_URL, THREEDS, THREEDS_HEADERS } from './threeds-helpers';

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

/** A token a test made: its resource as the POST answered it, its href, and its card number. */
export interface Made {
  token: Json;
  href: string;
  cardNumber: string;
}

/** What {@link newToken} takes. */
export interface NewToken {
  cardNumber?: string;
  name?: string;
  extra?: Json;
  address?: Json;
  via?: Fetch;
}

/**
 * Tokenizes a card (a fresh one unless given; named Ada Lovelace unless told otherwise; with a
 * billing address and `extra` fields when given) for the test merchant: 201.
 */
export async function newToken(o: NewToken = {}): Promise<Made> {
  const cardNumber = o.cardNumber ?? freshCard();
  const body = tokenBody({ cardNumber, name: o.name ?? 'Ada Lovelace', extra: o.extra });
  if (o.address !== undefined) body.paymentInstrument.billingAddress = o.address;
  const response = await createToken(body, {}, o.via);
  expect(response.status, await response.clone().text()).toBe(201);
  const token = await response.json<Json>();
  return { token, href: token.tokenPaymentInstrument.href as string, cardNumber };
}

/** GET /tokens with a query. */
export function queryTokens(
  query: string,
  headers: Record<string, string | undefined> = {},
  via?: Fetch,
): Promise<Response> {
  return call(`/tokens?${query}`, {
    method: 'GET',
    headers: { Authorization: TEST_AUTH, Accept: TOKENS_MEDIA, ...headers },
    via,
  });
}

/** A namespace no other test uses. */
export function newNamespace(): string {
  return `ns-${crypto.randomUUID()}`;
}

/** The token ids a namespace lists (200), in order. */
export async function listed(namespace: string, headers: Record<string, string | undefined> = {}): Promise<string[]> {
  const response = await queryTokens(`namespace=${encodeURIComponent(namespace)}`, headers);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json<Json>())._embedded.tokens as Json[]).map((t) => t.tokenId as string);
}

/** `POST /api/cardBin/panLookup` by token (it asks the token's object). */
export function lookupByToken(href: string, via?: Fetch): Promise<Response> {
  return call('/api/cardBin/panLookup', {
    body: { merchant: { entity: 'default' }, token: href },
    headers: CARD_BIN_HEADERS,
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

/**
 * A token as a test holds it: its href, its resource as answered (with the href), or its stored
 * record (which names its object: the merchant, and the namespace or the card's keyed hash).
 */
export type TokenLike = string | Json;

/** The object that owns a token (src/tokens/token-ids.ts), and the token's id. */
function located(token: TokenLike): { owner: DurableObjectStub<TokenGroup>; tokenId: string } {
  if (typeof token === 'string' || 'tokenPaymentInstrument' in token) {
    const href = typeof token === 'string' ? token : (token.tokenPaymentInstrument.href as string);
    const parsed = parseReference(new URL(href).pathname.split('/')[2] ?? '');
    if (!parsed) throw new Error(`not one of our token hrefs: ${href}`);
    return { owner: env.TOKEN_GROUP.get(env.TOKEN_GROUP.idFromString(parsed.ownerId)), tokenId: parsed.tokenId };
  }
  const { username, namespace, fingerprint } = token as { username: string; namespace?: string; fingerprint: string };
  const name = tokenGroupName(username, namespace !== undefined ? { namespace } : { fingerprint });
  return { owner: env.TOKEN_GROUP.get(env.TOKEN_GROUP.idFromName(name)), tokenId: token.tokenId as string };
}

/** The object that owns a token. */
export function tokenGroupOf(token: TokenLike): DurableObjectStub<TokenGroup> {
  return located(token).owner;
}

/** The token's id (Worldpay's 21 characters). */
export function tokenIdOf(token: TokenLike): string {
  return located(token).tokenId;
}

/** The token's row in its object, white-box: its record parsed, whether it was deleted. */
export interface TokenRow {
  record: Json;
  deleted: number;
  expires_at: number;
}

/** The token's row in its object, white-box; undefined when there is none. */
export function tokenRow(token: TokenLike): Promise<TokenRow | undefined> {
  const { owner, tokenId } = located(token);
  return runInDurableObject(owner, (_guard, state): TokenRow | undefined => {
    const row = state.storage.sql.exec<Json>('SELECT * FROM tokens WHERE token_id = ?', tokenId).toArray()[0];
    return row && ({ ...row, record: JSON.parse(row.record as string) as Json } as TokenRow);
  });
}

/**
 * Waits until the token's object has written every projection it staged (its outbox is settled:
 * it writes after the answer, from its alarm what it could not at once). Fails after `ms`
 * (generous: a busy machine delays alarms, never breaks them).
 */
export async function projectionSettled(token: TokenLike, ms = 20_000): Promise<void> {
  const { owner, tokenId } = located(token);
  const deadline = Date.now() + ms;
  for (;;) {
    const pending = await runInDurableObject(
      owner,
      (_g, state) => state.storage.sql.exec('SELECT 1 FROM outbox WHERE staged > written').toArray().length,
    );
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`projection of token ${tokenId} not settled within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * KV holds what the token's object holds, once its projection has settled: the same record (the
 * returned one), or nothing for a deleted token (null).
 */
export async function expectConsistent(token: TokenLike): Promise<Json | null> {
  await projectionSettled(token);
  const tokenId = tokenIdOf(token);
  const stored = await storedToken(tokenId);
  const row = await tokenRow(token);
  expect(row, `token ${tokenId} in its object`).toBeDefined();
  if (row!.deleted === 1) expect(stored, `token:${tokenId} of a deleted token`).toBeNull();
  else expect(stored).toEqual(row!.record);
  return stored;
}

/** The updates the token's object counts toward the rolling limit, white-box. */
export function countedUpdates(token: TokenLike): Promise<number> {
  const { owner, tokenId } = located(token);
  return runInDurableObject(
    owner,
    (_g, state) =>
      state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM updates WHERE token_id = ?', tokenId).one().n,
  );
}

/**
 * The writes (puts and deletes) of the token's KV key that its object made through `harness`
 * (after `harness.throughObjects()`).
 */
export function objectWritesOf(harness: StorageHarness, token: TokenLike): number {
  const key = `token:${tokenIdOf(token)}`;
  return harness.count((c) => c.store === 'kv' && c.by === 'object' && c.key === key && c.op !== 'get');
}

/** The live tokens a token's object holds (white-box): a card's object holds at most one. */
export function liveTokensIn(token: TokenLike): Promise<string[]> {
  return runInDurableObject(tokenGroupOf(token), (_g, state) =>
    state.storage.sql
      .exec<{ token_id: string }>('SELECT token_id FROM tokens WHERE deleted = 0')
      .toArray()
      .map((r) => r.token_id),
  );
}

/** 3DS authenticate with a token in place of a card (it asks the token's object). */
export function authenticateWithToken(href: string, via?: Fetch): Promise<Response> {
  return call(`${THREEDS}/authenticate`, {
    body: {
      transactionReference: newReference(),
      merchant: { entity: 'default' },
      instruction: { value: { amount: 500, currency: 'GBP' }, paymentInstrument: { type: 'card/tokenized', href } },
      deviceData: { acceptHeader: 'text/html', userAgentHeader: 'Mozilla/5.0 (test)' },
      challenge: { returnUrl: RETURN_URL },
    },
    headers: THREEDS_HEADERS,
    via,
  });
}
