import type { ClaimOutcome } from '../../storage/claims';
import type { SessionRecord } from '../session-record';
import type { AuthClaim, EventScope, InitClaim } from '../transaction-api';
import { noticeOutcome } from './final-outcome';
import type { TransactionParts } from './session-end';

/**
 * The transaction's first bodies (src/storage/claims.ts): deviceDataInitialize's and
 * authenticate's (or a test 3RI's, which claims as authenticate does). The first body decides and
 * records, in one synchronous block, everything its answer implies; every identical body gets
 * that answer, another body a conflict.
 */

/** Claims of the transaction end with the session, which the wipe ends. */
const UNTIL_WIPED = Number.MAX_SAFE_INTEGER;

/** deviceDataInitialize's claim: the first starts the session and issues its DDC JWT; `true` then. */
export function claimInit(
  p: TransactionParts,
  requestHash: string,
  candidate: InitClaim,
  now: number,
  sessionEnd: number,
): { outcome: ClaimOutcome<InitClaim>; started: boolean } {
  let started = false;
  const outcome = p.claims.claim('init', requestHash, candidate, now, UNTIL_WIPED, () => {
    started = p.session.start(sessionEnd);
    p.session.issueDdc(candidate.ddcJti);
  });
  return { outcome, started };
}

/**
 * Before authenticate claims: whether the caller's assumption about the device data collection
 * (collected when it has a collectionReference) is the truth. Only asked while nothing is claimed:
 * a wrong assumption claims nothing and answers `stale` with the truth.
 */
export function staleCollection(
  p: TransactionParts,
  collection: { reference: string | null; assumed: boolean },
  now: number,
): { kind: 'stale'; collected: boolean } | undefined {
  if (p.claims.answerOf('auth', now) !== undefined) return undefined;
  const collected = collection.reference !== null && collection.reference === p.session.collection();
  return collected === collection.assumed ? undefined : { kind: 'stale', collected };
}

/** What an authentication's claim records besides its answer. */
export interface AuthClaimContext {
  requestHash: string;
  now: number;
  sessionEnd: number;
  projectionKey: string;
  scope: EventScope;
}

/**
 * authenticate's claim (and a test 3RI's): the first body opens its challenge, extends the session
 * to `sessionEnd`, stages the session record's projection (which carries the session's end: the
 * alarm's wipe follows it) and keeps the event scope, and the outcome is noticed, all in the
 * claim's block.
 */
export function claimAuthentication(
  p: TransactionParts,
  candidate: AuthClaim,
  c: AuthClaimContext,
): ClaimOutcome<AuthClaim> {
  return p.claims.claim('auth', c.requestHash, candidate, c.now, UNTIL_WIPED, () => {
    p.session.startOrExtend(c.sessionEnd);
    const challenge = candidate.challenge;
    if (challenge) p.challenges.open(challenge.reference, challenge.expiresAt, challenge.decoupled);
    if (challenge?.app) p.app.open(challenge.reference, challenge.app);
    p.effects.project(c.projectionKey, {
      decidedAt: c.now,
      brands: candidate.brands as SessionRecord['brands'],
      version: candidate.version,
      scenario: candidate.scenario,
      answer: candidate.answer,
      ...(candidate.challenge ? { challenge: candidate.challenge } : {}),
      expiresAt: p.session.end()!,
    });
    p.completion.keepScope(c.scope, c.now);
    noticeOutcome(p);
  });
}
