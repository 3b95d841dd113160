import { ClaimTable } from '../../storage/claims';
import type { AlarmRunner } from '../../storage/alarm-runner';
import { Outbox } from '../../storage/projection-outbox';
import { EventOutbox } from '../../storage/event-outbox';
import { eventSink } from '../../events/event-log-api';
import type { EventType } from '../../events/event-types';
import { settingsOf } from '../../config/settings';
import { AppChallenge } from './app-challenge';
import { CallEffects } from './call-effects';
import { challengeEnded, noticeOutcome } from './final-outcome';
import { LiveTransaction } from './live-transaction';
import { LiveWatch } from './live-watch';
import { Series } from './series';
import { SeriesHold } from './series-hold';
import { Session } from './session';
import type { TransactionParts } from './session-end';
import { TestChallenge } from './test-challenge';
import { priorLinks } from './three-ri-run';
import { TransactionEvents } from './transaction-events';

/** What the parts reach of their object: its alarm, and whether it has its tables. */
export interface PartsHost {
  alarms: AlarmRunner;
  scheduleAlarm(): Promise<void>;
  hasTables(): boolean;
}

/**
 * A transaction's object's parts (session-end.ts `TransactionParts`), wired to each other: a test
 * challenge's end and a live result notice the final outcome (final-outcome.ts), the event is
 * rendered from the transaction's facts and appended to the merchant's event log, and every
 * outbox sets the object's alarm again.
 */
export function transactionParts(ctx: DurableObjectState, env: Env, host: PartsHost): TransactionParts {
  const sql = ctx.storage.sql;
  const live = new LiveTransaction(sql, () => noticeOutcome(parts));
  const outbox = new Outbox({ ctx, env, reschedule: () => host.scheduleAlarm(), alarm: host.alarms });
  const completion = new TransactionEvents(sql, env, ctx.id.toString(), () => events);
  const events: EventOutbox<EventType> = new EventOutbox<EventType>(
    { ctx, reschedule: () => host.scheduleAlarm() },
    (event) => completion.render(event),
    (username, staged) => eventSink.append(env, username, staged),
  );
  const challenges = new TestChallenge(sql, (reference, result) => challengeEnded(parts, reference, result));
  const parts: TransactionParts = {
    session: new Session(sql),
    claims: new ClaimTable(sql, (writes) => ctx.storage.transactionSync(writes)),
    challenges,
    app: new AppChallenge(
      sql,
      challenges,
      () => settingsOf(env).acsEphemeralKeySecret,
      (writes) => ctx.storage.transactionSync(writes),
    ),
    live,
    watch: new LiveWatch(sql, env, live),
    completion,
    outbox,
    events,
    series: new Series(sql, () => host.hasTables()),
    hold: new SeriesHold(sql, (prior, reference, holder) =>
      priorLinks.prior(env, prior).seriesRelease(reference, holder),
    ),
    effects: new CallEffects(outbox, events, () => host.scheduleAlarm()),
  };
  return parts;
}
