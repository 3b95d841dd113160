import { toBase64Url } from '../bytes';
import { keyedHash, open, seal } from '../cards/card-crypto';
import { openCard, sealCard, type BillingAddress, type CardDetails } from '../cards/token-card';
import { failed, ok, type Result } from '../failures';
import { settleLease, type TokenGuardApi } from '../storage/guards/clients';
import { StorageError } from '../storage/storage-error';
import type { TokenRecord, TokenTombstone } from '../storage/token-store';
import { conflictsOf, isoSeconds, wholeSeconds, type ConflictingDetails } from './token-resource';
import type { TokenDeps } from './token-steps';

/**
 * Changing a token (docs/tokens.md "Updates", "Conflicts", "Lifetime"): one attribute per update,
 * the conflicts a second tokenization found, accepted all at once, and the extension of a token's
 * lifetime when it is used past half of it. Every change is the same compare-and-set in the
 * card's TokenGuard (src/storage/guards/token-guard.ts), then the KV write of the new record under
 * its lease: updates are serialised and each builds on the last, whatever arrives at once.
 */

/** The attributes Worldpay lets a merchant update, one per call. */
export type TokenChange =
  | { attribute: 'cardHolderName'; value: string }
  | { attribute: 'cardExpiryDate'; value: { month: number; year: number } }
  | { attribute: 'billingAddress'; value: BillingAddress }
  | { attribute: 'description'; value: string }
  | { attribute: 'schemeTransactionReference'; value: string };

/** Several attributes at once: the details of a conflict, accepted together. */
type ChangeSet = Partial<ConflictingDetails> & { description?: string };

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the conflicts a second tokenization found can be read and accepted. */
export const CONFLICT_LIFETIME_MS = 30 * 60 * 1000;
/** How many times an update is tried again when the record changed under it. */
const ATTEMPTS = 5;

/** The card's guard: its name is the merchant, the card's keyed hash and the namespace. */
export function guardOf(
  deps: TokenDeps,
  record: Pick<TokenRecord, 'username' | 'fingerprint' | 'namespace'>,
): TokenGuardApi {
  return deps.guardFor(record.username, record.fingerprint, record.namespace);
}

/** What is left of a deleted token: no card data (docs/storage.md "KV keys"). */
export function tombstoneOf(
  record: Pick<TokenRecord, 'tokenId' | 'username' | 'expiresAt' | 'namespace'>,
  now: number,
): TokenTombstone {
  return {
    tokenId: record.tokenId,
    username: record.username,
    deletedAt: now,
    expiresAt: record.expiresAt,
    ...(record.namespace !== undefined ? { namespace: record.namespace } : {}),
  };
}

/**
 * Writes the next version of a token: takes the record's lease from the card's guard with its
 * latest version (callers queue there, one at a time, so a burst of updates is served in turn,
 * each building on the last), builds the next version from it, sets it in the guard, writes it to
 * KV and, after the answer, confirms it. A KV write that failed keeps its lease until it runs out
 * (10 s), so that the failed write, if it lands late, lands before the next version's write
 * starts; the retry then writes the latest version.
 */
export async function rewriteToken(
  deps: TokenDeps,
  located: TokenRecord,
  build: (current: TokenRecord) => Promise<TokenRecord>,
  options: { counted: boolean; conflictId?: string },
): Promise<Result<TokenRecord>> {
  const guard = guardOf(deps, located);
  const leaseId = crypto.randomUUID();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let current: TokenRecord | undefined;
    let wasRecorded: boolean;
    let built: TokenRecord;
    let outcome: Awaited<ReturnType<TokenGuardApi['update']>> | undefined;
    let next: TokenRecord | undefined;
    try {
      const held = await guard.current(located.tokenId, deps.now, leaseId);
      if (!held) return failed({ kind: 'resourceNotFound' });
      ({ record: current, wasRecorded } = held);
      built = await build(current);
      // Nothing to change (an extension another request has made meanwhile): no new version.
      if (built !== current) {
        next = { ...built, version: (current.version ?? 1) + 1 };
        outcome = await guard.update(located.tokenId, current.version ?? 1, next, deps.now, leaseId, options);
      }
    } catch (e) {
      // Nothing set (or an answer was lost, the lease's included): the next caller goes on.
      await settleLease(() => guard.released(leaseId));
      throw e;
    }
    if (outcome === undefined || next === undefined || outcome.kind === 'unchanged') {
      // Nothing to change, and the latest version is in KV: the lease goes back as it was.
      if (wasRecorded) {
        await settleLease(() => guard.recorded(leaseId));
        return ok(current);
      }
      // The latest version's writer failed: this caller writes it, as an update writes its own.
      return ok(await written(deps, guard, leaseId, current, current));
    }
    switch (outcome.kind) {
      case 'stale':
        continue;
      case 'gone':
      case 'limited':
        await settleLease(() => guard.released(leaseId));
        return outcome.kind === 'gone'
          ? failed({ kind: 'resourceNotFound' })
          : failed({ kind: 'maximumUpdatesExceeded', retryAfter: outcome.retryAfterSeconds });
      case 'write':
        return ok(await written(deps, guard, leaseId, next, current));
    }
  }
  await settleLease(() => guard.released(leaseId));
  throw new StorageError(`token ${located.tokenId} kept changing during an update`);
}

