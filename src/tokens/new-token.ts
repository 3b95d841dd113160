import type { TokenTemplate } from './token-group-api';
import { newTokenId } from './token-ids';
import { isoSeconds, wholeSeconds, type TokenView } from './token-resource';

/**
 * What a new token is (docs/tokens.md "Create", "Lifetime"): a new id, what the Worker knows of
 * the card and the request, its end (the chosen expiry, else the environment's lifetime, in whole
 * seconds), a description when none is sent, version 1, its life started now. Its card is sealed
 * by the object that makes it.
 */
export function newToken(
  template: TokenTemplate,
  owner: { username: string; namespace: string | undefined; fingerprint: string },
  now: number,
  lifetimeMs: number,
): TokenView {
  const { username, namespace, fingerprint } = owner;
  const { requestedExpiry, description, ...known } = template;
  // `known` carries the entity and the href base: stored with the token, for its events.
  const tokenId = newTokenId();
  // Whole seconds, as Worldpay writes the date and time.
  const expiresAt = wholeSeconds(requestedExpiry ?? now + lifetimeMs);
  return {
    ...known,
    tokenId,
    username,
    fingerprint,
    // Worldpay makes one up when none is sent; ours names the day, not the card.
    description: description ?? `Token created ${new Date(now).toISOString().slice(0, 10)}`,
    ...(namespace !== undefined ? { namespace } : {}),
    tokenExpiryDateTime: isoSeconds(expiresAt),
    createdAt: now,
    expiresAt,
    version: 1,
    lifeStartedAt: now,
    ...(requestedExpiry !== undefined ? { expiryChosen: true } : {}),
  };
}
