import type { ChallengeResult } from '../challenge-rules';
import type { SessionRecord } from '../session-record';
import type { TransactionFacts } from '../transaction-api';
import { authenticatedOutcome, seriesFrom, transactionFacts, type TransactionParts } from './session-end';

/**
 * What the transaction's final outcome decides, once, in the same synchronous block as the write
 * that records it (authenticate's claim, a challenge's end, a live answer or result): its
 * `threeDS.authentication.completed` event is staged, a 3RI's hold on its prior's series is
 * settled (kept only when authenticated), and a series the outcome set up is recorded. Each
 * effect is staged on the call's {@link CallEffects}, so the outcome and its consequences commit
 * together or not at all.
 */
export function noticeOutcome(p: TransactionParts): void {
  // Read once (six statements), when first asked: nothing below changes them.
  let read: TransactionFacts | undefined;
  const facts = () => (read ??= transactionFacts(p, Number.NEGATIVE_INFINITY));
  if (!p.completion.notice(facts)) return;
  p.effects.eventStaged();
  // A 3RI's final outcome settles its hold on the prior's series: kept only when authenticated.
  const hash = p.claims.hashOf('auth', Number.NEGATIVE_INFINITY) ?? p.live.requestHash();
  if (hash !== undefined) {
    p.hold.settle(hash, authenticatedOutcome(facts()!), Date.now());
    p.effects.keepAlarm();
  }
  // The final outcome, once: a series set up by a Y or an A is kept from now until its expiry.
  const series = seriesFrom(facts()!);
  if (series) {
    p.series.record(series);
    p.effects.keepAlarm();
  }
}

/**
 * A test challenge ended: its result is projected with the session record (the object's one
 * projection: its newest value, amended), and the outcome noticed.
 */
export function challengeEnded(p: TransactionParts, reference: string, result: ChallengeResult): void {
  const projected = p.outbox.latest<SessionRecord>();
  if (projected?.value?.challenge?.reference === reference)
    p.effects.project(projected.key, { ...projected.value, result });
  noticeOutcome(p);
}
