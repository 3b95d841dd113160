import { cardFingerprint } from '../cards/card-crypto';
import { visibleLeadingDigits } from '../cards/mask';
import { resolveCard, type CardDeps, type ResolvedCard } from '../cards/resolve-card';
import { findToken, openCard, sealCard, type CardDetails } from '../cards/token-card';
import type { TokenKeys } from '../cards/card-crypto';
import type { Environment } from '../config/settings';
import { failed, ok, type FieldError, type Result } from '../failures';
import { isIsoDateTime } from '../schemas/fields';
import { entityRule } from '../merchants/entity-rules';
import type { MerchantConfig } from '../merchants/merchant-config';
import { settleLease, type NamespaceGuardApi, type TokenGuardApi } from '../storage/guards/clients';
import type { TokenRecord } from '../storage/token-store';
import { conflictsOf, isoSeconds, wholeSeconds, type TokenView } from './token-resource';
import { DEFAULT_TOKEN_TTL_MS, extendIfDue, guardOf, keepConflict, tombstoneOf } from './token-updates';

/**
 * The token resource (docs/tokens.md, in the shape of Worldpay's tokens document): a token
 * stands for one card number of one merchant. Each step takes its dependencies and answers a
 * result; no Request or Response here.
 *
 * Writes are ordered so that a failure at any one of them leaves the old state or one that the
 * client's retry completes: POST claims the card in its guard object before it writes the token
 * record (a failed write is written by the next request for the card, under the same token id,
 * never orphaned); DELETE retires the token in the guard before it replaces the record by a
 * tombstone (a retry finds the record or the tombstone and ends in 204, and a POST for the card
 * finishes an unfinished deletion before it makes the new token). The tombstone has a key of its
 * own, so a token record write that lands late never brings a deleted token back.
 */

/** Tokens may not be asked to live longer than this. */
export const MAX_TOKEN_TTL_MS = DEFAULT_TOKEN_TTL_MS.live;

export interface TokenDeps extends CardDeps {
  environment: Environment;
  /** Work to finish after the answer is sent (ExecutionContext.waitUntil). */
  background(work: Promise<unknown>): void;
  /** The guard of a merchant's card in a namespace (none: the card's own). */
  guardFor(username: string, fingerprint: string, namespace: string | undefined): TokenGuardApi;
  /** The index of a merchant's namespace. */
  namespaceFor(username: string, namespace: string): NamespaceGuardApi;
}

export interface NewTokenRequest {
  paymentInstrument: CardDetails;
  description?: string;
  /** ISO 8601, already checked to be a real date and time. */
  tokenExpiryDateTime?: string;
  namespace?: string;
  schemeTransactionReference?: string;
}

export interface TokenAnswer {
  token: TokenView;
  card: Pick<CardDetails, 'cardHolderName' | 'billingAddress'>;
}

export interface CreatedToken extends TokenAnswer {
  /**
   * `created` (201): this request made the token. `existing` (200): the card's token, whose
   * details this request matches. `conflict` (409): the card's token, with `conflicts` listing
   * what this request sent differently (the token keeps its details).
   */
  status: 'created' | 'existing' | 'conflict';
  conflicts?: Record<string, unknown>;
  /** The kept conflict (a 409): its id, for the `tokens:conflicts` link, and its end. */
  conflict?: { id: string; expiresAt: number };
  masked: string;
}

/**
 * The field error of a requested `tokenExpiryDateTime` that is not in the future or more than 4
 * years away; checked with the schema, so that it comes with the other field errors.
 */
export function tokenExpiryErrors(input: unknown, now: number): FieldError[] {
  const value = (input as { tokenExpiryDateTime?: unknown } | null)?.tokenExpiryDateTime;
  if (typeof value !== 'string' || !isIsoDateTime(value)) return [];
  const requested = Date.parse(value);
  if (requested > now && requested <= now + MAX_TOKEN_TTL_MS) return [];
  return [
    {
      errorName: 'fieldHasInvalidValue',
      message: 'The token expiry must be in the future and at most 4 years away.',
      jsonPath: '$.tokenExpiryDateTime',
    },
  ];
}

/** Worldpay's token id alphabet: digits and capitals without I and O. */
const TOKEN_ID_ALPHABET = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const TOKEN_ID_LENGTH = 21;

/** A token id: 21 characters of Worldpay's alphabet (about 107 random bits), without modulo bias. */
export function newTokenId(): string {
  let out = '';
  while (out.length < TOKEN_ID_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      // 238 = 7 × 34: bytes from 238 up would favour the first characters.
      if (byte < 238 && out.length < TOKEN_ID_LENGTH) out += TOKEN_ID_ALPHABET[byte % 34];
    }
  }
  return out;
}

