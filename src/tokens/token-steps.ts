import { cardFingerprint, type TokenKeys } from '../cards/card-crypto';
import { visibleLeadingDigits } from '../mask';
import { resolveCard, type CardDeps, type ResolvedCard } from '../cards/resolve-card';
import type { CardDetails } from '../cards/token-card';
import { failed, ok, type FieldError, type Result } from '../failures';
import { isIsoDateTime } from '../schemas/fields';
import { entityRule } from '../merchants/entity-rules';
import type { MerchantConfig } from '../merchants/merchant-config';
import type { TokenGroupApi } from './token-group-api';
import type { OpenConflict, OwnedToken, TokenTemplate } from './token-group-api';
import type { TokenRecord } from '../records/token-record';
import type { TokenView } from './token-resource';
import { DEFAULT_TOKEN_TTL_MS, type TokenChange } from './token-updates';

/**
 * The token resource (docs/tokens.md, in the shape of Worldpay's tokens document): a token
 * stands for one card number of one merchant. Each step takes its dependencies and answers a
 * result; no Request or Response here.
 *
 * Every step asks the one object that owns the token (src/tokens/token-group.ts): the
 * card's, or its namespace's, reached by the card's keyed hash on creation and by the token's id
 * afterwards. The object decides and answers; KV is its projection, which no step here writes or
 * reads. A failure to reach the object answers 503 and changed nothing, or changed what the
 * client's retry then finds done.
 */

/** Tokens may not be asked to live longer than this. */
export const MAX_TOKEN_TTL_MS = DEFAULT_TOKEN_TTL_MS.live;

export interface TokenDeps extends CardDeps {
  tokenKeys: () => Promise<TokenKeys>;
  /** The object that owns the merchant's tokens of a namespace, or of a card outside any (its keyed hash). */
  ownerFor(username: string, of: { namespace: string } | { fingerprint: string }): TokenGroupApi;
  /** The object that owns a token and the token's id, from its reference (its href's last segment). */
  ownerOf(reference: string): { owner: TokenGroupApi; tokenId: string } | undefined;
  /** The token's record as KV's projection has it (it may lag its object), to locate a token by id alone. */
  projectedToken(tokenId: string): Promise<TokenRecord | undefined>;
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
  /** The last segment of its href (src/tokens/token-ids.ts). */
  reference: string;
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

/**
 * Tokenizes a card, or answers the merchant's token for its number: 200 when this request's
 * details match it, 409 with the conflicts when they do not. A burst of identical requests gives
 * one token: the object that owns the card's token decides, one request at a time.
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
  const fingerprint = await cardFingerprint(await deps.tokenKeys(), username, card.cardNumber);
  const { namespace } = request;
  const owner = deps.ownerFor(username, namespace !== undefined ? { namespace } : { fingerprint });
  const template = { ...templateOf(request, resolved.value), entity: entityId, hrefBase: deps.baseUrl };
  const outcome = await owner.create(username, namespace, fingerprint, card, template);
  const masked = resolved.value.masked;
  switch (outcome.kind) {
    case 'full':
      return failed({ kind: 'tooManyTokensForNamespace' });
    case 'created':
    case 'existing': {
      const { token, card: stored, reference } = outcome;
      return ok({ token, card: stored, reference, status: outcome.kind, masked });
    }
    case 'conflict': {
      const { token, card: stored, reference, conflicts, conflict } = outcome;
      return ok({ token, card: stored, reference, status: 'conflict', conflicts, conflict, masked });
    }
  }
}

/** The token as this request describes it: what the object does not decide itself. */
function templateOf(request: NewTokenRequest, resolved: ResolvedCard): Omit<TokenTemplate, 'entity' | 'hrefBase'> {
  const { cardNumber, cardExpiryDate } = request.paymentInstrument;
  const record = resolved.match?.record;
  return {
    maskedCardNumber: resolved.masked,
    cardExpiryDate,
    ...(visibleLeadingDigits(cardNumber.length) === 6 ? { bin: cardNumber.slice(0, 6) } : {}),
    brands: [...resolved.brands],
    ...(record?.fundingType ? { fundingType: record.fundingType } : {}),
    ...(record?.countryCode ? { countryCode: record.countryCode } : {}),
    ...(request.description !== undefined ? { description: request.description } : {}),
    ...(request.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: request.schemeTransactionReference }
      : {}),
    ...(request.tokenExpiryDateTime !== undefined ? { requestedExpiry: Date.parse(request.tokenExpiryDateTime) } : {}),
  };
}

/**
 * The merchant's live token with its card, or resourceNotFound (Worldpay's 404). An inquiry is a
 * use: a token past half its life is extended, and the answer shows it.
 */
export async function getToken(deps: TokenDeps, username: string, reference: string): Promise<Result<OwnedToken>> {
  const at = deps.ownerOf(reference);
  const found = await at?.owner.read(username, at.tokenId);
  return found ? ok(found) : failed({ kind: 'resourceNotFound' });
}

/**
 * Deletes the merchant's token: 404 at once on every path from then on, and the card free for a
 * new token. A retry, or a repeated DELETE while the token would have lived, ends in 204.
 */
export async function deleteToken(deps: TokenDeps, username: string, reference: string): Promise<Result<void>> {
  const at = deps.ownerOf(reference);
  const outcome = await at?.owner.remove(username, at.tokenId);
  return outcome === 'deleted' ? ok(undefined) : failed({ kind: 'resourceNotFound' });
}

/**
 * One attribute of the merchant's token (Worldpay's `PUT` on the token's link for it): 204, 404
 * for a token that is not the merchant's live token, 429 past 50 updates in 30 days.
 */
export async function updateToken(
  deps: TokenDeps,
  username: string,
  reference: string,
  change: TokenChange,
): Promise<Result<void>> {
  const at = deps.ownerOf(reference);
  return changed(await at?.owner.update(username, at.tokenId, change));
}

/** A live conflict of the merchant's token, with the token as it stands; undefined when unknown, used or over. */
export async function readConflict(
  deps: TokenDeps,
  username: string,
  reference: string,
  conflictId: string,
): Promise<OpenConflict | undefined> {
  const at = deps.ownerOf(reference);
  return at?.owner.conflict(username, at.tokenId, conflictId);
}

/**
 * Accepts a conflict (Worldpay's `PUT` on `tokens:conflicts`): the token takes every conflicting
 * value at once, as one update (it counts toward the limit), and the conflict is used up.
 */
export async function acceptConflict(
  deps: TokenDeps,
  username: string,
  reference: string,
  conflictId: string,
): Promise<Result<void>> {
  const at = deps.ownerOf(reference);
  return changed(await at?.owner.acceptConflict(username, at.tokenId, conflictId));
}

function changed(outcome: Awaited<ReturnType<TokenGroupApi['update']>> | undefined): Result<void> {
  if (outcome?.kind === 'changed') return ok(undefined);
  if (outcome?.kind === 'limited')
    return failed({ kind: 'maximumUpdatesExceeded', retryAfter: outcome.retryAfterSeconds });
  return failed({ kind: 'resourceNotFound' });
}
