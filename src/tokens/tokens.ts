import { resolveCard, type ResolvedCard } from '../cards/resolve-card';
import type { EntityConfig } from '../config/merchants';
import type { Environment } from '../config/settings';
import { failed, fieldFailure, ok, type Result } from '../failures';
import { settleLease, type TokenGuardApi } from '../storage/guards/clients';
import type { TokenClaim } from '../storage/guards/token-guard';
import { isTombstone, TOMBSTONE_TTL_MS, type TokenRecord, type TokenStore } from '../storage/token-store';
import { toBase64Url } from '../bytes';
import { cardHasExpired, findToken, openCard, sealCard, type CardDetails } from './token-card';
import { cardFingerprint, keyedHash, type TokenKeys } from './token-crypto';

/**
 * The token resource (CONTRACT.md §4): tokens stand for a card of one merchant. Each step takes
 * its dependencies and answers a result; no Request or Response here.
 *
 * Writes are ordered so that a failure at any one of them leaves the old state or one that the
 * client's retry completes: POST claims the card in its guard object before it writes the token
 * record (a failed write is rewritten by the retry under the same token id, never orphaned);
 * DELETE frees the card in its guard before it replaces the record by a tombstone (a retry finds
 * the record or the tombstone and ends in 204).
 */

const DAY_MS = 24 * 60 * 60 * 1000;
/** Default token lifetime: 7 days in `test`, 4 years in `live`. */
export const DEFAULT_TOKEN_TTL_MS = { test: 7 * DAY_MS, live: Math.round(4 * 365.25 * DAY_MS) } as const;
/** Tokens may not be asked to live longer than this. */
export const MAX_TOKEN_TTL_MS = DEFAULT_TOKEN_TTL_MS.live;

export interface TokenDeps {
  environment: Environment;
  now: number;
  baseUrl: string;
  /** Work to finish after the answer is sent (ExecutionContext.waitUntil). */
  background(work: Promise<unknown>): void;
  tokens: TokenStore;
  tokenKeys: () => Promise<TokenKeys>;
  guardFor(username: string, fingerprint: string): TokenGuardApi;
}

export interface NewTokenRequest {
  paymentInstrument: CardDetails;
  description?: string;
  /** ISO 8601, already checked to be a real date and time. */
  tokenExpiryDateTime?: string;
}

/** A token as answers show it: the record without the sealed card. */
export type TokenView = Omit<TokenRecord, 'sealed'>;

export interface CreatedToken {
  token: TokenView;
  cardHolderName: string | undefined;
  /** True when this request made the token (201), false when it already stood for the card (200). */
  created: boolean;
  card: string;
}

/** A token id: 24 characters of base64url (144 random bits). */
function newTokenId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
}

/**
 * Tokenizes a card, or finds the merchant's live token for it (same number and expiry date).
 * A burst of identical requests gives one token: the card's guard decides which.
 */
export async function createToken(
  deps: TokenDeps,
  username: string,
  entity: EntityConfig,
  request: NewTokenRequest,
): Promise<Result<CreatedToken>> {
  const card = request.paymentInstrument;
  const resolved = await resolveCard(
    { ...deps, username, entity },
    { type: 'card/front', ...card },
    { hrefPath: '$.paymentInstrument', pciFeature: 'card numbers (tokenize from a PCI-compliant entity)' },
  );
  if (!resolved.ok) return resolved;
  if (cardHasExpired(card.cardExpiryDate, deps.now)) {
    return fieldFailure('fieldHasInvalidValue', 'The card has expired.', '$.paymentInstrument.cardExpiryDate');
  }
  const requested = request.tokenExpiryDateTime === undefined ? undefined : Date.parse(request.tokenExpiryDateTime);
  if (requested !== undefined && (requested <= deps.now || requested > deps.now + MAX_TOKEN_TTL_MS)) {
    return fieldFailure(
      'fieldHasInvalidValue',
      'The token expiry must be in the future and at most 4 years away.',
      '$.tokenExpiryDateTime',
    );
  }
  const keys = await deps.tokenKeys();
  const fingerprint = await cardFingerprint(keys, username, card.cardNumber, card.cardExpiryDate);
  const details = await keyedHash(
    keys,
    JSON.stringify([card.cardHolderName, request.description, request.tokenExpiryDateTime]),
  );
  const guard = deps.guardFor(username, fingerprint);
  const expiresAt = requested ?? deps.now + DEFAULT_TOKEN_TTL_MS[deps.environment];
  const claim = await guard
    .claim(details, { tokenId: newTokenId(), createdAt: deps.now, expiresAt }, deps.now)
    .catch(async (e: unknown) => {
      // The claim may have been made even though its answer was lost: free its lease, so that
      // the client's retry writes the record at once instead of waiting for the lease to end.
      await settleLease(() => guard.released(details));
      throw e;
    });
  const view = viewOf(claim.answer, username, fingerprint, card, resolved.value, request.description);

  if (claim.kind === 'conflict') {
    // The card's token was made with other details: answer it as it is stored.
    const existing = claim.recorded
      ? await findToken(deps.tokens, username, claim.answer.tokenId, deps.now)
      : undefined;
    if (!existing) return failed({ kind: 'storageUnavailable' });
    const { sealed: _sealed, ...token } = existing;
    return ok({
      token,
      cardHolderName: (await openCard(keys, existing)).cardHolderName,
      created: false,
      card: resolved.value.masked,
    });
  }
  if (claim.kind === 'write') {
    try {
      await deps.tokens.put({ ...view, sealed: await sealCard(keys, card, view) }, deps.now);
    } catch (e) {
      await settleLease(() => guard.released(details));
      throw e;
    }
    // The record is in KV, so the answer stands; the confirmation that releases identical
    // requests waiting for it goes out after the answer.
    deps.background(settleLease(() => guard.recorded(details)));
  }
  // `write` makes the token now (this request or the retry of one that failed); `done` found it.
  return ok({
    token: view,
    cardHolderName: card.cardHolderName,
    created: claim.kind === 'write',
    card: resolved.value.masked,
  });
}