/**
 * Writes `next`, the version the caller's lease is for, to KV and confirms it after the answer.
 * A failed write throws and keeps the lease (see {@link rewriteToken}).
 */
async function written(
  deps: TokenDeps,
  guard: TokenGuardApi,
  leaseId: string,
  next: TokenRecord,
  previous: TokenRecord,
): Promise<TokenRecord> {
  await deps.tokens.put(next, deps.now);
  if (next.expiresAt !== previous.expiresAt) await indexedUntil(deps, next);
  // The record is in KV: the change stands. If the token was deleted meanwhile, its tombstone is
  // written again (this write may have landed after the deletion's).
  deps.background(
    settleLease(async () => {
      if (!(await guard.recorded(leaseId))) await deps.tokens.retire(tombstoneOf(next, deps.now), deps.now);
    }),
  );
  return next;
}

/**
 * Whether the token already holds what `change` sets (the same PUT again, or one of a burst of
 * identical ones): it then changes nothing (docs/tokens.md "Updates").
 */
async function holdsAlready(deps: TokenDeps, current: TokenRecord, change: TokenChange): Promise<boolean> {
  if (change.attribute === 'description') return current.description === change.value;
  const sealedOne = change.attribute === 'cardHolderName' || change.attribute === 'billingAddress';
  const card = sealedOne ? await openCard(await deps.tokenKeys(), current) : undefined;
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

/** The record with a set of changes applied (the sealed card opened and sealed again if needed). */
async function applied(deps: TokenDeps, current: TokenRecord, changes: ChangeSet): Promise<TokenRecord> {
  const next: TokenRecord = {
    ...current,
    updatedAt: deps.now,
    ...(changes.cardExpiryDate ? { cardExpiryDate: changes.cardExpiryDate } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: changes.schemeTransactionReference }
      : {}),
  };
  if (changes.cardHolderName === undefined && changes.billingAddress === undefined) return next;
  const keys = await deps.tokenKeys();
  const card: CardDetails = {
    ...(await openCard(keys, current)),
    ...(changes.cardHolderName !== undefined ? { cardHolderName: changes.cardHolderName } : {}),
    ...(changes.billingAddress !== undefined ? { billingAddress: changes.billingAddress } : {}),
  };
  return { ...next, sealed: await sealCard(keys, card, current) };
}

/**
 * One attribute of the merchant's token (Worldpay's `PUT` on the token's link for it): 204, 404
 * for a token that is not the merchant's live token, 429 past 50 updates in 30 days.
 */
export async function updateToken(
  deps: TokenDeps,
  record: TokenRecord,
  change: TokenChange,
): Promise<Result<TokenRecord>> {
  const changes: ChangeSet = { [change.attribute]: change.value };
  // An update is a use: a token past half its life is extended in the same version. A value the
  // token holds already changes nothing: no version, no KV write (KV takes one write a second per
  // key), not counted toward the limit.
  return rewriteToken(
    deps,
    record,
    async (current) =>
      (await holdsAlready(deps, current, change)) ? current : extended(deps, await applied(deps, current, changes)),
    { counted: true },
  );
}

// --- conflicts ---------------------------------------------------------------------------------

/** The sealed conflict's additional data: it opens only for its own token. */
const conflictAad = (r: Pick<TokenRecord, 'tokenId' | 'username'>): string =>
  `${r.username}\u0000${r.tokenId}\u0000conflicts`;

/**
 * Keeps what a second tokenization sent that differs from the token (sealed: it may hold a name
 * and an address) for {@link CONFLICT_LIFETIME_MS}, and answers the conflict's id and end. The
 * same differences again answer the conflict already kept. Undefined if the token is gone.
 */
export async function keepConflict(
  deps: TokenDeps,
  record: TokenRecord,
  conflicts: Record<string, unknown>,
): Promise<{ id: string; expiresAt: number } | undefined> {
  const keys = await deps.tokenKeys();
  const text = JSON.stringify(conflicts);
  const valuesHash = await keyedHash(keys, `conflicts\u0000${record.tokenId}\u0000${text}`);
  const candidate = {
    id: newConflictId(),
    sealed: await seal(keys, text, conflictAad(record)),
    // Whole seconds, as the answer writes the date and time.
    expiresAt: wholeSeconds(deps.now + CONFLICT_LIFETIME_MS),
  };
  return guardOf(deps, record).conflict(record.tokenId, valuesHash, candidate, deps.now);
}

