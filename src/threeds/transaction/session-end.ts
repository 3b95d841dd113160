import type { ClaimTable } from '../../storage/claims';
import type { EventOutbox } from '../../storage/event-outbox';
import type { Outbox } from '../../storage/projection-outbox';
import type { EventType } from '../../events/event-types';
import type { AuthClaim, InitClaim, TransactionFacts } from '../transaction-api';
import type { SeriesRecord } from '../series-rules';
import { resultKindOf } from '../challenge-rules';
import type { LiveTransaction } from './live-transaction';
import type { LiveWatch } from './live-watch';
import type { Session } from './session';
import type { TestChallenge } from './test-challenge';
import type { TransactionEvents } from './transaction-events';
import type { AppChallenge } from './app-challenge';
import type { CallEffects } from './call-effects';
import type { Series } from './series';
import type { SeriesHold } from './series-hold';

/**
 * What a transaction's object is made of, and what it decides across its parts: what the
 * transaction is now (GET's facts), when its alarm is due, and its session's end (close, wipe,
 * and free the storage once nothing is left).
 */
export interface TransactionParts {
  session: Session;
  claims: ClaimTable;
  challenges: TestChallenge;
  /** An app's challenge, on top of the test challenge: the test issuer's ACS (app-challenge.ts). */
  app: AppChallenge;
  live: LiveTransaction;
  watch: LiveWatch;
  completion: TransactionEvents;
  outbox: Outbox;
  events: EventOutbox<EventType>;
  /** The series it set up: kept past the session, until the series' expiry. */
  series: Series;
  /** A 3RI's hold on its prior's series: kept past the session until released (series-hold.ts). */
  hold: SeriesHold;
  /** What the call under way leaves to do once it commits (call-effects.ts). */
  effects: CallEffects;
}

/** How long after its end the object's state is wiped (KV records live as long). */
export const WIPE_DELAY_MS = 60_000;

/**
 * The version of the transaction's tables (src/storage/schema-version.ts): raise it with every
 * change to a part's tables, and keep the upgrade of the older layouts in that part's createTables.
 */
export const TABLES_VERSION = 3;

/**
 * Creates every part's tables (each CREATE is a no-op for a table already there): `fresh` when
 * the object has none (its schema version says so), else the columns added since are added too.
 */
export function createTables(p: TransactionParts, fresh: boolean): void {
  for (const part of [p.session, p.claims, p.watch, p.completion, p.events, p.series, p.hold, p.app]) {
    part.createTables();
  }
  p.challenges.createTables(fresh);
  p.live.createTables(fresh);
  p.outbox.createTables(fresh);
}

/**
 * What the transaction is now, for GET of the transaction (docs/threeds.md "Retrieve a
 * transaction"): when it started and last changed, what authenticate decided, and the
 * challenge's one result once there is one (test), or the live authentication's answer and its
 * challenge's result (live). Undefined when there is no session.
 */
export function transactionFacts(p: TransactionParts, now: number): TransactionFacts | undefined {
  const init = p.claims.entry<InitClaim>('init', now);
  const auth = p.claims.entry<AuthClaim>('auth', now);
  const liveAuth = p.live.authentication();
  const liveChallenge = p.live.challenge();
  const challenge = auth?.answer.challenge ? p.challenges.state(auth.answer.challenge.reference, now) : undefined;
  const times = [
    init?.decidedAt,
    // The first authenticate's start (live: while its AReq is in flight, the transaction exists).
    p.completion.since(),
    auth?.decidedAt,
    challenge?.result?.completedAt,
    liveAuth?.decidedAt,
    liveChallenge?.result?.decidedAt,
  ].filter((t): t is number => typeof t === 'number');
  if (times.length === 0) return undefined;
  return {
    createdAt: Math.min(...times),
    updatedAt: Math.max(...times),
    ...(auth ? { auth: auth.answer } : {}),
    ...(challenge?.result ? { challengeResult: challenge.result } : {}),
    ...(liveAuth ? { live: { ...liveAuth, ...(liveChallenge ? { challenge: liveChallenge } : {}) } } : {}),
  };
}

/**
 * When the object's alarm is next due: the next projection or event due, an open challenge's
 * deadline, the live watch's next look, the end of a sent AReq's answer window, else a minute
 * after the session's end (the wipe). Undefined when nothing is left.
 */
export function nextAlarm(p: TransactionParts): number | undefined {
  const end = p.session.end();
  const times = [
    p.outbox.nextDue(),
    p.events.nextDue(),
    p.challenges.nextDeadline(),
    p.watch.nextLook(),
    p.live.sendingLeaseEnd(),
    end === undefined ? undefined : end + WIPE_DELAY_MS,
    p.series.endsAt(),
    p.hold.nextDue(),
  ].filter((t): t is number => t !== undefined);
  return times.length > 0 ? Math.min(...times) : undefined;
}