/**
 * Tokenizes a card, or answers the merchant's token for its number: 200 when this request's
 * details match it, 409 with the conflicts when they do not. A burst of identical requests gives
 * one token: the card's guard decides which.
 */
export async function createToken(
  deps: TokenDeps,
  merchant: MerchantConfig,
  entityId: string,
  request: NewTokenRequest,
): Promise<Result<CreatedToken>> {
  const entity = entityRule(merchant, entityId);
  if (!entity.ok) return entity;
  const { username } = merchant;
  const card = request.paymentInstrument;
  const resolved = await resolveCard(
    deps,
    { username, entity: entity.value },
    { type: 'card/front', ...card },
    { hrefPath: '$.paymentInstrument', pciFeature: 'card numbers (tokenize from a PCI-compliant entity)' },
  );
  if (!resolved.ok) return resolved;
  if (resolved.value.brands.length === 0) return failed({ kind: 'unrecognizedCardBrand' });
  // An expired card is tokenized, as Worldpay's schema allows: using the token then answers
  // underlyingPaymentInstrumentHasExpired. A requested expiry was checked with the schema
  // (tokenExpiryErrors).
  const requested = request.tokenExpiryDateTime === undefined ? undefined : Date.parse(request.tokenExpiryDateTime);
  const keys = await deps.tokenKeys();
  const fingerprint = await cardFingerprint(keys, username, card.cardNumber);
  // A namespace holds at most 16 cards: the card takes its place there before its token is made.
  const index = request.namespace === undefined ? undefined : deps.namespaceFor(username, request.namespace);
  if (index && (await index.reserve(fingerprint, deps.now, username, request.namespace!)) === 'full') {
    return failed({ kind: 'tooManyTokensForNamespace' });
  }
  const guard = deps.guardFor(username, fingerprint, request.namespace);
  const leaseId = crypto.randomUUID();
  // Whole seconds, as Worldpay writes the date and time.
  const expiresAt = wholeSeconds(requested ?? deps.now + DEFAULT_TOKEN_TTL_MS[deps.environment]);
  const view = viewOf(newTokenId(), deps.now, expiresAt, username, fingerprint, request, resolved.value);
  const candidate: TokenRecord = {
    ...view,
    sealed: await sealCard(keys, card, view),
    version: 1,
    lifeStartedAt: deps.now,
    ...(requested !== undefined ? { expiryChosen: true } : {}),
  };
  // One claim per card (its hash is the fingerprint): the guard decides the token, and this
  // request's details are compared with it here.
  const claim = await guard.claim(fingerprint, candidate, deps.now, leaseId).catch(async (e: unknown) => {
    // The claim may have been made though its answer was lost: free this request's lease, so
    // that the client's retry writes the record at once instead of waiting for the lease to end.
    await settleLease(() => guard.released(leaseId));
    throw e;
  });
  const record = claim.answer;

  // A token deleted before, whose tombstone write failed: finish its deletion first.
  if (claim.retired && claim.retired.tokenId !== record.tokenId) {
    await deps.tokens.retire(tombstoneOf(claim.retired, deps.now), deps.now);
  }
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
    // for it goes out after the answer. If the token was deleted meanwhile, its tombstone is
    // written again (the DELETE that retired it may not have got that far).
    deps.background(
      settleLease(async () => {
        if (!(await guard.recorded(leaseId))) await deps.tokens.retire(tombstoneOf(record, deps.now), deps.now);
      }),
    );
  }
  // The namespace lists the token once its record is in KV (again for an existing token: a
  // confirmation that failed before is made now).
  if (index) await index.confirm(fingerprint, record.tokenId, record.expiresAt, deps.now);
  const masked = resolved.value.masked;
  if (record.tokenId === candidate.tokenId) {
    const { sealed: _sealed, ...token } = record;
    return ok({ token, card, status: 'created', masked });
  }
  // The card's token already: used again, it may be due an extension.
  const current = await extendIfDue(deps, record);
  const { token, card: stored } = await tokenAnswer(keys, current);
  const conflicts = conflictsOf(
    { ...stored, schemeTransactionReference: current.schemeTransactionReference },
    { ...card, schemeTransactionReference: request.schemeTransactionReference },
  );
  if (!conflicts) return ok({ token, card: stored, status: 'existing', masked });
  const conflict = await keepConflict(deps, current, conflicts);
  return ok({ token, card: stored, status: 'conflict', conflicts, ...(conflict ? { conflict } : {}), masked });
}