/** The token as the claim and this request describe it (identical requests, identical views). */
function viewOf(
  claim: TokenClaim,
  username: string,
  fingerprint: string,
  card: CardDetails,
  resolved: ResolvedCard,
  description: string | undefined,
): TokenView {
  const record = resolved.match?.record;
  return {
    tokenId: claim.tokenId,
    username,
    fingerprint,
    maskedCardNumber: resolved.masked,
    cardExpiryDate: card.cardExpiryDate,
    bin: resolved.bin,
    brands: [...resolved.brands],
    ...(record?.fundingType ? { fundingType: record.fundingType } : {}),
    ...(record?.countryCode ? { countryCode: record.countryCode } : {}),
    ...(description !== undefined ? { description } : {}),
    tokenExpiryDateTime: new Date(claim.expiresAt).toISOString(),
    createdAt: claim.createdAt,
    expiresAt: claim.expiresAt,
  };
}

/** The merchant's live token with its cardholder name, or tokenNotFound. */
export async function getToken(
  deps: TokenDeps,
  username: string,
  tokenId: string,
): Promise<Result<{ token: TokenView; cardHolderName?: string }>> {
  const record = await findToken(deps.tokens, username, tokenId, deps.now);
  if (!record) return failed({ kind: 'tokenNotFound' });
  const { sealed: _sealed, ...token } = record;
  return ok({ token, cardHolderName: (await openCard(await deps.tokenKeys(), record)).cardHolderName });
}

/**
 * Deletes the merchant's token: frees the card in its guard, then replaces the record by a
 * tombstone. A retry after any failure ends in success; so does a repeated DELETE while the
 * tombstone lives (a day).
 */
export async function deleteToken(deps: TokenDeps, username: string, tokenId: string): Promise<Result<void>> {
  const record = await deps.tokens.get(tokenId, deps.now);
  if (!record || record.username !== username) return failed({ kind: 'tokenNotFound' });
  if (isTombstone(record)) return ok(undefined);
  await deps.guardFor(username, record.fingerprint).forget(tokenId, deps.now);
  await deps.tokens.put(
    { tokenId, username, deletedAt: deps.now, expiresAt: Math.min(record.expiresAt, deps.now + TOMBSTONE_TTL_MS) },
    deps.now,
  );
  return ok(undefined);
}

/** The token resource on the wire (CONTRACT.md §4). */
export function tokenResource(
  token: TokenView,
  cardHolderName: string | undefined,
  href: string,
): Record<string, unknown> {
  return {
    tokenPaymentInstrument: { type: 'card/tokenized', href },
    tokenId: token.tokenId,
    tokenExpiryDateTime: token.tokenExpiryDateTime,
    ...(token.description !== undefined ? { description: token.description } : {}),
    paymentInstrument: {
      type: 'card/masked',
      cardNumber: token.maskedCardNumber,
      cardExpiryDate: token.cardExpiryDate,
      ...(cardHolderName !== undefined ? { cardHolderName } : {}),
      bin: token.bin,
      ...(token.brands[0] ? { brand: token.brands[0] } : {}),
      ...(token.fundingType ? { fundingType: token.fundingType } : {}),
      ...(token.countryCode ? { countryCode: token.countryCode } : {}),
    },
    _links: { self: { href } },
  };
}
