import { settingsOf } from '../../config/settings';
import type { LiveChallenge } from './live-state';
import { fetchableUntil, noResultAnswer, rreqAnswer } from './live-challenge-result';
import { threeDsServerOf, type ThreeDsServer } from './three-ds-server';
import { RESULT_RETENTION_MS } from './timing';

/**
 * The transaction's object watches its open live challenge (docs/threeds.md "The object watches an
 * open challenge"): the result is normally recorded when the ACS's final page posts `cres` to the
 * notification URL, or when the merchant calls `verification`; a cardholder who closed the tab
 * does neither. So the object asks the 3DS Server provider for the RReq itself, from its alarm,
 * every {@link RESULT_POLL_MS} while the challenge is open (shorter than the 300 s the provider
 * keeps an RReq, so none is missed), and records what it says, as verification would; once no
 * RReq can come any more, the challenge ends as not completed. The first result recorded stays,
 * whoever recorded it: the notification, verification or this watch.
 */

/** Between two asks: within the provider's 300 s retention of an RReq, with a margin. */
export const RESULT_POLL_MS = RESULT_RETENTION_MS - 60_000;

/** After an ask that failed (the provider unreachable): again sooner than the next regular ask. */
export const RESULT_POLL_RETRY_MS = 30_000;

/**
 * How the object reaches the provider: a seam for the tests only (whose objects run with
 * ENVIRONMENT=test while their requests say live). Undefined when no provider is configured: the
 * watch then only ends the challenge once no RReq can come.
 */
export const objectProvider = {
  of: (env: Env): ThreeDsServer | undefined => {
    const config = settingsOf(env).threeDsServer;
    return config ? threeDsServerOf(env, config) : undefined;
  },
};

/** When the watch next looks: the next ask, or the end of the RReq's window, whichever is first. */
export function nextLookAt(challenge: LiveChallenge, lastAsk?: { at: number; failed: boolean }): number {
  const from = lastAsk?.at ?? challenge.aresAt;
  const ask = from + (lastAsk?.failed ? RESULT_POLL_RETRY_MS : RESULT_POLL_MS);
  return Math.min(ask, fetchableUntil(challenge));
}

/**
 * The answer a challenge gets without a look, once no RReq can come any more (not completed; a
 * decoupled authentication, unavailable); undefined while one still may.
 */
export function endedUnwatched(
  challenge: LiveChallenge,
  baseUrl: string,
  now: number,
): Record<string, unknown> | undefined {
  return now >= fetchableUntil(challenge) ? noResultAnswer({ baseUrl }, challenge) : undefined;
}

/**
 * One look: the answer to record, or undefined while the RReq may still come. Throws when the
 * provider could not be asked (the caller logs it and looks again sooner).
 */
export async function look(
  provider: ThreeDsServer | undefined,
  challenge: LiveChallenge,
  baseUrl: string,
  now: number,
): Promise<Record<string, unknown> | undefined> {
  const ended = endedUnwatched(challenge, baseUrl, now);
  if (ended) return ended;
  if (!provider) return undefined;
  const outcome = await provider.result(challenge.threeDSServerTransID);
  if (outcome.kind === 'rreq') return rreqAnswer({ baseUrl }, challenge, outcome.rreq);
  // The provider no longer knows the transaction: no RReq will come (as verification decides).
  if (outcome.kind === 'gone') return noResultAnswer({ baseUrl }, challenge);
  return undefined;
}
