import type { CardDetails } from '../cards/token-card';
import { objectClient, type FailedCall, type ObjectNamespace, type Remote } from '../storage/object-client';
import type { TokenView } from './token-resource';
import type { TokenRecord } from '../records/token-record';
import { parseReference } from './token-ids';
import type { TokenChange } from './token-updates';

/**
 * The RPC interface of a token group's Durable Object (src/tokens/token-group.ts): what the
 * object answers and what the token steps call, in a file below both. The steps reach the object
 * only through {@link TokenGroupApi} (never its class), and the object implements
 * {@link TokenGroupMethods} (docs/README.md "The layers").
 */

/** Worldpay's limit: at most 16 cards in a namespace. */
export const MAX_NAMESPACE_CARDS = 16;

/** What the Worker knows of a new token: everything the request and the BIN index say. */
export interface TokenTemplate {
  maskedCardNumber: string;
  cardExpiryDate: { month: number; year: number };
  bin?: string;
  brands: TokenRecord['brands'];
  fundingType?: TokenRecord['fundingType'];
  countryCode?: string;
  description?: string;
  schemeTransactionReference?: string;
  /** A chosen expiry (ms, already checked); else the environment's default lifetime. */
  requestedExpiry?: number;
  /** The entity that asks, and the base of the token's href: what its events say. */
  entity: string;
  hrefBase: string;
}

/** A token as the Worker answers it: the record without the sealed card, the card opened, its reference. */
export interface OwnedToken {
  token: TokenView;
  card: CardDetails;
  /** The last segment of its href (token-ids.ts). */
  reference: string;
}

export type CreateOutcome =
  /** This request made the token (201). */
  | ({ kind: 'created' } & OwnedToken)
  /** The card's token already, with the details this request sent (200). */
  | ({ kind: 'existing' } & OwnedToken)
  /** The card's token already, with other details: kept as a conflict to accept (409). */
  | ({
      kind: 'conflict';
      conflicts: Record<string, unknown>;
      conflict: { id: string; expiresAt: number };
    } & OwnedToken)
  /** A namespace that holds 16 other cards (403). */
  | { kind: 'full' };

export type ChangeOutcome =
  | { kind: 'changed' }
  /** Not the merchant's live token, or the conflict is unknown or over (404). */
  | { kind: 'gone' }
  /** 50 updates in the last 30 days: the next is possible in `retryAfterSeconds` (429). */
  | { kind: 'limited'; retryAfterSeconds: number };

/**
 * The object's RPC methods as the object implements them. Each may answer a domain failure it
 * met (a token key no longer configured) as a value, a {@link FailedCall} that the client throws
 * again: {@link TokenGroupApi}'s callers never see one.
 */
export interface TokenGroupMethods {
  create(
    username: string,
    namespace: string | undefined,
    fingerprint: string,
    card: CardDetails,
    template: TokenTemplate,
  ): Promise<CreateOutcome | FailedCall>;
  read(username: string, tokenId: string): Promise<OwnedToken | undefined | FailedCall>;
  list(username: string, tokenId?: string): Promise<OwnedToken[] | FailedCall>;
  update(username: string, tokenId: string, change: TokenChange): Promise<ChangeOutcome | FailedCall>;
  conflict(username: string, tokenId: string, conflictId: string): Promise<OpenConflict | undefined | FailedCall>;
  acceptConflict(username: string, tokenId: string, conflictId: string): Promise<ChangeOutcome | FailedCall>;
  remove(username: string, tokenId: string): Promise<'deleted' | 'gone' | FailedCall>;
}

/** A live, unused conflict of a token, with the token (docs/tokens.md "Conflicts"). */
export type OpenConflict = OwnedToken & { conflicts: Record<string, unknown>; expiresAt: number };

/** A token group as the steps call it: every method answers a promise. */
export type TokenGroupApi = Remote<TokenGroupMethods>;

/**
 * The name of the object that owns a merchant's token for a card: the namespace's object when
 * there is a namespace (it holds the namespace's cards), else the card's own (the merchant and
 * the keyed hash of the card). A username holds no `:`.
 */
export const tokenGroupName = (username: string, of: { namespace: string } | { fingerprint: string }): string =>
  'namespace' in of ? `namespace:${username}:${of.namespace}` : `card:${username}:${of.fingerprint}`;

/** The object that owns (or will own) the merchant's token for a card, by its name. */
export function tokenGroup(
  ns: ObjectNamespace,
  username: string,
  of: { namespace: string } | { fingerprint: string },
  timeoutMs: number,
): TokenGroupApi {
  const id = ns.idFromName(tokenGroupName(username, of));
  return objectClient<TokenGroupApi>(() => ns.get(id), 'TokenGroup', timeoutMs);
}

/**
 * The object that owns a token and the token's id, from the token's reference (the last segment
 * of its href); undefined when the reference names none.
 */
export function tokenGroupOfReference(
  ns: ObjectNamespace,
  reference: string,
  timeoutMs: number,
): { owner: TokenGroupApi; tokenId: string } | undefined {
  const parsed = parseReference(reference);
  if (parsed === undefined) return undefined;
  let objectId: DurableObjectId;
  try {
    objectId = ns.idFromString(parsed.ownerId);
  } catch {
    return undefined;
  }
  return {
    owner: objectClient<TokenGroupApi>(() => ns.get(objectId), 'TokenGroup', timeoutMs),
    tokenId: parsed.tokenId,
  };
}