/**
 * The alarm's round, once the object's runs are checked: a series past its expiry is dropped; a
 * session past its wipe is closed and wiped, else a challenge left open past its deadline ends
 * (its result, projection and event staged as at any call) and the live watch looks; then every
 * projection, event and hold release that is due is tried. What a call staged is the alarm's now.
 */
export async function alarmRound(p: TransactionParts, now: number): Promise<void> {
  const end = p.session.end();
  p.series.dropIfEnded(now);
  if (end !== undefined && end + WIPE_DELAY_MS <= now) closeAndWipe(p, now);
  else {
    p.challenges.endOverdue(now);
    await p.watch.watch(now, p.completion.scope()?.baseUrl ?? '');
  }
  p.effects.takenByAlarm();
  await p.outbox.flush();
  await p.events.flush();
  await p.hold.flush(now);
}

/**
 * The final answer, once the facts are final: the live answer (or its challenge's result), or the
 * test answer; a test challenge's answer is derived when asked for (its ids), so only its outcome
 * and status are known here (the scenario's, when the code passed). Undefined while there is
 * none, and when a live AReq was lost (`unavailable`, nothing authenticated).
 */
function finalAnswer(facts: TransactionFacts): { answer: Record<string, unknown>; challenged: boolean } | undefined {
  const live = facts.live;
  if (live) {
    if (live.lost) return undefined;
    const answer = live.challenge ? live.challenge.result?.answer : live.answer;
    return answer && { answer, challenged: live.challenge !== undefined };
  }
  const auth = facts.auth;
  if (!auth) return undefined;
  if (!auth.challenge) return { answer: auth.answer, challenged: false };
  if (facts.challengeResult === undefined) return undefined;
  const kind = resultKindOf(facts.challengeResult, auth.challenge.onSuccess);
  const status = { authenticated: 'Y', authenticatedAttempted: 'A' }[kind];
  return { answer: { outcome: status ? 'authenticated' : kind, ...(status ? { status } : {}) }, challenged: true };
}

/**
 * The series to keep, from the facts that just became final: the one authenticate set up (test:
 * handed to the object with its claim; live: with its run), when the final status is Y or A.
 */
export function seriesFrom(facts: TransactionFacts): SeriesRecord | undefined {
  const setup = facts.live ? facts.live.series : facts.auth?.series;
  const final = setup && finalAnswer(facts);
  if (!setup || !final) return undefined;
  const a = final.answer as {
    status?: string;
    acsTransactionId?: string;
    authentication?: { version?: string; transactionId?: string };
  };
  if (a.status !== 'Y' && a.status !== 'A') return undefined;
  return {
    ...setup,
    version: facts.auth?.version ?? a.authentication?.version ?? '',
    ...(a.acsTransactionId !== undefined ? { acsTransactionId: a.acsTransactionId } : {}),
    ...(a.authentication?.transactionId !== undefined ? { dsTransactionId: a.authentication.transactionId } : {}),
    method: final.challenged ? '02' : '01',
    authenticatedAt: facts.updatedAt,
    status: a.status,
  };
}

/** Whether the final outcome authenticated the cardholder (a 3RI's hold is kept only then). */
export function authenticatedOutcome(facts: TransactionFacts): boolean {
  return finalAnswer(facts)?.answer['outcome'] === 'authenticated';
}

/**
 * Ends the session: a challenge still open whose result can no longer come ends first (test: past
 * its deadline; live: once no RReq can come), so that its outcome and event are staged before the
 * state goes. Staged events stay (`events_out`): the alarm sends them after the session is gone.
 */
export function closeAndWipe(p: TransactionParts, now: number): void {
  p.challenges.endOverdue(now);
  p.watch.closeIfUnwatched(now, p.completion.scope()?.baseUrl ?? '');
  // A 3RI that never came to an outcome (its run failed, no retry came) gives its use back.
  p.hold.closeOpen(now);
  for (const part of [p.session, p.challenges, p.app, p.completion, p.watch, p.claims, p.live, p.outbox]) part.wipe();
}

/**
 * Whether nothing is left to do (docs/storage.md "Storage freed"): the session wiped, every
 * projection written, every event appended, and (`running`) no live run under way.
 */
export function nothingLeft(p: TransactionParts, running: boolean): boolean {
  if (p.session.end() !== undefined || running || p.series.endsAt() !== undefined || p.hold.pending()) return false;
  return p.outbox.nextDue() === undefined && p.events.nextDue() === undefined;
}
