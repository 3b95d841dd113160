import { resolveCard, type ResolvedCard } from '../cards/resolve-card';
import type { EntityConfig } from '../config/merchants';
import type { Environment } from '../config/settings';
import { failed, fieldFailure, ok, type Result } from '../failures';
import { settleLease, type TokenGuardApi } from '../storage/guards/clients';
import {
  isTombstone,
  TOMBSTONE_TTL_MS,
  type TokenRecord,
  type TokenStore,
  type TokenTombstone,
} from '../storage/token-store';
import { toBase64Url } from '../bytes';
import { visibleLeadingDigits } from '../cards/mask';
import { cardHasExpired, findToken, openCard, sealCard, type CardDetails } from './token-card';
import { cardFingerprint, keyedHash, type TokenKeys } from './token-crypto';

/**
 * The token resource (CONTRACT.md §4): tokens stand for a card of one merchant. Each step takes
 * its dependencies and answers a result; no Request or Response here.
 *
 * Writes are ordered so that a failure at any one of them leaves the old state or one that the
 * client's retry completes: POST claims the card in its guard object before it writes the token
 * record (a failed write is written by the next request for the card, under the same token id,
 * never orphaned); DELETE retires the token in the guard before it replaces the record by a
 * tombstone (a retry finds the record or the tombstone and ends in 204, and a POST for the card
 * finishes an unfinished deletion before it makes the new token).
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
  const leaseId = crypto.randomUUID();
  const expiresAt = requested ?? deps.now + DEFAULT_TOKEN_TTL_MS[deps.environment];
  const view = viewOf(
    newTokenId(),
    deps.now,
    expiresAt,
    username,
    fingerprint,
    card,
    resolved.value,
    request.description,
  );
  const candidate: TokenRecord = { ...view, sealed: await sealCard(keys, card, view) };
  const claim = await guard.claim(details, candidate, deps.now, leaseId).catch(async (e: unknown) => {
    // The claim may have been made though its answer was lost: free this request's lease, so
    // that the client's retry writes the record at once instead of waiting for the lease to end.
    await settleLease(() => guard.released(leaseId));
    throw e;
  });
  const record = claim.answer;

  // A token deleted before, whose tombstone write failed: finish its deletion first.
  if (claim.retired && claim.retired.tokenId !== record.tokenId)
    await deps.tokens.put(tombstoneOf(claim.retired, deps.now), deps.now);
  if (claim.kind === 'write') {
    // This request holds the write lease of the claim's record (its own candidate's, or the
    // stored one that a failed request left unwritten).
    try {
      await deps.tokens.put(record, deps.now);
    } catch (e) {
      await settleLease(() => guard.released(leaseId));
      throw e;
    }
    // The record is in KV, so the answer stands; the confirmation that releases requests waiting
    // for it goes out after the answer. If the token was deleted meanwhile, its record is put
    // back to a tombstone (a DELETE may have written its tombstone before this write landed).
    deps.background(
      settleLease(async () => {
        if (!(await guard.recorded(leaseId))) await deps.tokens.put(tombstoneOf(record, deps.now), deps.now);
      }),
    );
  }
  const { sealed: _sealed, ...token } = record;
  return ok({
    token,
    // A conflicting request is answered the token as stored, with its own cardholder name.
    cardHolderName: claim.conflict ? (await openCard(keys, record)).cardHolderName : card.cardHolderName,
    // 201 when this request wrote the token's record, that is, made the token usable.
    created: claim.kind === 'write' && !claim.conflict,
    card: resolved.value.masked,
  });
}

/** The token as this request describes it. */
function viewOf(
  tokenId: string,
  createdAt: number,
  expiresAt: number,
  username: string,
  fingerprint: string,
  card: CardDetails,
  resolved: ResolvedCard,
  description: string | undefined,
): TokenView {
  const record = resolved.match?.record;
  return {
    tokenId,
    username,
    fingerprint,
    maskedCardNumber: resolved.masked,
    cardExpiryDate: card.cardExpiryDate,
    bin: card.cardNumber.slice(0, visibleLeadingDigits(card.cardNumber.length)),
    brands: [...resolved.brands],
    ...(record?.fundingType ? { fundingType: record.fundingType } : {}),
    ...(record?.countryCode ? { countryCode: record.countryCode } : {}),
    ...(description !== undefined ? { description } : {}),
    tokenExpiryDateTime: new Date(expiresAt).toISOString(),
    createdAt,
    expiresAt,
  };
}

/** What is left of a deleted token: no card data, kept a day so a retried DELETE still succeeds. */
function tombstoneOf(record: Pick<TokenRecord, 'tokenId' | 'username' | 'expiresAt'>, now: number): TokenTombstone {
  return {
    tokenId: record.tokenId,
    username: record.username,
    deletedAt: now,
    expiresAt: Math.min(record.expiresAt, now + TOMBSTONE_TTL_MS),
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
 * Deletes the merchant's token: retires it in the card's guard (a new POST of the card makes a
 * new token, and finishes this deletion if it is still unfinished), then replaces the record by a
 * tombstone. A retry after any failure ends in 204; so does a repeated DELETE while the
 * tombstone lives (a day). The first read is of a key written by POST: in another Cloudflare
 * location a token made less than a minute before may not be visible yet (404), as for GET.
 */
export async function deleteToken(deps: TokenDeps, username: string, tokenId: string): Promise<Result<void>> {
  const record = await deps.tokens.get(tokenId, deps.now);
  if (!record || record.username !== username) return failed({ kind: 'tokenNotFound' });
  if (isTombstone(record)) return ok(undefined);
  await deps.guardFor(username, record.fingerprint).retire(tokenId, deps.now);
  await deps.tokens.put(tombstoneOf(record, deps.now), deps.now);
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