/** The token as this request describes it. */
function viewOf(
  tokenId: string,
  createdAt: number,
  expiresAt: number,
  username: string,
  fingerprint: string,
  request: NewTokenRequest,
  resolved: ResolvedCard,
): TokenView {
  const { cardNumber, cardExpiryDate } = request.paymentInstrument;
  const record = resolved.match?.record;
  return {
    tokenId,
    username,
    fingerprint,
    maskedCardNumber: resolved.masked,
    cardExpiryDate,
    ...(visibleLeadingDigits(cardNumber.length) === 6 ? { bin: cardNumber.slice(0, 6) } : {}),
    brands: [...resolved.brands],
    ...(record?.fundingType ? { fundingType: record.fundingType } : {}),
    ...(record?.countryCode ? { countryCode: record.countryCode } : {}),
    // Worldpay makes one up when none is sent; ours names the day, not the card.
    description: request.description ?? `Token created ${new Date(createdAt).toISOString().slice(0, 10)}`,
    ...(request.namespace !== undefined ? { namespace: request.namespace } : {}),
    ...(request.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: request.schemeTransactionReference }
      : {}),
    tokenExpiryDateTime: isoSeconds(expiresAt),
    createdAt,
    expiresAt,
  };
}

/** The merchant's live token with its card details, or resourceNotFound (Worldpay's 404). */
export async function getToken(deps: TokenDeps, username: string, tokenId: string): Promise<Result<TokenAnswer>> {
  const found = await findToken(deps.tokens, username, tokenId, deps.now);
  if (!found) return failed({ kind: 'resourceNotFound' });
  // An inquiry is a use: a token past half its life is extended, and the answer shows it.
  return ok(await tokenAnswer(await deps.tokenKeys(), await extendIfDue(deps, found)));
}

/** A token as answered: its record without the sealed card, and the card opened. */
export async function tokenAnswer(keys: TokenKeys, record: TokenRecord): Promise<TokenAnswer & { card: CardDetails }> {
  const { sealed: _sealed, ...token } = record;
  return { token, card: await openCard(keys, record) };
}

/**
 * Deletes the merchant's token: retires it in the card's guard (a new POST of the card makes a
 * new token, and finishes this deletion if it is still unfinished), then writes its tombstone and
 * deletes its record. A retry after any failure ends in 204; so does a repeated DELETE while the
 * tombstone lives (until the token would have expired). The first read is of a key written by POST: in another Cloudflare
 * location a token made less than a minute before may not be visible yet (404), as for GET.
 *
 * KV allows one write per second to a key, so a burst of identical DELETEs writes once: the guard
 * gives the tombstone's write to one of them (the others wait, then answer 204 once it is
 * confirmed), and a DELETE that finds the tombstone deletes the record only if it is still there.
 */
export async function deleteToken(deps: TokenDeps, username: string, tokenId: string): Promise<Result<void>> {
  const { tombstone, record } = await deps.tokens.keys(tokenId, deps.now);
  if ((tombstone ?? record)?.username !== username) return failed({ kind: 'resourceNotFound' });
  if (tombstone) {
    // Deleted already: a retry after the record's deletion failed finishes it.
    if (record) await deps.tokens.forgetRecord(tokenId);
    if (tombstone.namespace !== undefined) await deps.namespaceFor(username, tombstone.namespace).remove(tokenId);
    return ok(undefined);
  }
  const live = record!;
  const guard = guardOf(deps, live);
  const leaseId = crypto.randomUUID();
  const turn = await guard.retire(tokenId, deps.now, leaseId).catch(async (e: unknown) => {
    // The lease may have been taken though the answer was lost: free it for the burst and the retry.
    await settleLease(() => guard.released(leaseId));
    throw e;
  });
  if (turn === 'write') {
    try {
      await deps.tokens.retire(tombstoneOf(live, deps.now), deps.now);
    } catch (e) {
      // The next DELETE writes it at once (a tombstone landing late changes nothing).
      await settleLease(() => guard.released(leaseId));
      throw e;
    }
    deps.background(settleLease(() => guard.retirementRecorded(leaseId)));
  }
  // Its place in its namespace is free (a retry frees it again; a listing skips a deleted token).
  if (live.namespace !== undefined) await deps.namespaceFor(username, live.namespace).remove(tokenId);
  return ok(undefined);
}
