import { toBase64Url } from '../bytes';
import { keyedHash, open, seal, type TokenKeys } from '../cards/card-crypto';
import { openCard, sealCard, type BillingAddress, type CardDetails } from '../cards/token-card';
import type { SealedValue } from '../records/sealed-value';
import type { TokenRecord } from '../records/token-record';
import { conflictsOf, isoSeconds, wholeSeconds, type ConflictingDetails } from './token-resource';

/**
 * How a token changes (docs/tokens.md "Updates", "Conflicts", "Lifetime"): one attribute per
 * update, the conflicts a second tokenization found, accepted all at once, and the extension of a
 * token's lifetime when it is used past half of it. Pure rules over a record, the keys and a
 * clock: the token's owning object (src/tokens/token-group.ts) applies them, one change
 * at a time.
 */

/** The attributes Worldpay lets a merchant update, one per call. */
export type TokenChange =
  | { attribute: 'cardHolderName'; value: string }
  | { attribute: 'cardExpiryDate'; value: { month: number; year: number } }
  | { attribute: 'billingAddress'; value: BillingAddress }
  | { attribute: 'description'; value: string }
  | { attribute: 'schemeTransactionReference'; value: string };

/** Several attributes at once: the details of a conflict, accepted together. */
export type ChangeSet = Partial<ConflictingDetails> & { description?: string };

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the conflicts a second tokenization found can be read and accepted. */
export const CONFLICT_LIFETIME_MS = 30 * 60 * 1000;

/** Default token lifetime: 7 days in `test`, 4 years in `live` (Worldpay's v1 defaults). */
export const DEFAULT_TOKEN_TTL_MS = { test: 7 * DAY_MS, live: Math.round(4 * 365.25 * DAY_MS) } as const;

/**
 * Whether the token already holds what `change` sets (the same PUT again, or one of a burst of
 * identical ones): it then changes nothing (docs/tokens.md "Updates").
 */
export async function holdsAlready(keys: TokenKeys, current: TokenRecord, change: TokenChange): Promise<boolean> {
  if (change.attribute === 'description') return current.description === change.value;
  const sealedOne = change.attribute === 'cardHolderName' || change.attribute === 'billingAddress';
  const card = sealedOne ? await openCard(keys, current) : undefined;
  const stored: ConflictingDetails = {
    cardExpiryDate: current.cardExpiryDate,
    ...(current.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: current.schemeTransactionReference }
      : {}),
    ...(card?.cardHolderName !== undefined ? { cardHolderName: card.cardHolderName } : {}),
    ...(card?.billingAddress !== undefined ? { billingAddress: card.billingAddress } : {}),
  };
  return (
    conflictsOf(stored, { cardExpiryDate: current.cardExpiryDate, [change.attribute]: change.value }) === undefined
  );
}

/** The record with a set of changes applied at `now` (the sealed card opened and sealed again if needed). */
export async function applied(
  keys: TokenKeys,
  current: TokenRecord,
  changes: ChangeSet,
  now: number,
): Promise<TokenRecord> {
  const next: TokenRecord = {
    ...current,
    updatedAt: now,
    ...(changes.cardExpiryDate ? { cardExpiryDate: changes.cardExpiryDate } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: changes.schemeTransactionReference }
      : {}),
  };
  if (changes.cardHolderName === undefined && changes.billingAddress === undefined) return next;
  const card: CardDetails = {
    ...(await openCard(keys, current)),
    ...(changes.cardHolderName !== undefined ? { cardHolderName: changes.cardHolderName } : {}),
    ...(changes.billingAddress !== undefined ? { billingAddress: changes.billingAddress } : {}),
  };
  return { ...next, sealed: await sealCard(keys, card, current) };
}

/** What accepting a conflict changes: every detail it holds, at once. */
export function changesOfConflict(conflicts: Record<string, unknown>): ChangeSet {
  const sent = conflicts as { paymentInstrument?: Partial<ConflictingDetails>; schemeTransactionReference?: string };
  return {
    ...sent.paymentInstrument,
    ...(sent.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: sent.schemeTransactionReference }
      : {}),
  };
}

// --- conflicts ---------------------------------------------------------------------------------

/** The sealed conflict's additional data: it opens only for its own token. */
const conflictAad = (r: Pick<TokenRecord, 'tokenId' | 'username'>): string =>
  `${r.username}\u0000${r.tokenId}\u0000conflicts`;

/**
 * The conflicts a second tokenization found, sealed (they may hold a name and an address), with
 * the keyed hash that recognises the same differences again.
 */
export async function sealedConflict(
  keys: TokenKeys,
  record: Pick<TokenRecord, 'tokenId' | 'username'>,
  conflicts: Record<string, unknown>,
): Promise<{ valuesHash: string; sealed: SealedValue }> {
  const text = JSON.stringify(conflicts);
  return {
    valuesHash: await keyedHash(keys, `conflicts\u0000${record.tokenId}\u0000${text}`),
    sealed: await seal(keys, text, conflictAad(record)),
  };
}

/** The conflicts sealed by {@link sealedConflict}, opened. */
export async function openedConflict(
  keys: TokenKeys,
  record: Pick<TokenRecord, 'tokenId' | 'username'>,
  sealed: SealedValue,
): Promise<Record<string, unknown>> {
  return JSON.parse(await open(keys, sealed, conflictAad(record))) as Record<string, unknown>;
}

/** A conflict id: 22 base64url characters of randomness (128 bits). */
export function newConflictId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

// --- lifetime ----------------------------------------------------------------------------------

/**
 * Whether a token is due an extension: its expiry is the default one (not chosen by the merchant)
 * and more than half of its lifetime has passed.
 */
export function extensionDue(record: TokenRecord, now: number): boolean {
  if (record.expiryChosen) return false;
  const started = record.lifeStartedAt ?? record.createdAt;
  return now >= started + (record.expiresAt - started) / 2 && now < record.expiresAt;
}

/**
 * The record extended by `lifetimeMs` (the environment's default lifetime) from now when it is
 * due (a token used past half its life: an inquiry, an update, a lookup or 3DS with it), as
 * Worldpay's v1 tokens are; else the record itself. An extension is not an update that counts
 * toward the limit.
 */
export function extended(record: TokenRecord, now: number, lifetimeMs: number): TokenRecord {
  if (!extensionDue(record, now)) return record;
  // Whole seconds, as Worldpay writes the date and time.
  const expiresAt = wholeSeconds(now + lifetimeMs);
  return { ...record, expiresAt, tokenExpiryDateTime: isoSeconds(expiresAt), lifeStartedAt: now };
}