/** A live conflict of the token: its details and end; undefined when unknown, used or expired. */
export async function readConflict(
  deps: TokenDeps,
  record: TokenRecord,
  conflictId: string,
): Promise<{ conflicts: Record<string, unknown>; expiresAt: number; used: boolean } | undefined> {
  const stored = await guardOf(deps, record).getConflict(record.tokenId, conflictId, deps.now);
  if (!stored) return undefined;
  const text = await open(await deps.tokenKeys(), stored.sealed, conflictAad(record));
  return {
    conflicts: JSON.parse(text) as Record<string, unknown>,
    expiresAt: stored.expiresAt,
    used: stored.used === true,
  };
}

/**
 * Accepts a conflict (Worldpay's `PUT` on `tokens:conflicts`): the token takes every conflicting
 * value at once, as one update (it counts toward the limit), and the conflict is used up.
 */
export async function acceptConflict(
  deps: TokenDeps,
  record: TokenRecord,
  conflictId: string,
): Promise<Result<TokenRecord>> {
  const found = await readConflict(deps, record, conflictId);
  if (!found) return failed({ kind: 'resourceNotFound' });
  if (found.used) return writtenAsItIs(deps, record);
  const sent = found.conflicts as {
    paymentInstrument?: Partial<ConflictingDetails>;
    schemeTransactionReference?: string;
  };
  const changes: ChangeSet = {
    ...sent.paymentInstrument,
    ...(sent.schemeTransactionReference !== undefined
      ? { schemeTransactionReference: sent.schemeTransactionReference }
      : {}),
  };
  return rewriteToken(deps, record, async (current) => extended(deps, await applied(deps, current, changes)), {
    counted: true,
    conflictId,
  });
}

/**
 * An accepted conflict, accepted again (a retry whose first answer was lost, or whose KV write
 * failed): the token's latest version, which holds the accepted values, is written to KV if it
 * is not there yet; nothing else changes.
 */
async function writtenAsItIs(deps: TokenDeps, located: TokenRecord): Promise<Result<TokenRecord>> {
  const guard = guardOf(deps, located);
  const leaseId = crypto.randomUUID();
  const latest = await guard.unwritten(located.tokenId, deps.now, leaseId);
  if (latest === undefined) return failed({ kind: 'resourceNotFound' });
  if (latest === 'recorded') return ok(located);
  return ok(await written(deps, guard, leaseId, latest, latest));
}

/** A conflict id: 22 base64url characters of randomness (128 bits). */
function newConflictId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
}

// --- lifetime ----------------------------------------------------------------------------------

/** Default token lifetime: 7 days in `test`, 4 years in `live` (Worldpay's v1 defaults). */
export const DEFAULT_TOKEN_TTL_MS = { test: 7 * DAY_MS, live: Math.round(4 * 365.25 * DAY_MS) } as const;

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
 * Extends a token used past half its life (an inquiry, an update, a lookup or 3DS with it) by the
 * environment's default lifetime from now, as Worldpay's v1 tokens are; an extension is not an
 * update that counts toward the limit. Answers the record as it then stands.
 */
export async function extendIfDue(deps: TokenDeps, record: TokenRecord): Promise<TokenRecord> {
  if (!extensionDue(record, deps.now)) return record;
  try {
    return await extendNow(deps, record);
  } catch {
    // A read answers all the same; the next use extends the token.
    return record;
  }
}

async function extendNow(deps: TokenDeps, record: TokenRecord): Promise<TokenRecord> {
  const rewritten = await rewriteToken(deps, record, (current) => Promise.resolve(extended(deps, current)), {
    counted: false,
  });
  return rewritten.ok ? rewritten.value : record;
}

/** The record extended by the default lifetime from now, when it is due; else as it is. */
function extended(deps: TokenDeps, record: TokenRecord): TokenRecord {
  if (!extensionDue(record, deps.now)) return record;
  // Whole seconds, as Worldpay writes the date and time.
  const expiresAt = wholeSeconds(deps.now + DEFAULT_TOKEN_TTL_MS[deps.environment]);
  return {
    ...record,
    expiresAt,
    tokenExpiryDateTime: isoSeconds(expiresAt),
    lifeStartedAt: deps.now,
  };
}

/** A token's namespace lists it until its (new) end. */
async function indexedUntil(deps: TokenDeps, record: TokenRecord): Promise<void> {
  if (record.namespace === undefined) return;
  await deps
    .namespaceFor(record.username, record.namespace)
    .confirm(record.fingerprint, record.tokenId, record.expiresAt, deps.now);
}
